import { ClusterRuntimeKind, Core, LABEL_ROLLOUT, Progressing, Rbac, RuntimeRolloutKind, ValidationReady, Validated } from "@aicr/api"
import { Contract, Watch } from "./contract"

/** validation-gate: checks validation is available before steps, runs aicr validate after them, pushes evidence. */
export const validationGate = Contract.make({
  controller: "validation-gate",
  fieldManager: "aicr-validation-gate",
  reconciles: RuntimeRolloutKind,
  watches: [
    Watch.self(RuntimeRolloutKind),
    Watch.mapped(ClusterRuntimeKind, "rollouts-of-runtime", "spec.validation.deployment decides Required or Disabled"),
    Watch.mapped(Core.Job, "rollout-label", "validation runs finish", LABEL_ROLLOUT),
    Watch.mapped(
      Core.ServiceAccount,
      "rollouts-of-runtime",
      "the validation launcher or AICR's validator identity is installed or removed (chart validation.enabled)",
    ),
    Watch.mapped(Rbac.ClusterRoleBinding, "rollouts-of-runtime", "the validators' cluster-wide binding (or the launcher's) appears or goes"),
    Watch.mapped(Rbac.RoleBinding, "rollouts-of-runtime", "the launcher's binding in the validation namespace appears or goes"),
  ],
  reads: {
    conditions: [Progressing],
    kinds: [ClusterRuntimeKind, Core.Job, Core.Pod, Core.ConfigMap, Core.ServiceAccount, Rbac.ClusterRoleBinding, Rbac.RoleBinding],
  },
  writes: [{ kind: RuntimeRolloutKind, conditions: [ValidationReady, Validated], statusKeys: ["validation"] }],
  creates: [
    { kind: Core.Job, why: "a fresh snapshot and aicr validate run in the validation namespace" },
    { kind: Core.ConfigMap, why: "the validate Job's input (recipe, snapshot) and the Jobs' output, owned by the Job" },
  ],
})
