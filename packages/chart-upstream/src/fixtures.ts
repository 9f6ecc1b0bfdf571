/**
 * The reference recipe `h100-eks-ubuntu-training-kubeflow` as fixture data: one entry per component with the chart
 * name, upstream repository and version of aicr-cli.md §2.5, plus what its stand-in chart renders.
 *
 * Provenance: the 13 components, their charts, sources, versions, namespaces, dependencies and manifests are §2.5
 * (read from AICR v0.11.1). `node-feature-discovery` is added because the v1.x recipe installs it as its own release
 * in its own namespace (operator.md §8 lists the namespace); its repository and version are ours [I]. The workload
 * names are the ones AICR's health checks assert (aicr-cli.md §3.2), so readiness gates written against the real
 * charts find them here too.
 */

/** A workload the stand-in chart renders: a pause container that kwok marks Ready. */
export interface FixtureWorkload {
  readonly kind: "Deployment" | "DaemonSet"
  readonly name: string
  /** Extra labels on the workload and its pods, as the real chart sets them (what AICR's validators read). */
  readonly labels?: Readonly<Record<string, string>>
}

/** A trivial CRD a stand-in chart ships, so the recipe's extra manifests have a kind to land on. */
export interface FixtureCrd {
  readonly group: string
  readonly kind: string
  readonly plural: string
  readonly scope: "Namespaced" | "Cluster"
}

/** A rule of a ClusterRole, as RBAC writes it. */
export interface FixturePolicyRule {
  readonly apiGroups: readonly string[]
  readonly resources: readonly string[]
  readonly verbs: readonly string[]
}

/**
 * A ServiceAccount the real chart creates in the release namespace, with a ClusterRole and ClusterRoleBinding of the
 * same name (the real chart's rules, cut to what the recipe's manifests use), for a recipe manifest whose pods run as it.
 */
export interface FixtureServiceAccount {
  readonly name: string
  readonly rules: readonly FixturePolicyRule[]
}

/** One component of the recipe. */
export interface FixtureComponent {
  /** Component = release name (`deploymentOrder` entry). */
  readonly name: string
  readonly namespace: string
  /** Chart name; absent for a manifest-only component. */
  readonly chart?: string
  /** Upstream repository exactly as the recipe writes it (`https://…` or `oci://…`); "" for manifest-only. */
  readonly source: string
  /** Chart version exactly as the recipe writes it (a leading `v` is kept). */
  readonly version?: string
  readonly dependencyRefs: readonly string[]
  readonly workloads: readonly FixtureWorkload[]
  readonly crds?: readonly FixtureCrd[]
  /** ServiceAccounts (and their cluster RBAC) the real chart creates that the recipe's manifests run as. */
  readonly serviceAccounts?: readonly FixtureServiceAccount[]
  /** `manifests/<file>` of the bundle: file name → YAML. */
  readonly manifests?: Readonly<Record<string, string>>
  /** Values the bundle writes for this component (stands in for AICR's merged values). */
  readonly values?: Readonly<Record<string, unknown>>
  /** Incompressible filler (`files/filler-*.bin`) so one chart is measurably large; default 0. */
  readonly fillerBytes?: number
}

const NVIDIA = "https://helm.ngc.nvidia.com/nvidia"
const PROMETHEUS = "https://prometheus-community.github.io/helm-charts"

/** Shared by every manifest and value that schedules onto GPU nodes (the harness taints them). */
export const GPU_TOLERATION = { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" } as const

const dcgmExporter = [
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata:",
  "  name: dcgm-exporter",
  "  namespace: gpu-operator",
  "data:",
  "  dcgm-metrics.csv: |",
  "    DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).",
  "    DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (in MiB).",
  "",
].join("\n")

const torchRuntime = [
  "apiVersion: trainer.kubeflow.org/v1alpha1",
  "kind: ClusterTrainingRuntime",
  "metadata:",
  "  name: torch-distributed",
  "spec:",
  "  mlPolicy:",
  "    numNodes: 1",
  "    torch:",
  "      numProcPerNode: auto",
  "",
].join("\n")

const skyhookTuning = [
  "apiVersion: skyhook.nvidia.com/v1alpha1",
  "kind: Skyhook",
  "metadata:",
  "  name: tuning",
  "spec:",
  "  runtimeRequired: true",
  "  autoTaintNewNodes: true",
  "  nodeSelectors:",
  "    matchLabels:",
  '      nvidia.com/gpu.present: "true"',
  "",
].join("\n")

/** The components in deployment order (Kahn's sort of `dependencyRefs`, ties alphabetical, as AICR computes it). */
export const FIXTURE_COMPONENTS: readonly FixtureComponent[] = [
  {
    name: "aws-ebs-csi-driver",
    namespace: "kube-system",
    chart: "aws-ebs-csi-driver",
    source: "https://kubernetes-sigs.github.io/aws-ebs-csi-driver",
    version: "2.55.0",
    dependencyRefs: [],
    workloads: [
      { kind: "Deployment", name: "ebs-csi-controller" },
      { kind: "DaemonSet", name: "ebs-csi-node" },
    ],
  },
  {
    name: "aws-efa",
    namespace: "kube-system",
    chart: "aws-efa-k8s-device-plugin",
    source: "https://aws.github.io/eks-charts",
    version: "v0.5.3",
    dependencyRefs: [],
    workloads: [{ kind: "DaemonSet", name: "aws-efa-k8s-device-plugin" }],
  },
  {
    name: "cert-manager",
    namespace: "cert-manager",
    chart: "cert-manager",
    source: "https://charts.jetstack.io",
    version: "v1.17.2",
    dependencyRefs: [],
    workloads: [
      { kind: "Deployment", name: "cert-manager" },
      { kind: "Deployment", name: "cert-manager-webhook" },
    ],
  },
  {
    name: "kube-prometheus-stack",
    namespace: "monitoring",
    chart: "kube-prometheus-stack",
    source: PROMETHEUS,
    version: "82.8.0",
    dependencyRefs: [],
    workloads: [
      { kind: "Deployment", name: "kube-prometheus-operator" },
      { kind: "DaemonSet", name: "kube-prometheus-node-exporter" },
    ],
    values: { prometheus: { prometheusSpec: { storageSpec: { emptyDir: {} } } } },
    fillerBytes: 256 * 1024,
  },
  {
    name: "k8s-ephemeral-storage-metrics",
    namespace: "monitoring",
    chart: "k8s-ephemeral-storage-metrics",
    source: "https://jmcgrath207.github.io/k8s-ephemeral-storage-metrics/chart",
    version: "1.19.2",
    dependencyRefs: ["kube-prometheus-stack"],
    workloads: [{ kind: "Deployment", name: "k8s-ephemeral-storage-metrics" }],
  },
  {
    name: "node-feature-discovery",
    namespace: "node-feature-discovery",
    chart: "node-feature-discovery",
    source: "https://kubernetes-sigs.github.io/node-feature-discovery/charts",
    version: "0.17.3",
    dependencyRefs: [],
    workloads: [
      { kind: "Deployment", name: "node-feature-discovery-master" },
      { kind: "DaemonSet", name: "node-feature-discovery-worker" },
    ],
  },
  {
    name: "prometheus-adapter",
    namespace: "monitoring",
    chart: "prometheus-adapter",
    source: PROMETHEUS,
    version: "5.3.0",
    dependencyRefs: ["kube-prometheus-stack"],
    workloads: [{ kind: "Deployment", name: "prometheus-adapter" }],
  },
  {
    name: "skyhook-operator",
    namespace: "skyhook",
    chart: "skyhook-operator",
    source: `${NVIDIA}/skyhook`,
    version: "v0.14.0",
    dependencyRefs: [],
    workloads: [{ kind: "Deployment", name: "skyhook-operator-controller-manager" }],
    crds: [{ group: "skyhook.nvidia.com", kind: "Skyhook", plural: "skyhooks", scope: "Cluster" }],
  },
  {
    name: "skyhook-customizations",
    namespace: "skyhook",
    source: "",
    dependencyRefs: ["skyhook-operator"],
    workloads: [],
    manifests: { "tuning.yaml": skyhookTuning },
  },
  {
    name: "gpu-operator",
    namespace: "gpu-operator",
    chart: "gpu-operator",
    source: NVIDIA,
    version: "v25.10.1",
    dependencyRefs: ["cert-manager", "kube-prometheus-stack", "node-feature-discovery", "skyhook-customizations"],
    // The real chart's operator pods carry app=gpu-operator (AICR's operator-health lists them by it) and its
    // Deployment the chart's version (AICR's gpu-operator-version reads app.kubernetes.io/version).
    workloads: [
      { kind: "Deployment", name: "gpu-operator", labels: { app: "gpu-operator", "app.kubernetes.io/version": "v25.10.1" } },
      { kind: "DaemonSet", name: "nvidia-device-plugin-daemonset" },
    ],
    manifests: { "dcgm-exporter.yaml": dcgmExporter },
    values: { cdi: { enabled: true, default: false }, driver: { version: "580.105.08" }, gdrcopy: { enabled: true } },
  },
  {
    name: "kai-scheduler",
    namespace: "kai-scheduler",
    chart: "kai-scheduler",
    source: "oci://ghcr.io/nvidia/kai-scheduler",
    version: "v0.13.0",
    dependencyRefs: ["gpu-operator"],
    workloads: [{ kind: "Deployment", name: "kai-operator" }],
    // AICR v0.10.16's kai-scheduler manifest (disable-runtime-class-injection.yaml) is a Job that runs as
    // ServiceAccount kai-operator in the release namespace and patches configs.kai.scheduler: the real chart creates
    // that ServiceAccount (templates/services/operator-serviceaccount.yaml) and binds it to ClusterRole kai-operator
    // (templates/rbac/operator{,-binding}.yaml), whose rule on configs is this one.
    serviceAccounts: [
      {
        name: "kai-operator",
        rules: [
          { apiGroups: ["kai.scheduler"], resources: ["configs", "schedulingshards"], verbs: ["create", "delete", "get", "list", "patch", "update", "watch"] },
        ],
      },
    ],
  },
  {
    name: "kubeflow-trainer",
    namespace: "kubeflow",
    chart: "kubeflow-trainer",
    source: "oci://ghcr.io/kubeflow/charts",
    version: "2.1.0",
    dependencyRefs: ["cert-manager", "gpu-operator", "kube-prometheus-stack"],
    workloads: [{ kind: "Deployment", name: "kubeflow-trainer-controller-manager" }],
    crds: [{ group: "trainer.kubeflow.org", kind: "ClusterTrainingRuntime", plural: "clustertrainingruntimes", scope: "Cluster" }],
    manifests: { "torch-distributed-cluster-training-runtime.yaml": torchRuntime },
  },
  {
    name: "nvidia-dra-driver-gpu",
    namespace: "nvidia-dra-driver",
    chart: "nvidia-dra-driver-gpu",
    source: NVIDIA,
    version: "25.12.0",
    dependencyRefs: ["gpu-operator"],
    workloads: [
      { kind: "Deployment", name: "nvidia-dra-driver-gpu-controller" },
      { kind: "DaemonSet", name: "nvidia-dra-driver-gpu-kubelet-plugin" },
    ],
  },
  {
    name: "nvsentinel",
    namespace: "nvsentinel",
    chart: "nvsentinel",
    source: "oci://ghcr.io/nvidia",
    version: "v1.1.0",
    dependencyRefs: ["cert-manager", "gpu-operator"],
    workloads: [{ kind: "Deployment", name: "labeler" }],
  },
]

/** Components that have a chart (everything but manifest-only ones). */
export const FIXTURE_CHARTS: readonly (FixtureComponent & { readonly chart: string; readonly version: string })[] = FIXTURE_COMPONENTS.filter(
  (c): c is FixtureComponent & { chart: string; version: string } => c.chart !== undefined && c.version !== undefined,
)

/** True for an `oci://` source. */
export const isOciSource = (source: string): boolean => source.startsWith("oci://")

/**
 * The chart versions the previous pinned AICR (v0.10.16) names where they differ from v0.11.1's, read from its real
 * recipe for `h100-eks-ubuntu-training-kubeflow` (chart-upstream.test.ts checks both recipes against what is served):
 * kai-scheduler v0.12.17 (with the runtime-class manifest v0.10 ships) and nvsentinel v0.10.0. Served next to the
 * current ones by the local control plane (`cli.ts`), so a runtime resolved with either AICR can be mirrored.
 */
export const PREVIOUS_AICR_COMPONENTS: readonly FixtureComponent[] = FIXTURE_COMPONENTS.flatMap((c) =>
  c.name === "kai-scheduler" ? [{ ...c, version: "v0.12.17" }] : c.name === "nvsentinel" ? [{ ...c, version: "v0.10.0" }] : [],
)

/** Every component version the local control plane serves: both pinned AICR versions' charts. */
export const ALL_AICR_COMPONENTS: readonly FixtureComponent[] = [...FIXTURE_COMPONENTS, ...PREVIOUS_AICR_COMPONENTS]
