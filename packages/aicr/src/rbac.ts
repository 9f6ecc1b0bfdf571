/**
 * The least privilege AICR's Jobs run with (installed with the operator, never created by the resolver):
 *
 * - `aicr-jobs` (recipe and bundle, Jobs namespace): ConfigMaps get/create/update/patch, for AICR's `cm://` reader
 *   and writer (server-side apply, field manager `aicr`). Nothing cluster-wide.
 * - `aicr-agent` (the snapshot agent, discovery namespace): the same on ConfigMaps, plus what AICR's own agent RBAC
 *   grants cluster-wide (pkg/k8s/agent): nodes and pods get/list, `nvidia.com` clusterpolicies get/list, bound
 *   through the fixed-name ClusterRole `aicr-node-reader`. Because that name is fixed, one snapshot runs at a time.
 */
import type { AicrJobSettings } from "./job"

export const AGENT_CLUSTER_ROLE = "aicr-node-reader"

const configMapRules = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "update", "patch"] }]

const roleFor = (namespace: string, name: string) => [
  { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name, namespace }, rules: configMapRules },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name, namespace }],
  },
]

/** Every RBAC object of `s`'s two ServiceAccounts, in apply order. */
export const jobRbac = (
  s: Pick<AicrJobSettings, "namespace" | "discoveryNamespace" | "serviceAccount" | "agentServiceAccount">,
): ReadonlyArray<Record<string, unknown>> => [
  ...roleFor(s.namespace, s.serviceAccount),
  ...roleFor(s.discoveryNamespace, s.agentServiceAccount),
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: AGENT_CLUSTER_ROLE },
    rules: [
      { apiGroups: [""], resources: ["nodes", "pods"], verbs: ["get", "list"] },
      { apiGroups: ["nvidia.com"], resources: ["clusterpolicies"], verbs: ["get", "list"] },
    ],
  },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: AGENT_CLUSTER_ROLE },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: AGENT_CLUSTER_ROLE },
    subjects: [{ kind: "ServiceAccount", name: s.agentServiceAccount, namespace: s.discoveryNamespace }],
  },
]
