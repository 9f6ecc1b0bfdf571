/**
 * gather: the reads the contract allows, into one `Observed` value: the runtime, `Resolved` and `Mirrored` (only
 * through `current`), the resolution's content ConfigMap, every plan ConfigMap (read and verified with `readPlan`),
 * and the runtime's RuntimeRollouts. `readRecipe` reads a plan's recipe when an upgrade-check Job is about to start
 * (act.ts).
 */
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  ArgoCD,
  type ClusterRuntime,
  type ClusterRuntimeStatus,
  Core,
  type KubeObject,
  LABEL_ROLE,
  LABEL_RUNTIME_UID,
  Mirrored,
  type Plan,
  readPlanData,
  Resolved,
  ROLE_PLAN,
  sha256,
  type RuntimeRollout,
  RuntimeRolloutKind,
} from "@aicr/api"
import type { Application } from "@aicr/argocd"
import { current, type CurrentCondition, shortDigest } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Clock, Effect, Option, Result } from "effect"
import type { ChartCheck } from "./charts"
import { PlannerConfig } from "./config"
import type { RecipeRef, UpgradeCheckRun } from "./upgrade-check"

export type ContentRead =
  { readonly _tag: "NotRead" } | { readonly _tag: "Missing" } | { readonly _tag: "Found"; readonly data: Readonly<Record<string, string>> }
export type PlanRead =
  { readonly ok: true; readonly plan: Plan; readonly configMap: string } | { readonly ok: false; readonly why: string; readonly configMap: string }

export interface Observed {
  readonly runtime: ClusterRuntime
  readonly generation: number | undefined
  readonly resolved: CurrentCondition
  readonly mirrored: CurrentCondition
  readonly resolution: ClusterRuntimeStatus["resolution"]
  readonly mirror: ClusterRuntimeStatus["mirror"]
  /** Our own room as last written. */
  readonly status: ClusterRuntimeStatus["plans"]
  readonly content: ContentRead
  /** Plan ConfigMaps by the desiredStateDigest they are named for (annotation), read and verified. */
  readonly plans: ReadonlyMap<string, PlanRead>
  readonly rollouts: ReadonlyArray<RuntimeRollout>
  /** Argo CD Applications in the engine namespace that carry a runtime-uid label (re-adoption reads them). */
  readonly applications: ReadonlyArray<Application>
  readonly engineNamespace: string
  readonly namespace: string
  readonly project: string
  readonly windowMs: number
  readonly deadlineMs: number
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
  /** Added by reconcile when decide asked for them (`Decision.needs`): the pinned plan's chart check, the upgrade-check run. */
  readonly pinCharts?: { readonly digest: string; readonly check: ChartCheck } | undefined
  readonly upgradeCheck?: UpgradeCheckRun | undefined
}

type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

export const readPlanConfigMap = (cm: ConfigMap): [string, PlanRead] | undefined => {
  const name = cm.metadata.name
  const digest = cm.metadata.annotations?.[ANNOTATION_DESIRED_STATE_DIGEST]
  if (digest === undefined) return undefined
  const read = readPlanData(cm.data, digest)
  if (Result.isFailure(read)) return [digest, { ok: false, why: read.failure, configMap: name }]
  return [digest, { ok: true, plan: read.success, configMap: name }]
}

export const gather = (runtime: ClusterRuntime): Effect.Effect<Observed, KubeError, Kube | PlannerConfig> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const config = yield* PlannerConfig
    const now = yield* Clock.currentTimeMillis
    const resolution = runtime.status?.resolution
    const name = resolution?.contentConfigMap
    let content: ContentRead = { _tag: "NotRead" }
    if (name !== undefined) {
      const cm = yield* kube.get<ConfigMap>(Core.ConfigMap, `${config.namespace}/${name}`)
      content = Option.isSome(cm) ? { _tag: "Found", data: cm.value.data ?? {} } : { _tag: "Missing" }
    }
    const planList = yield* kube.list<ConfigMap>(Core.ConfigMap, { namespace: config.namespace, labelSelector: `${LABEL_ROLE}=${ROLE_PLAN}` })
    const plans = new Map(planList.items.map(readPlanConfigMap).filter((e): e is [string, PlanRead] => e !== undefined))
    const rollouts = (yield* kube.list<RuntimeRollout>(RuntimeRolloutKind)).items
    // No Argo CD (its CRD missing) is the step-executor's to report (EngineAvailable); nothing to adopt then.
    const applications = yield* kube.list<Application>(ArgoCD.Application, { namespace: config.engineNamespace, labelSelector: LABEL_RUNTIME_UID }).pipe(
      Effect.map((l) => l.items),
      Effect.catchIf(
        (e) => e.reason._tag === "NotFound",
        () => Effect.succeed([] as Application[]),
      ),
    )
    return {
      runtime,
      generation: runtime.metadata.generation,
      resolved: current(runtime, Resolved),
      mirrored: current(runtime, Mirrored),
      resolution,
      mirror: runtime.status?.mirror,
      status: runtime.status?.plans,
      content,
      plans,
      rollouts,
      applications,
      engineNamespace: config.engineNamespace,
      namespace: config.namespace,
      project: config.project,
      windowMs: config.windowMs,
      deadlineMs: config.deadlineMs,
      now,
    } satisfies Observed
  })

/** A plan's `recipe.json` from its content ConfigMap, verified against the digest the plan recorded (upgrade-check's input). */
export const readRecipe = (
  namespace: string,
  r: RecipeRef,
): Effect.Effect<{ readonly ok: true; readonly text: string } | { readonly ok: false; readonly why: string }, KubeError, Kube> =>
  Effect.gen(function* () {
    const cm = yield* (yield* Kube).get<ConfigMap>(Core.ConfigMap, `${namespace}/${r.configMap}`)
    const text = Option.isSome(cm) ? cm.value.data?.["recipe.json"] : undefined
    if (text === undefined)
      return { ok: false as const, why: `content ConfigMap ${namespace}/${r.configMap} ${Option.isNone(cm) ? "is gone" : "has no recipe.json"}` }
    if (sha256(text) !== r.digest)
      return { ok: false as const, why: `the recipe.json of ${namespace}/${r.configMap} is not the one the plan recorded (${shortDigest(r.digest)})` }
    return { ok: true as const, text }
  })
