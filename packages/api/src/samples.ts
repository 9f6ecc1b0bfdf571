/**
 * Documented sample objects (operator.md §3, the EKS install guide), used by the API's own tests and docs. Plain
 * JSON-shaped data, so tests can send them to an API server as they are.
 */
import type { ClusterRuntime } from "./clusterruntime"
import type { Plan } from "./plan"
import { desiredStateDigest } from "./plan"
import type { RuntimeRollout } from "./runtimerollout"

export const SAMPLE_RUNTIME_UID = "0b6f3d0e-7c1a-4d59-9a43-5c1f1f6a2e10"

/** The EKS guide's runtime: intent training, platform kubeflow, criteria eks/h100/ubuntu, two node groups. */
export const eksClusterRuntime = (): ClusterRuntime => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "ClusterRuntime",
  metadata: { name: "cluster" },
  spec: {
    intent: "training",
    platform: "kubeflow",
    criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
    placement: {
      system: { nodeSelector: { "eks.amazonaws.com/nodegroup": "system" } },
      accelerated: {
        nodeSelector: { "eks.amazonaws.com/nodegroup": "gpu-h100" },
        tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
      },
    },
  },
})

export const samplePlan = (): Plan => {
  const base = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Plan",
    runtimeUID: SAMPLE_RUNTIME_UID,
    createdAt: "2026-12-02T10:00:00Z",
    source: "Resolution",
    desiredStateDigest: "",
    inputDigest: `sha256:${"1".repeat(64)}`,
    aicr: { version: "v1.1.2", image: `ghcr.io/nvidia/aicr@sha256:${"a".repeat(64)}` },
    flags: ["bundle", "--recipe", "recipe.json", "--deployer", "helm"],
    bundle: { ref: `registry.example/aicr/cluster/bundles/cluster@sha256:${"b".repeat(64)}` },
    engine: { kind: "argocd", project: "aicr" },
    releases: [
      {
        name: "cert-manager",
        namespace: "cert-manager",
        order: 0,
        dependsOn: [],
        chart: { ref: "registry.example/aicr/cluster/charts/cert-manager", digest: `sha256:${"c".repeat(64)}` },
        upstream: { repo: "https://charts.jetstack.io", chart: "cert-manager", version: "v1.17.2" },
        values: { digest: `sha256:${"d".repeat(64)}` },
      },
      {
        name: "gpu-operator",
        namespace: "gpu-operator",
        order: 1,
        dependsOn: ["cert-manager"],
        chart: { ref: "registry.example/aicr/cluster/charts/gpu-operator", digest: `sha256:${"e".repeat(64)}` },
        values: { digest: `sha256:${"f".repeat(64)}` },
        readinessGate: { image: `ghcr.io/nvidia/aicr-gate@sha256:${"0".repeat(64)}` },
      },
    ],
    content: [{ key: "recipe.json", configMap: "aicr-content-11111111111111111111111111111111", digest: `sha256:${"2".repeat(64)}` }],
  } satisfies Plan
  return { ...base, desiredStateDigest: desiredStateDigest(base) }
}

/** A first-install rollout waiting for approval. */
export const installRollout = (toDigest: string = samplePlan().desiredStateDigest): RuntimeRollout => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "RuntimeRollout",
  metadata: { name: `cluster-${toDigest.slice(7, 19)}-1` },
  spec: {
    runtimeUID: SAMPLE_RUNTIME_UID,
    toDigest,
    kind: "Install",
    deadline: "2026-12-03T10:00:00Z",
    requiresApproval: true,
    requestedBy: "alice",
  },
})
