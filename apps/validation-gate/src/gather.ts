/**
 * gather: the reads the contract allows, into one `Observed` value. `Progressing` is read only through `current` (a
 * stale or missing condition reads as Unknown); whether validation is installed (the launcher, its rights and the
 * validators' identity: `installation.ts`) is asked only when validation is Required.
 * The run itself (plan, recipe, Jobs) is read by `act`, only once the steps are done.
 */
import { type ClusterRuntime, ClusterRuntimeKind, deploymentValidationOf, LABEL_OUTCOME, Progressing, type RuntimeRollout, SINGLETON_NAME } from "@aicr/api"
import { current, type CurrentCondition } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Clock, Effect, Option } from "effect"
import { GateConfig, type GateSettings } from "./config"
import { type Authorizer, installationGaps } from "./installation"

export type ValidationRoom = NonNullable<NonNullable<RuntimeRollout["status"]>["validation"]>

export interface Observed {
  readonly rollout: RuntimeRollout
  /** The runtime the rollout belongs to (the `cluster` runtime with the rollout's runtimeUID), if it exists. */
  readonly runtime: ClusterRuntime | undefined
  readonly mode: "Required" | "Disabled"
  /** What validation lacks to run (chart `validation.enabled`), empty when installed; undefined when not asked. */
  readonly missing: ReadonlyArray<string> | undefined
  readonly progressing: CurrentCondition
  /** Our own room as last written. */
  readonly validation: ValidationRoom | undefined
  readonly settings: GateSettings
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
}

export const gather = (rollout: RuntimeRollout): Effect.Effect<Observed, KubeError, Kube | GateConfig | Authorizer> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const settings = yield* GateConfig
    const now = yield* Clock.currentTimeMillis
    const found = yield* kube.get<ClusterRuntime>(ClusterRuntimeKind, SINGLETON_NAME)
    const runtime = Option.isSome(found) && found.value.metadata.uid === rollout.spec.runtimeUID ? found.value : undefined
    const mode = runtime === undefined ? "Required" : deploymentValidationOf(runtime.spec)
    // Asked only where decide reads it: an open, non-Remove rollout of this runtime with validation Required.
    const asks = runtime !== undefined && mode === "Required" && rollout.metadata.labels?.[LABEL_OUTCOME] === undefined && rollout.spec.kind !== "Remove"
    const missing = asks ? yield* installationGaps(settings) : undefined
    return {
      rollout,
      runtime,
      mode,
      missing,
      progressing: current(rollout, Progressing),
      validation: rollout.status?.validation,
      settings,
      now,
    } satisfies Observed
  })
