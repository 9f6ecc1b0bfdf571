/**
 * gather: the reads the contract allows, into one `Observed` value, all from the API server (never from memory, so a
 * restarted executor sees exactly what the crashed one left): the runtime, Argo CD's CRD and the AppProject, every
 * Application in the engine namespace, the runtime's open rollout, its target plan (read and verified) and the
 * values of the plan's releases from the content ConfigMap the plan names (digests checked).
 */
import {
  ArgoCD, type ClusterRuntime, Core, LABEL_OUTCOME, LABEL_RUNTIME_UID, PLAN_DATA_KEY, type Plan, planConfigMapName, readPlan, type RuntimeRollout, RuntimeRolloutKind, sha256,
} from "@aicr/api"
import { ANNOTATION_WRITTEN_AT, type Application } from "@aicr/argocd"
import { Kube, type KubeError, type KubeShape } from "@aicr/kube"
import { Clock, Effect, Option, Result } from "effect"
import { ExecutorConfig, type ExecutorSettings } from "./config"
import { releaseValues } from "./values"

export const APPLICATION_CRD = "applications.argoproj.io"

export type EngineRead =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "EngineMissing" | "ProjectMissing" | "Unauthorized" | "EngineNotResponding"; readonly message: string }

/** The target plan, each release's merged values, or why they cannot be used (`PlanUnreadable`). */
export type PlanRead =
  | { readonly ok: true; readonly plan: Plan; readonly values: ReadonlyMap<string, Record<string, unknown>> }
  | { readonly ok: false; readonly why: string }

export interface Observed {
  readonly runtime: ClusterRuntime
  readonly generation: number | undefined
  readonly engine: EngineRead
  /** Every Application in the engine namespace (ours carry our runtime-uid label; the rest are foreign). */
  readonly applications: ReadonlyArray<Application>
  /** The runtime's rollout that has not ended (no outcome label), newest first if ever more than one. */
  readonly rollout: RuntimeRollout | undefined
  readonly plan: PlanRead | undefined
  readonly settings: ExecutorSettings
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
}

type ConfigMap = { readonly metadata: { readonly name: string }; readonly data?: Readonly<Record<string, string>> }

const forbidden = (e: KubeError) => e.reason._tag === "Forbidden" || e.reason._tag === "Unauthorized"

const readEngine = (kube: KubeShape, s: ExecutorSettings): Effect.Effect<EngineRead, KubeError> =>
  Effect.gen(function* () {
    const crd = yield* kube.get(Core.CustomResourceDefinition, APPLICATION_CRD)
    if (Option.isNone(crd)) return { _tag: "EngineMissing", message: `Argo CD's CRD ${APPLICATION_CRD} is not installed; install Argo CD v3.4 in namespace ${s.engineNamespace} before the operator` } as const
    const project = yield* kube.get(ArgoCD.AppProject, `${s.engineNamespace}/${s.project}`)
    if (Option.isNone(project)) return { _tag: "ProjectMissing", message: `AppProject ${s.engineNamespace}/${s.project} does not exist; the operator's chart creates it (engine.project)` } as const
    return { _tag: "Ready" } as const
  }).pipe(
    Effect.catchIf(forbidden, (e) => Effect.succeed({ _tag: "Unauthorized", message: `The operator may not read Argo CD's objects: ${e.reason.message}` } as const)),
  )

const readTarget = (kube: KubeShape, s: ExecutorSettings, digest: string): Effect.Effect<PlanRead, KubeError> =>
  Effect.gen(function* () {
    const name = planConfigMapName(digest)
    const cm = yield* kube.get<ConfigMap & { kind: string; apiVersion: string }>(Core.ConfigMap, `${s.namespace}/${name}`)
    if (Option.isNone(cm)) return { ok: false, why: `plan ConfigMap ${s.namespace}/${name} does not exist` } as const
    const read = readPlan(cm.value.data?.[PLAN_DATA_KEY] ?? "")
    if (Result.isFailure(read)) return { ok: false, why: `plan ConfigMap ${name}: ${read.failure}` } as const
    const plan = read.success
    if (plan.desiredStateDigest !== digest) return { ok: false, why: `plan ConfigMap ${name} holds plan ${plan.desiredStateDigest}, not ${digest}` } as const
    // A plan rebuilt from live Applications holds no values: only Adopt steps (which keep the live ones) use it.
    if (plan.source === "Adoption") return { ok: true, plan, values: new Map() } as const
    const ref = plan.content.find((c) => c.key === "values.json")
    let files: Record<string, string> = {}
    if (ref !== undefined) {
      const content = yield* kube.get<ConfigMap & { kind: string; apiVersion: string }>(Core.ConfigMap, `${s.namespace}/${ref.configMap}`)
      if (Option.isNone(content)) return { ok: false, why: `content ConfigMap ${ref.configMap} named by plan ${name} does not exist` } as const
      const text = content.value.data?.["values.json"] ?? ""
      if (sha256(text) !== ref.digest) return { ok: false, why: `values.json of content ConfigMap ${ref.configMap} does not match the digest plan ${name} records` } as const
      try {
        files = (JSON.parse(text) as { files?: Record<string, string> }).files ?? {}
      } catch {
        return { ok: false, why: `values.json of content ConfigMap ${ref.configMap} is not JSON` } as const
      }
    }
    const values = new Map<string, Record<string, unknown>>()
    for (const r of plan.releases) {
      const own = files[`${r.name}/values.yaml`]
      if (sha256(own ?? "") !== r.values.digest) return { ok: false, why: `values of release ${r.name} do not match the digest plan ${name} records` } as const
      const v = releaseValues(files, r.name)
      if (!v.ok) return { ok: false, why: v.why } as const
      values.set(r.name, v.values)
    }
    return { ok: true, plan, values } as const
  })

/**
 * Argo CD is down or stuck when one of our Applications was not compared for longer than `engineStaleAfterMs`: its
 * `status.reconciledAt` (set on every comparison) or, never compared, its `written-at` marker is that old.
 */
export const staleness = (apps: ReadonlyArray<Application>, uid: string | undefined, s: ExecutorSettings, now: number): EngineRead | undefined => {
  for (const a of apps) {
    if (uid === undefined || a.metadata.labels?.[LABEL_RUNTIME_UID] !== uid || a.metadata.deletionTimestamp !== undefined) continue
    const seen = a.status?.reconciledAt ?? a.metadata.annotations?.[ANNOTATION_WRITTEN_AT]
    const at = seen === undefined ? Number.NaN : Date.parse(seen)
    if (!Number.isNaN(at) && now - at > s.engineStaleAfterMs) {
      const what = a.status?.reconciledAt === undefined ? `was written at ${seen} and never compared` : `was last compared at ${seen}`
      return { _tag: "EngineNotResponding", message: `Argo CD is not responding: Application ${s.engineNamespace}/${a.metadata.name} ${what}, more than ${Math.round(s.engineStaleAfterMs / 1000)}s ago; check that argocd-application-controller runs` }
    }
  }
  return undefined
}

const created = (r: RuntimeRollout) => r.metadata.creationTimestamp ?? ""

export const gather = (runtime: ClusterRuntime): Effect.Effect<Observed, KubeError, Kube | ExecutorConfig> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const settings = yield* ExecutorConfig
    const now = yield* Clock.currentTimeMillis
    const reachable = yield* readEngine(kube, settings)
    const applications = reachable._tag === "Ready" ? (yield* kube.list<Application>(ArgoCD.Application, { namespace: settings.engineNamespace })).items : []
    const uid = runtime.metadata.uid
    const engine = reachable._tag === "Ready" ? (staleness(applications, uid, settings, now) ?? reachable) : reachable
    const rollout = (yield* kube.list<RuntimeRollout>(RuntimeRolloutKind)).items
      .filter((r) => uid !== undefined && r.spec.runtimeUID === uid && r.metadata.labels?.[LABEL_OUTCOME] === undefined)
      .sort((a, b) => (created(a) < created(b) ? 1 : created(a) > created(b) ? -1 : 0))[0]
    const plan = rollout === undefined ? undefined : yield* readTarget(kube, settings, rollout.spec.toDigest)
    return { runtime, generation: runtime.metadata.generation, engine, applications, rollout, plan, settings, now } satisfies Observed
  })
