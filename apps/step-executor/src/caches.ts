/**
 * The step-executor's informer caches, one per watch of its contract, each holding the projection the executor reads
 * (ADR 20261203-informer-caches): every pass reads from here, never from the API server.
 *
 * | cache | scope | projection |
 * |---|---|---|
 * | runtimes | the ClusterRuntime `cluster` (field selector) | whole, without managedFields |
 * | rollouts | every RuntimeRollout | whole, without managedFields |
 * | applications | every Application in the engine namespace (a foreign one with a wanted name is `ForeignObject`) | {@link projectApplication}; one without a runtime-uid label: metadata only |
 * | projects | the AppProject `--engine-project` (field selector) | metadata only |
 * | crds | Argo CD's Application CRD (field selector) | metadata only (the object is ~400 KiB) |
 * | configMaps | plan and content ConfigMaps in the operator namespace (role label) | metadata only: the data is read once per resourceVersion (`gather.ts`) |
 * | namespaces | every Namespace (a step starts only once its release namespace exists: `NamespaceMissing`) | metadata only |
 *
 * The informers are made from the contract's watches (`informersFor`): its label selectors, with the namespaces,
 * field selectors and projections above.
 *
 * Argo CD's kinds may be missing (CRD not installed: `NotFound`) or unreadable (`Forbidden`): such a list counts as
 * synced and empty and is kept as the informer's `listError`, which `gather` reports as `EngineMissing`/`Unauthorized`.
 */
import {
  ArgoCD,
  type ClusterRuntime,
  ClusterRuntimeKind,
  Core,
  kindKey,
  type KubeObject,
  LABEL_RUNTIME_UID,
  type RuntimeRollout,
  RuntimeRolloutKind,
  SINGLETON_NAME,
} from "@aicr/api"
import { APPLICATION_CRD, type Application, type ApplicationStatus } from "@aicr/argocd"
import type { Watch } from "@aicr/contracts"
import { type Informer, type Kube, metadataOnly, stripManagedFields } from "@aicr/kube"
import { crdScope, informersFor, type Source, type WatchScope } from "@aicr/runtime"
import { Context, Effect, type Scope } from "effect"
import type { ExecutorSettings } from "./config"
import { contract } from "./contract"

export { APPLICATION_CRD } from "@aicr/argocd"

export interface ExecutorCaches {
  readonly runtimes: Informer<ClusterRuntime>
  readonly rollouts: Informer<RuntimeRollout>
  readonly applications: Informer<Application>
  readonly projects: Informer<KubeObject>
  readonly crds: Informer<KubeObject>
  readonly configMaps: Informer<KubeObject>
  readonly namespaces: Informer<KubeObject>
}

export class Caches extends Context.Service<Caches, ExecutorCaches>()("@aicr/step-executor/Caches") {}

/**
 * What the executor reads of an Application (`@aicr/argocd`'s readiness, failure, suspension and record checks):
 * metadata, spec and `operation` whole; of the status the comparison, sync, health, operation state and conditions,
 * and of the managed resources only the Jobs (a readiness gate's Job health). Argo CD's status also holds every
 * managed resource, the sync result of each and the history: most of the object, never read here.
 */
export const projectApplication = (app: Application): Application => {
  const base = stripManagedFields(app)
  if (base.metadata.labels?.[LABEL_RUNTIME_UID] === undefined) return metadataOnly(base)
  const st = base.status
  if (st === undefined) return base
  const op = st.operationState
  const status: ApplicationStatus = {
    ...(st.reconciledAt !== undefined ? { reconciledAt: st.reconciledAt } : {}),
    ...(st.sync !== undefined ? { sync: { status: st.sync.status, revision: st.sync.revision, comparedTo: st.sync.comparedTo } } : {}),
    ...(st.health !== undefined ? { health: { status: st.health.status, message: st.health.message } } : {}),
    ...(op !== undefined
      ? {
          operationState: {
            phase: op.phase,
            message: op.message,
            finishedAt: op.finishedAt,
            ...(op.operation?.sync?.revision !== undefined ? { operation: { sync: { revision: op.operation.sync.revision } } } : {}),
            ...(op.syncResult?.revision !== undefined ? { syncResult: { revision: op.syncResult.revision } } : {}),
          },
        }
      : {}),
    ...(st.conditions !== undefined ? { conditions: st.conditions.map((c) => ({ type: c.type, message: c.message })) } : {}),
    ...(st.resources !== undefined
      ? {
          resources: st.resources
            .filter((r) => r.group === "batch" && r.kind === "Job")
            .map((r) => ({ group: r.group, kind: r.kind, name: r.name, namespace: r.namespace, health: r.health })),
        }
      : {}),
  }
  return { ...base, status: JSON.parse(JSON.stringify(status)) as ApplicationStatus }
}

/**
 * How each watch of the contract is scoped and projected here. Argo CD not installed (its CRDs missing) or not readable
 * is reported, not waited for; its informers list again once the CRD informer shows Argo CD's CRD (`servedBy`), so an
 * executor without Argo CD makes no request at idle.
 */
export const scopeOf =
  (s: Pick<ExecutorSettings, "namespace" | "engineNamespace" | "project">) =>
  (w: Watch): WatchScope => {
    const engine = { servedBy: APPLICATION_CRD }
    switch (kindKey(w.kind)) {
      case kindKey(ClusterRuntimeKind):
        return { fieldSelector: `metadata.name=${SINGLETON_NAME}` }
      case kindKey(ArgoCD.Application):
        return { namespace: s.engineNamespace, transform: projectApplication as (o: KubeObject) => KubeObject, ...engine }
      case kindKey(ArgoCD.AppProject):
        return { namespace: s.engineNamespace, fieldSelector: `metadata.name=${s.project}`, transform: metadataOnly, ...engine }
      case kindKey(Core.CustomResourceDefinition):
        return crdScope(APPLICATION_CRD)
      case kindKey(Core.ConfigMap):
        return { namespace: s.namespace, transform: metadataOnly }
      case kindKey(Core.Namespace):
        return { transform: metadataOnly }
      default:
        return {}
    }
  }

/** The caches, from the contract's watches, and the work-queue sources that map their events to `cluster`. */
export const makeCaches = (
  s: Pick<ExecutorSettings, "namespace" | "engineNamespace" | "project">,
): Effect.Effect<{ readonly caches: ExecutorCaches; readonly sources: ReadonlyArray<Source> }, never, Kube | Scope.Scope> =>
  Effect.gen(function* () {
    const informers = yield* informersFor(contract, scopeOf(s))
    const caches: ExecutorCaches = {
      runtimes: informers.one<ClusterRuntime>(ClusterRuntimeKind),
      rollouts: informers.one<RuntimeRollout>(RuntimeRolloutKind),
      applications: informers.one<Application>(ArgoCD.Application),
      projects: informers.one(ArgoCD.AppProject),
      crds: informers.one(Core.CustomResourceDefinition),
      configMaps: informers.one(Core.ConfigMap),
      namespaces: informers.one(Core.Namespace),
    }
    return { caches, sources: informers.sources }
  })
