import {
  Approved,
  ArgoCD,
  ClusterRuntimeKind,
  Core,
  EngineAvailable,
  FINALIZER_CLEANUP,
  LABEL_OUTCOME,
  LABEL_ROLE,
  LABEL_RUNTIME_UID,
  Mirrored,
  Planned,
  Progressing,
  Ready,
  ROLE_AICR_JOB,
  ROLE_CONTENT,
  ROLE_PLAN,
  Resolved,
  RuntimeRolloutKind,
  Stalled,
  Succeeded,
  ValidationReady,
  Validated,
} from "@aicr/api"
import { Contract, Watch } from "./contract"

/**
 * planner: composes the immutable plan, assesses it after the stabilization window, creates the RuntimeRollout,
 * closes rollouts (outcome label, active plan) and summarises Ready/Stalled. The lifecycle owner of both kinds.
 */
export const planner = Contract.make({
  controller: "planner",
  fieldManager: "aicr-planner",
  reconciles: ClusterRuntimeKind,
  watches: [
    Watch.self(ClusterRuntimeKind),
    Watch.mapped(RuntimeRolloutKind, "singleton", "rollout conditions drive Ready, Stalled and closing"),
    Watch.mapped(
      Core.ConfigMap,
      "singleton",
      "plan ConfigMaps (PlanUnreadable, pins) and the content ConfigMaps plans are composed from",
      `${LABEL_ROLE} in (${ROLE_PLAN},${ROLE_CONTENT})`,
    ),
    Watch.mapped(Core.Job, "singleton", "upgrade-check Jobs finish", `${LABEL_ROLE}=${ROLE_AICR_JOB}`),
    // Argo CD's CRD may be missing: the informer then counts as synced and empty, and lists again once the CRD
    // informer shows Argo CD's CRD (no request while it is missing).
    Watch.mapped(
      ArgoCD.Application,
      "singleton",
      "after a rollout, a release of the active plan that is no longer ready (Ready=NotReady) and its recovery; re-adoption",
      LABEL_RUNTIME_UID,
    ),
    Watch.mapped(Core.CustomResourceDefinition, "singleton", "Argo CD's Application CRD appears: the Application informer lists again"),
  ],
  reads: {
    // Resolved and Mirrored gate the plan; EngineAvailable's engine reasons reach Ready and Stalled; the rollout's
    // conditions close it and say where it is.
    conditions: [Resolved, Mirrored, EngineAvailable, Approved, Progressing, ValidationReady, Validated],
    // Pods: how an upgrade-check Job's pod ended (its termination message, packages/aicr's Job runner).
    kinds: [RuntimeRolloutKind, Core.ConfigMap, Core.Job, Core.Pod, ArgoCD.Application, Core.CustomResourceDefinition],
  },
  writes: [
    { kind: ClusterRuntimeKind, conditions: [Planned, Ready, Stalled], statusKeys: ["plans"], finalizers: [FINALIZER_CLEANUP] },
    { kind: RuntimeRolloutKind, conditions: [Succeeded], statusKeys: ["assessment"], labels: [LABEL_OUTCOME] },
  ],
  creates: [
    { kind: Core.ConfigMap, why: "immutable plan ConfigMaps and the assessment content ConfigMap" },
    { kind: RuntimeRolloutKind, why: "one rollout per transition between two plans" },
    { kind: Core.Job, why: "aicr upgrade-check runs (AICR 1.x), with their input ConfigMaps owned by the Job" },
  ],
})
