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
 *
 * Argo CD's kinds may be missing (CRD not installed: `NotFound`) or unreadable (`Forbidden`): such a list counts as
 * synced and empty and is kept as the informer's `listError`, which `gather` reports as `EngineMissing`/`Unauthorized`.
 */
import {
  ArgoCD, type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject, LABEL_ROLE, LABEL_RUNTIME_UID, ROLE_CONTENT, ROLE_PLAN, type RuntimeRollout, RuntimeRolloutKind,
  SINGLETON_NAME,
} from "@aicr/api"
import type { Application, ApplicationStatus } from "@aicr/argocd"
import { type Informer, type KubeError, makeInformer, metadataOnly, stripManagedFields } from "@aicr/kube"
import { Context, Effect, type Scope } from "effect"
import type { Kube } from "@aicr/kube"
import type { ExecutorSettings } from "./config"

export const APPLICATION_CRD = "applications.argoproj.io"

export interface ExecutorCaches {
  readonly runtimes: Informer<ClusterRuntime>
  readonly rollouts: Informer<RuntimeRollout>
  readonly applications: Informer<Application>
  readonly projects: Informer<KubeObject>
  readonly crds: Informer<KubeObject>
  readonly configMaps: Informer<KubeObject>
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
          phase: op.phase, message: op.message, finishedAt: op.finishedAt,
          ...(op.operation?.sync?.revision !== undefined ? { operation: { sync: { revision: op.operation.sync.revision } } } : {}),
          ...(op.syncResult?.revision !== undefined ? { syncResult: { revision: op.syncResult.revision } } : {}),
        },
      }
      : {}),
    ...(st.conditions !== undefined ? { conditions: st.conditions.map((c) => ({ type: c.type, message: c.message })) } : {}),
    ...(st.resources !== undefined
      ? { resources: st.resources.filter((r) => r.group === "batch" && r.kind === "Job").map((r) => ({ group: r.group, kind: r.kind, name: r.name, namespace: r.namespace, health: r.health })) }
      : {}),
  }
  return { ...base, status: JSON.parse(JSON.stringify(status)) as ApplicationStatus }
}

/** Argo CD not installed (its CRDs are missing) or not readable by the operator: reported, not waited for. */
const engineListError = (e: KubeError) => e.reason._tag === "NotFound" || e.reason._tag === "Forbidden" || e.reason._tag === "Unauthorized"

export const makeCaches = (s: Pick<ExecutorSettings, "namespace" | "engineNamespace" | "project">): Effect.Effect<ExecutorCaches, never, Kube | Scope.Scope> =>
  Effect.gen(function* () {
    const runtimes = yield* makeInformer<ClusterRuntime>({ kind: ClusterRuntimeKind, fieldSelector: `metadata.name=${SINGLETON_NAME}` })
    const rollouts = yield* makeInformer<RuntimeRollout>({ kind: RuntimeRolloutKind })
    const applications = yield* makeInformer<Application>({ kind: ArgoCD.Application, namespace: s.engineNamespace, transform: projectApplication, tolerate: engineListError })
    const projects = yield* makeInformer<KubeObject>({ kind: ArgoCD.AppProject, namespace: s.engineNamespace, fieldSelector: `metadata.name=${s.project}`, transform: metadataOnly, tolerate: engineListError })
    const crds = yield* makeInformer<KubeObject>({ kind: Core.CustomResourceDefinition, fieldSelector: `metadata.name=${APPLICATION_CRD}`, transform: metadataOnly, tolerate: engineListError })
    const configMaps = yield* makeInformer<KubeObject>({ kind: Core.ConfigMap, namespace: s.namespace, labelSelector: `${LABEL_ROLE} in (${ROLE_PLAN},${ROLE_CONTENT})`, transform: metadataOnly })
    return { runtimes, rollouts, applications, projects, crds, configMaps }
  })
