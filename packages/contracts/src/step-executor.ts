import {
  Approved,
  ArgoCD,
  ClusterRuntimeKind,
  Core,
  EngineAvailable,
  LABEL_ROLE,
  Progressing,
  ROLE_CONTENT,
  ROLE_PLAN,
  RuntimeRolloutKind,
  ValidationReady,
} from "@aicr/api"
import { Contract, Watch } from "./contract"

/**
 * step-executor: writes one Argo CD Application per step in dependency order, advances only when ready at the
 * revision written, and applies suspendEngine. Rooted at the runtime because suspendEngine and EngineAvailable
 * apply with no rollout in flight; it writes two objects.
 */
export const stepExecutor = Contract.make({
  controller: "step-executor",
  fieldManager: "aicr-step-executor",
  reconciles: ClusterRuntimeKind,
  watches: [
    Watch.self(ClusterRuntimeKind),
    Watch.mapped(RuntimeRolloutKind, "singleton", "approvals and ValidationReady gate the steps"),
    // Every Application in the engine namespace: one without our label that has a wanted name is ForeignObject. A
    // readiness gate's Job is read through its Application's status (Argo CD's health of the Job), never directly.
    Watch.mapped(ArgoCD.Application, "singleton", "readiness at the revision written; ForeignObject"),
    Watch.mapped(ArgoCD.AppProject, "singleton", "EngineAvailable: the AppProject is readable"),
    Watch.mapped(Core.CustomResourceDefinition, "singleton", "EngineAvailable: Argo CD's CRDs appear or go"),
    Watch.mapped(
      Core.ConfigMap,
      "singleton",
      "the target plan and the content ConfigMap it names (read once per version)",
      `${LABEL_ROLE} in (${ROLE_PLAN},${ROLE_CONTENT})`,
    ),
    // Argo CD does not create release namespaces (no CreateNamespace): a step starts only once its namespace exists.
    Watch.mapped(Core.Namespace, "singleton", "NamespaceMissing: a step's release namespace appears or goes"),
  ],
  reads: {
    conditions: [Approved, ValidationReady],
    kinds: [RuntimeRolloutKind, Core.ConfigMap, ArgoCD.Application, ArgoCD.AppProject, Core.CustomResourceDefinition, Core.Namespace],
  },
  writes: [
    { kind: RuntimeRolloutKind, conditions: [Progressing], statusKeys: ["steps"] },
    { kind: ClusterRuntimeKind, conditions: [EngineAvailable], statusKeys: ["engine"] },
  ],
  creates: [
    {
      kind: ArgoCD.Application,
      why: "one Application per release (created when the cache shows none, else applied at the resourceVersion seen; suspendEngine patches automated sync); removed in reverse order by Remove steps (uid and resourceVersion preconditions)",
    },
  ],
})
