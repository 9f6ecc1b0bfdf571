// Fake nodes managed by kwok: two system nodes and four GPU nodes labelled like an EKS cluster with H100
// (p5.48xlarge) node groups. kwok's fast stages mark them Ready and run any pod bound to them.
import { KWOK_NODE_ANNOTATION } from "./components"
import { eventually, expectOk, kubeRequest } from "./kube"
import type { KubeTarget } from "./types"

export interface Taint {
  readonly key: string
  readonly value?: string
  readonly effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute"
}

export interface NodeSpec {
  readonly name: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  readonly taints?: readonly Taint[]
  /** status.capacity; allocatable defaults to it. */
  readonly capacity?: Readonly<Record<string, string>>
  readonly allocatable?: Readonly<Record<string, string>>
}

export const REGION = "us-west-2"
export const GPU_TAINT: Taint = { key: "nvidia.com/gpu", effect: "NoSchedule" }

const common = (name: string, zone: string) => ({
  "kubernetes.io/hostname": name,
  "kubernetes.io/os": "linux",
  "kubernetes.io/arch": "amd64",
  "topology.kubernetes.io/region": REGION,
  "topology.kubernetes.io/zone": zone,
  "eks.amazonaws.com/capacityType": "ON_DEMAND",
  type: "kwok",
})

/** An m5.2xlarge node in nodegroup "system". */
export const systemNode = (i: number): NodeSpec => {
  const name = `kwok-system-${i}`
  return {
    name,
    labels: {
      ...common(name, `${REGION}${"ab"[i % 2]}`),
      "node.kubernetes.io/instance-type": "m5.2xlarge",
      "eks.amazonaws.com/nodegroup": "system",
    },
    capacity: { cpu: "8", memory: "32Gi", pods: "58", "ephemeral-storage": "100Gi" },
    allocatable: { cpu: "7910m", memory: "31Gi", pods: "58", "ephemeral-storage": "95Gi" },
  }
}

/** A p5.48xlarge node (8 × H100) in nodegroup "gpu", tainted nvidia.com/gpu:NoSchedule. */
export const gpuNode = (i: number): NodeSpec => {
  const name = `kwok-gpu-${i}`
  return {
    name,
    labels: {
      ...common(name, `${REGION}${"ab"[i % 2]}`),
      "node.kubernetes.io/instance-type": "p5.48xlarge",
      "eks.amazonaws.com/nodegroup": "gpu",
      "nvidia.com/gpu.present": "true",
      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
      "nvidia.com/gpu.count": "8",
    },
    taints: [GPU_TAINT],
    capacity: { cpu: "192", memory: "2048Gi", pods: "100", "ephemeral-storage": "3800Gi", "nvidia.com/gpu": "8" },
    allocatable: { cpu: "191450m", memory: "2010Gi", pods: "100", "ephemeral-storage": "3500Gi", "nvidia.com/gpu": "8" },
  }
}

export const DEFAULT_SYSTEM_NODES: readonly NodeSpec[] = [systemNode(0), systemNode(1)]
export const DEFAULT_GPU_NODES: readonly NodeSpec[] = [gpuNode(0), gpuNode(1), gpuNode(2), gpuNode(3)]
export const DEFAULT_NODES: readonly NodeSpec[] = [...DEFAULT_SYSTEM_NODES, ...DEFAULT_GPU_NODES]

export const nodeObject = (n: NodeSpec) => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: {
    name: n.name,
    labels: { "kubernetes.io/hostname": n.name, ...n.labels },
    annotations: { [KWOK_NODE_ANNOTATION]: "fake", "node.alpha.kubernetes.io/ttl": "0", ...n.annotations },
  },
  spec: { taints: (n.taints ?? []).map((t) => ({ ...t })) },
  // A Node keeps the status it is created with; kwok's node-initialize stage keeps capacity/allocatable if set.
  status: n.capacity ? { capacity: { ...n.capacity }, allocatable: { ...(n.allocatable ?? n.capacity) } } : {},
})

const isReady = (node: { status?: { conditions?: { type: string; status: string }[] } }) =>
  (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")

export const waitForNodesReady = async (info: KubeTarget, names: readonly string[], timeoutMs = 60_000): Promise<void> => {
  for (const name of names) {
    await eventually(
      async () => {
        const res = await kubeRequest(info, { method: "GET", path: `/api/v1/nodes/${name}` })
        return res.status === 200 && isReady(res.body)
      },
      { timeoutMs, what: `node ${name} Ready` },
    )
  }
}

/** Creates a kwok-managed node and (unless wait is false) waits until it is Ready. */
export const addNode = async (info: KubeTarget, node: NodeSpec, opts: { wait?: boolean } = {}): Promise<void> => {
  const res = await kubeRequest(info, { method: "POST", path: "/api/v1/nodes", body: nodeObject(node) })
  expectOk(res, `create node ${node.name}`)
  if (opts.wait ?? true) await waitForNodesReady(info, [node.name])
}

export const addNodes = async (info: KubeTarget, nodes: readonly NodeSpec[] = DEFAULT_NODES): Promise<void> => {
  for (const n of nodes) await addNode(info, n, { wait: false })
  await waitForNodesReady(
    info,
    nodes.map((n) => n.name),
  )
}

/** Deletes a node and waits until it is gone. */
export const removeNode = async (info: KubeTarget, name: string): Promise<void> => {
  const res = await kubeRequest(info, { method: "DELETE", path: `/api/v1/nodes/${name}` })
  if (res.status !== 404) expectOk(res, `delete node ${name}`)
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: `/api/v1/nodes/${name}` })).status === 404, {
    what: `node ${name} deleted`,
  })
}
