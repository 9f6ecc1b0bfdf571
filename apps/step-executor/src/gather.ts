/**
 * gather: the reads the contract allows, into one `Observed` value, all from the informer caches (`caches.ts`): the
 * runtime, Argo CD's CRD and the AppProject, every Application in the engine namespace, the namespaces, the runtime's
 * open rollout, and its target plan (verified) with the values of the plan's releases from the content ConfigMap the plan names
 * (digests checked). The caches hold the plan and content ConfigMaps' metadata only; their data is read from the API
 * server once per resourceVersion and kept verified (`PlanReads`), so a step reads nothing (ADR
 * 20261203-informer-caches). A restarted executor starts from fresh lists: it sees exactly what the crashed one left.
 */
import {
  type ClusterRuntime,
  Core,
  type KubeObject,
  LABEL_OUTCOME,
  LABEL_RUNTIME_UID,
  type Plan,
  planConfigMapName,
  readPlanData,
  type RuntimeRollout,
  sha256,
} from "@aicr/api"
import { ANNOTATION_WRITTEN_AT, type Application } from "@aicr/argocd"
import { Kube, type KubeError, type KubeShape } from "@aicr/kube"
import { Clock, Context, Effect, Option, Result } from "effect"
import { APPLICATION_CRD, Caches, type ExecutorCaches } from "./caches"
import { ExecutorConfig, type ExecutorSettings } from "./config"
import { releaseValues } from "./values"

export { APPLICATION_CRD } from "./caches"

export type EngineRead =
  { readonly _tag: "Ready" } | { readonly _tag: "EngineMissing" | "ProjectMissing" | "Unauthorized" | "EngineNotResponding"; readonly message: string }

/** The target plan, each release's merged values, or why they cannot be used (`PlanUnreadable`). */
export type PlanRead =
  { readonly ok: true; readonly plan: Plan; readonly values: ReadonlyMap<string, Record<string, unknown>> } | { readonly ok: false; readonly why: string }

export interface Observed {
  readonly runtime: ClusterRuntime
  readonly generation: number | undefined
  readonly engine: EngineRead
  /** Every Application in the engine namespace (ours carry our runtime-uid label; the rest are foreign). */
  readonly applications: ReadonlyArray<Application>
  /** The runtime's rollout that has not ended (no outcome label), newest first if ever more than one. */
  readonly rollout: RuntimeRollout | undefined
  readonly plan: PlanRead | undefined
  /** The namespaces that exist and are not being deleted: a step starts only in one of them (`NamespaceMissing`). */
  readonly namespaces: ReadonlySet<string>
  readonly settings: ExecutorSettings
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
}

type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

const forbidden = (e: KubeError | undefined) => e !== undefined && (e.reason._tag === "Forbidden" || e.reason._tag === "Unauthorized")

/** EngineAvailable from the caches: the CRD and the AppProject present, their lists allowed. */
export const readEngine = (c: ExecutorCaches, s: ExecutorSettings): EngineRead => {
  const denied = [c.crds, c.projects, c.applications].map((i) => i.listError()).find(forbidden)
  if (denied !== undefined) return { _tag: "Unauthorized", message: `The operator may not read Argo CD's objects: ${denied.reason.message}` }
  if (Option.isNone(c.crds.get(APPLICATION_CRD)))
    return {
      _tag: "EngineMissing",
      message: `Argo CD's CRD ${APPLICATION_CRD} is not installed; install Argo CD v3.4 in namespace ${s.engineNamespace} before the operator`,
    }
  if (Option.isNone(c.projects.get(`${s.engineNamespace}/${s.project}`)))
    return { _tag: "ProjectMissing", message: `AppProject ${s.engineNamespace}/${s.project} does not exist; the operator's chart creates it (engine.project)` }
  return { _tag: "Ready" }
}

/**
 * The last plan read, kept across passes with the plan and content ConfigMaps' resourceVersions as the cache showed
 * them: a plan is read and verified from the API server once, and again only when the cache shows another version
 * of either ConfigMap (or another plan).
 */
export interface KeptPlan {
  readonly plan: string
  readonly content: { readonly name: string; readonly version: string | undefined } | undefined
  readonly read: PlanRead
}
export interface PlanReadsShape {
  readonly last: () => KeptPlan | undefined
  readonly keep: (kept: KeptPlan) => void
}
export class PlanReads extends Context.Service<PlanReads, PlanReadsShape>()("@aicr/step-executor/PlanReads") {}
export const makePlanReads = (): PlanReadsShape => {
  let last: KeptPlan | undefined
  return { last: () => last, keep: (k) => void (last = k) }
}

const versionOf = (c: ExecutorCaches, s: ExecutorSettings, name: string): string | undefined =>
  Option.getOrUndefined(c.configMaps.get(`${s.namespace}/${name}`))?.metadata.resourceVersion

/** Reads one ConfigMap named by the plan from the API server; none when it is gone since the cache saw it. */
const readConfigMap = (kube: KubeShape, s: ExecutorSettings, name: string) => kube.get<ConfigMap>(Core.ConfigMap, `${s.namespace}/${name}`)

const readTarget = (kube: KubeShape, c: ExecutorCaches, s: ExecutorSettings, digest: string): Effect.Effect<PlanRead, KubeError> =>
  Effect.gen(function* () {
    const name = planConfigMapName(digest)
    if (versionOf(c, s, name) === undefined) return { ok: false, why: `plan ConfigMap ${s.namespace}/${name} does not exist` } as const
    const cm = yield* readConfigMap(kube, s, name)
    if (Option.isNone(cm)) return { ok: false, why: `plan ConfigMap ${s.namespace}/${name} does not exist` } as const
    const read = readPlanData(cm.value.data, digest)
    if (Result.isFailure(read)) return { ok: false, why: `plan ConfigMap ${name}: ${read.failure}` } as const
    const plan = read.success
    // A plan rebuilt from live Applications holds no values: only Adopt steps (which keep the live ones) use it.
    if (plan.source === "Adoption") return { ok: true, plan, values: new Map() } as const
    const ref = plan.content.find((x) => x.key === "values.json")
    let files: Record<string, string> = {}
    if (ref !== undefined) {
      const content = versionOf(c, s, ref.configMap) === undefined ? Option.none<ConfigMap>() : yield* readConfigMap(kube, s, ref.configMap)
      if (Option.isNone(content)) return { ok: false, why: `content ConfigMap ${ref.configMap} named by plan ${name} does not exist` } as const
      const text = content.value.data?.["values.json"] ?? ""
      if (sha256(text) !== ref.digest)
        return { ok: false, why: `values.json of content ConfigMap ${ref.configMap} does not match the digest plan ${name} records` } as const
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

/** The target plan: the kept read while the cache shows the same ConfigMap versions, else read from the API server. */
const target = (kube: KubeShape, c: ExecutorCaches, s: ExecutorSettings, reads: PlanReadsShape, digest: string): Effect.Effect<PlanRead, KubeError> =>
  Effect.gen(function* () {
    const name = planConfigMapName(digest)
    const plan = `${digest} ${versionOf(c, s, name) ?? "-"}`
    const kept = reads.last()
    if (kept !== undefined && kept.plan === plan && (kept.content === undefined || versionOf(c, s, kept.content.name) === kept.content.version))
      return kept.read
    const read = yield* readTarget(kube, c, s, digest)
    const content = read.ok ? read.plan.content.find((x) => x.key === "values.json")?.configMap : undefined
    reads.keep({ plan, content: content === undefined ? undefined : { name: content, version: versionOf(c, s, content) }, read })
    return read
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
      return {
        _tag: "EngineNotResponding",
        message: `Argo CD is not responding: Application ${s.engineNamespace}/${a.metadata.name} ${what}, more than ${Math.round(s.engineStaleAfterMs / 1000)}s ago; check that argocd-application-controller runs`,
      }
    }
  }
  return undefined
}

const created = (r: RuntimeRollout) => r.metadata.creationTimestamp ?? ""

/** The runtime's rollout that has not ended (no outcome label), newest first (then by name) if ever more than one. */
export const openRollout = (caches: ExecutorCaches, uid: string | undefined): RuntimeRollout | undefined =>
  caches.rollouts
    .list()
    .filter((r) => uid !== undefined && r.spec.runtimeUID === uid && r.metadata.labels?.[LABEL_OUTCOME] === undefined)
    .sort((a, b) =>
      created(a) < created(b) ? 1 : created(a) > created(b) ? -1 : a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
    )[0]

export const gather = (runtime: ClusterRuntime): Effect.Effect<Observed, KubeError, Kube | Caches | PlanReads | ExecutorConfig> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const caches = yield* Caches
    const settings = yield* ExecutorConfig
    const now = yield* Clock.currentTimeMillis
    const reachable = readEngine(caches, settings)
    const applications =
      reachable._tag === "Ready"
        ? [...caches.applications.list()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
        : []
    const uid = runtime.metadata.uid
    const engine = reachable._tag === "Ready" ? (staleness(applications, uid, settings, now) ?? reachable) : reachable
    const rollout = openRollout(caches, uid)
    const plan = rollout === undefined ? undefined : yield* target(kube, caches, settings, yield* PlanReads, rollout.spec.toDigest)
    const namespaces = new Set(
      caches.namespaces
        .list()
        .filter((n) => n.metadata.deletionTimestamp === undefined)
        .map((n) => n.metadata.name),
    )
    return { runtime, generation: runtime.metadata.generation, engine, applications, rollout, plan, namespaces, settings, now } satisfies Observed
  })
