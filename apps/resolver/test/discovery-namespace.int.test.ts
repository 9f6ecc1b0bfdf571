// AICR's privileged snapshot agent never runs in the operator's namespace, which enforces Pod Security `restricted`
// (docs/adr/20261203-chart-namespaces.md): on the local control plane (the real kube-apiserver with its PodSecurity
// admission, kwok nodes, the process kubelet running the real AICR binary), the operator namespace is labelled
// `enforce=restricted` and the discovery namespace `enforce=privileged`, as the install guide and the chart make them.
// The resolver's snapshot Job runs in the discovery namespace and succeeds (its pod really ran: the snapshot holds the
// fake host's GPU driver read through nvidia-smi), the recipe and bundle Jobs run in the restricted namespace, and the
// restricted namespace refuses the snapshot agent's pod, as the real kubectl shows with a server-side dry run.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { jobRbac } from "@aicr/aicr"
import {
  applyManifests,
  createNamespace,
  deleteClusterScoped,
  eventually,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  readVersions,
  type Registry,
  startRegistry,
} from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { resolverApp } from "../src/app"

const info: HarnessInfo = inject("harness")
/** The AICR Jobs' RBAC this file applies; its cluster-scoped part (the fixed-name `aicr-node-reader`) is deleted after it. */
let rbac: ReadonlyArray<Record<string, unknown>> = []
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const { aicr: CURRENT } = readVersions()
const NAMESPACES = ["cert-manager", "gpu-operator", "kai-scheduler", "kube-system", "kubeflow", "monitoring", "nvidia-dra-driver", "nvsentinel", "skyhook"]
const work = mkdtempSync(join(tmpdir(), "resolver-psa-int-"))
const level = (l: string) => Object.fromEntries(["enforce", "audit", "warn"].map((m) => [`pod-security.kubernetes.io/${m}`, l]))
let registry: Registry
/** The operator's namespace (`aicr-system` in the guide): restricted. */
let operatorNs: string
/** The chart's `namespaces.discovery`: privileged, only the snapshot agent runs there. */
let discoveryNs: string
let resolver: { readonly stop: () => Promise<void> } | undefined

const SPEC = {
  intent: "training",
  platform: "kubeflow",
  criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
  placement: {
    system: { nodeSelector: { "eks.amazonaws.com/nodegroup": "system" } },
    accelerated: { nodeSelector: { "eks.amazonaws.com/nodegroup": "gpu" }, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] },
  },
}

interface Job {
  metadata: { name: string; namespace: string; labels?: Record<string, string> }
  spec: { template: { spec: { hostPID?: boolean; containers: Array<{ securityContext?: { privileged?: boolean } }> } & Record<string, unknown> } }
  status?: { succeeded?: number }
}
const jobs = async (namespace: string, kind: string): Promise<Job[]> =>
  (
    expectOk(
      await kubeRequest(info, {
        method: "GET",
        path: `/apis/batch/v1/namespaces/${namespace}/jobs?labelSelector=${encodeURIComponent(`operator.aicr.run/aicr-job=${kind}`)}`,
      }),
      `${kind} Jobs in ${namespace}`,
    ) as { items: Job[] }
  ).items
const podsOf = async (job: Job) =>
  (
    expectOk(
      await kubeRequest(info, {
        method: "GET",
        path: `/api/v1/namespaces/${job.metadata.namespace}/pods?labelSelector=${encodeURIComponent(`job-name=${job.metadata.name}`)}`,
      }),
      `pods of ${job.metadata.name}`,
    ) as {
      items: Array<{ status?: { phase?: string; containerStatuses?: Array<{ state?: { terminated?: { exitCode?: number } } }> } }>
    }
  ).items

beforeAll(async () => {
  registry = await startRegistry({ name: "resolver-psa-int", dir: mkdtempSync(join(work, "registry-")) })
  operatorNs = await createNamespace(info, "aicr-sys", level("restricted"))
  discoveryNs = await createNamespace(info, "aicr-disc", level("privileged"))
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  await applyManifests(info, [
    ...(rbac = jobRbac({ namespace: operatorNs, discoveryNamespace: discoveryNs, serviceAccount: "aicr-jobs", agentServiceAccount: "aicr-agent" })),
  ])
  await applyManifests(info, [{ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: SPEC }])
  resolver = startController(info, resolverApp(), [
    "--aicr-version",
    CURRENT,
    "--registry",
    `oci://${registry.address}/aicr/psa`,
    "--operator-namespace",
    operatorNs,
    "--discovery-namespace",
    discoveryNs,
    "--component-namespaces",
    NAMESPACES.join(","),
    "--allow-unsupported-aicr=true",
  ])
}, 120_000)

afterAll(async () => {
  await resolver?.stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await registry?.stop()
  rmSync(work, { recursive: true, force: true })
  await deleteClusterScoped(info, rbac)
})

describe("the privileged snapshot agent and the restricted operator namespace", () => {
  it("the snapshot Job runs in the privileged discovery namespace and succeeds; recipe and bundle run in the restricted operator namespace", async () => {
    const r = await eventually(
      async () => {
        const x = expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "runtime") as {
          metadata: { generation: number }
          status?: {
            conditions?: Array<{ type: string; status: string; reason: string; message: string; observedGeneration?: number }>
            resolution?: { contentConfigMap?: string }
          }
        }
        const c = x.status?.conditions?.find((k) => k.type === "Resolved")
        return c?.observedGeneration === x.metadata.generation && c.status === "True" ? x : undefined
      },
      { timeoutMs: 300_000, intervalMs: 1_000, what: "Resolved=True" },
    )
    expect(r.status?.conditions?.find((k) => k.type === "Discovered")).toMatchObject({
      status: "True",
      reason: "NodeGroupsDiscovered",
      message: expect.stringContaining("the snapshot confirms h100"),
    })

    const ns = expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${operatorNs}` }), "operator namespace")
    expect(ns.metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted")
    // The snapshot agent: one Job, in the discovery namespace, privileged, completed by a pod that exited 0.
    expect(await jobs(operatorNs, "snapshot")).toEqual([])
    const [snapshot, ...more] = await jobs(discoveryNs, "snapshot")
    expect(more).toEqual([])
    expect(snapshot!.spec.template.spec.hostPID).toBe(true)
    expect(snapshot!.spec.template.spec.containers[0]!.securityContext?.privileged).toBe(true)
    expect(snapshot!.status?.succeeded).toBe(1)
    const [pod] = await podsOf(snapshot!)
    expect(pod?.status?.phase).toBe("Succeeded")
    expect(pod?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0)
    // What the agent read on its node (the fake H100 host's nvidia-smi) is in the snapshot the resolver kept.
    const content = expectOk(
      await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${operatorNs}/configmaps/${r.status!.resolution!.contentConfigMap!}` }),
      "content",
    ) as { data: Record<string, string> }
    expect(content.data["snapshot.json"]).toContain("NVIDIA H100 80GB HBM3")
    // recipe and bundle: unprivileged, admitted and completed under restricted.
    for (const kind of ["recipe", "bundle"]) {
      const [job] = await jobs(operatorNs, kind)
      expect(job?.status?.succeeded, kind).toBe(1)
      expect(await jobs(discoveryNs, kind)).toEqual([])
    }
  }, 360_000)

  it("the restricted operator namespace refuses the snapshot agent's pod (kubectl create --dry-run=server)", async () => {
    const [snapshot] = await jobs(discoveryNs, "snapshot")
    // The agent's pod as its Job makes it, but for the node and the agent's ServiceAccount (which exists only in the
    // discovery namespace): what Pod Security judges is the pod's own spec.
    const { nodeName: _n, serviceAccountName: _s, serviceAccount: _a, ...spec } = snapshot!.spec.template.spec as Record<string, unknown>
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "snapshot-agent-probe", namespace: operatorNs }, spec: { ...spec, restartPolicy: "Never" } }
    const env = { PATH: [dirname(info.bin.kubectl!), "/usr/bin", "/bin"].join(":"), KUBECONFIG: info.kubeconfig, HOME: work }
    const dryRun = (namespace: string) => {
      const file = join(work, `agent-pod-${namespace}.json`)
      writeFileSync(file, JSON.stringify({ ...pod, metadata: { ...pod.metadata, namespace } }))
      return promisify(execFile)(info.bin.kubectl!, ["create", "--dry-run=server", "-f", file, "-o", "name"], { env })
    }
    const refused = await dryRun(operatorNs).then(
      () => undefined,
      (e: { stderr?: string }) => e.stderr ?? String(e),
    )
    expect(refused).toMatch(
      /pods "snapshot-agent-probe" is forbidden: violates PodSecurity "restricted:latest": .*host namespaces \(hostNetwork=true, hostPID=true, hostIPC=true\).*privileged \(container "aicr" must not set securityContext\.privileged=true\)/s,
    )
    // The same pod is admitted where the chart puts it.
    const { stdout } = await dryRun(discoveryNs)
    expect(stdout.trim()).toBe("pod/snapshot-agent-probe")
  }, 60_000)
})
