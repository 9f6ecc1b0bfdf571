import { ClusterRuntimeKind, Core, LABEL_ROLLOUT, Progressing, RuntimeRolloutKind, ValidationReady, Validated } from "@aicr/api"
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
    Watch.mapped(Core.ServiceAccount, "rollouts-of-runtime", "the validation launcher is installed or removed (chart validation.enabled)"),
  ],
  reads: { conditions: [Progressing], kinds: [ClusterRuntimeKind, Core.Job, Core.Pod, Core.ConfigMap, Core.ServiceAccount] },
  writes: [{ kind: RuntimeRolloutKind, conditions: [ValidationReady, Validated], statusKeys: ["validation"] }],
  creates: [
    { kind: Core.Job, why: "a fresh snapshot and aicr validate run in the validation namespace" },
    { kind: Core.ConfigMap, why: "the validate Job's input (recipe, snapshot) and the Jobs' output, owned by the Job" },
  ],
})
