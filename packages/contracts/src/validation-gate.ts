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
  ],
  reads: { conditions: [Progressing], kinds: [ClusterRuntimeKind, Core.Job, Core.ConfigMap, Core.ServiceAccount] },
  writes: [{ kind: RuntimeRolloutKind, conditions: [ValidationReady, Validated], statusKeys: ["validation"] }],
  creates: [
    { kind: Core.Job, why: "aicr validate runs in the validation namespace" },
    { kind: Core.Secret, why: "per-run registry credentials for pushing evidence, owned by the Job" },
  ],
})
