/**
 * gather: the reads the contract allows, into one `Observed` value. `Progressing` is read only through `current` (a
 * stale or missing condition reads as Unknown); the launcher's ServiceAccount is read only when validation is Required.
 * The run itself (plan, recipe, Jobs) is read by `act`, only once the steps are done.
 */
import { type ClusterRuntime, ClusterRuntimeKind, Core, deploymentValidationOf, type KubeObject, Progressing, type RuntimeRollout, SINGLETON_NAME } from "@aicr/api"
import { current, type CurrentCondition } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Clock, Effect, Option } from "effect"
import { GateConfig, type GateSettings } from "./config"

export type ValidationRoom = NonNullable<NonNullable<RuntimeRollout["status"]>["validation"]>

export interface Observed {
  readonly rollout: RuntimeRollout
  /** The runtime the rollout belongs to (the `cluster` runtime with the rollout's runtimeUID), if it exists. */
  readonly runtime: ClusterRuntime | undefined
  readonly mode: "Required" | "Disabled"
  /** The validation launcher's ServiceAccount exists (chart `validation.enabled`); undefined when not read. */
  readonly installed: boolean | undefined
  readonly progressing: CurrentCondition
  /** Our own room as last written. */
  readonly validation: ValidationRoom | undefined
  readonly settings: GateSettings
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
}

export const gather = (rollout: RuntimeRollout): Effect.Effect<Observed, KubeError, Kube | GateConfig> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const settings = yield* GateConfig
    const now = yield* Clock.currentTimeMillis
    const found = yield* kube.get<ClusterRuntime>(ClusterRuntimeKind, SINGLETON_NAME)
    const runtime = Option.isSome(found) && found.value.metadata.uid === rollout.spec.runtimeUID ? found.value : undefined
    const mode = runtime === undefined ? "Required" : deploymentValidationOf(runtime.spec)
    const installed =
      runtime !== undefined && mode === "Required"
        ? Option.isSome(yield* kube.get<KubeObject>(Core.ServiceAccount, `${settings.validationNamespace}/${settings.launcher}`))
        : undefined
    return { rollout, runtime, mode, installed, progressing: current(rollout, Progressing), validation: rollout.status?.validation, settings, now } satisfies Observed
  })
