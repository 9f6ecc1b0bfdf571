/**
 * The two CRDs of operator.aicr.run/v1alpha1, their root rules and printer columns (operator.md §3.1, §3.2;
 * architecture.md §1 "kubectl get clusterruntime must tell the story at a glance").
 */
import { ClusterRuntimeSpec, ClusterRuntimeStatus } from "./clusterruntime"
import { conditionColumn, renderCrdYaml, type CrdDefinition } from "./crd"
import { ClusterRuntimeKind, RuntimeRolloutKind, SINGLETON_NAME } from "./resource"
import { RuntimeRolloutSpec, RuntimeRolloutStatus } from "./runtimerollout"

export { buildCrd, conditionColumn, openApiOf, renderCrdYaml, GENERATED_HEADER, type CrdDefinition, type PrinterColumn } from "./crd"
export { renderConditionCatalog } from "./catalog-doc"
export { toStructural, unbounded } from "./structural"

const age = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" } as const

export const ClusterRuntimeCrd: CrdDefinition = {
  kind: ClusterRuntimeKind,
  singular: "clusterruntime",
  shortNames: ["aicrrt"],
  categories: ["aicr"],
  description: "ClusterRuntime is the cluster's desired AICR runtime (singleton named cluster) and its observed state.",
  spec: ClusterRuntimeSpec,
  status: ClusterRuntimeStatus,
  rootRules: [
    {
      rule: `self.metadata.name == '${SINGLETON_NAME}'`,
      message: `ClusterRuntime is a singleton: metadata.name must be '${SINGLETON_NAME}'`,
      reason: "FieldValueForbidden",
    },
  ],
  printerColumns: [
    { name: "Ready", type: "string", jsonPath: conditionColumn("Ready", "status") },
    { name: "Reason", type: "string", jsonPath: conditionColumn("Ready", "reason") },
    { name: "Step", type: "string", jsonPath: ".status.plans.rollout.step", description: "Step of the rollout in flight" },
    // [I] kstatus's Stalled with -o wide: progress needs a human; its reason (-o jsonpath) selects the runbook.
    {
      name: "Stalled",
      type: "string",
      jsonPath: conditionColumn("Stalled", "status"),
      description: "Progress needs a human (the Stalled condition's reason selects the runbook)",
      priority: 1,
    },
    { name: "Rollout", type: "string", jsonPath: ".status.plans.rollout.name", priority: 1 },
    { name: "Active Plan", type: "string", jsonPath: ".status.plans.active", description: "desiredStateDigest rolled out", priority: 1 },
    age,
  ],
}

export const RuntimeRolloutCrd: CrdDefinition = {
  kind: RuntimeRolloutKind,
  singular: "runtimerollout",
  shortNames: ["aicrro"],
  categories: ["aicr"],
  description: "RuntimeRollout is one transition of the GPU stack between two plans, with its approval and progress.",
  spec: RuntimeRolloutSpec,
  status: RuntimeRolloutStatus,
  rootRules: [],
  printerColumns: [
    { name: "Kind", type: "string", jsonPath: ".spec.kind" },
    { name: "Approved", type: "string", jsonPath: conditionColumn("Approved", "status") },
    { name: "Progressing", type: "string", jsonPath: conditionColumn("Progressing", "status") },
    { name: "Step", type: "string", jsonPath: ".status.steps.current" },
    { name: "Outcome", type: "string", jsonPath: conditionColumn("Succeeded", "reason") },
    { name: "To", type: "string", jsonPath: ".spec.toDigest", priority: 1 },
    { name: "Deadline", type: "date", jsonPath: ".spec.deadline", priority: 1 },
    age,
  ],
}

export const CRDS = [ClusterRuntimeCrd, RuntimeRolloutCrd] as const

/** File name under `crds/` → YAML. */
export const renderCrds = (): ReadonlyArray<{ readonly file: string; readonly yaml: string }> =>
  CRDS.map((def) => ({ file: `${def.kind.plural}.${def.kind.group}.yaml`, yaml: renderCrdYaml(def) }))
