// After a rollout ends, the stack is still watched (operator.md §3.2 Ready `NotReady`, §10 item 9: "a node reset or a
// registry outage appears in the conditions with its cause and clears on recovery"), on the real kube-apiserver and
// kube-controller-manager, kwok GPU nodes, a real OCI registry and a real Argo CD v3.4.2. The planner runs in-process,
// the step-executor as its shipped bundle. The test plays the resolver and the registry-mirror (their rooms and the
// content ConfigMap of one chart, pushed with the real helm into a registry of its own) and the approver (the
// approval and `Approved`, as the approval-guard reports it).
//
// The chart has a DaemonSet on every GPU node and a Deployment of one validator per GPU node. (a) A node's kubelet
// goes silent: its Lease is taken by a holder that never renews it, so kwok (which plays the kubelets and gives up a
// node whose Lease it does not hold) stops heartbeating it, and after its grace period the real node lifecycle
// controller marks the node Unknown and its pods not ready. The DaemonSet controller drops the node from the
// DaemonSet's desired count (the unreachable taint), so the DaemonSet stays Healthy; the Deployment counts one replica
// fewer available, Argo CD reports it and the Application Progressing — and the runtime says Ready=False/NotReady
// naming the release and Argo CD's message for the Deployment. The Lease expired, kwok takes the node back and marks
// it Ready; its pods reported ready again — the test plays the returning kubelet there, as kwok's stages only make
// Pending pods ready — and Ready clears. (b) The registry stops answering while Argo CD must read the chart again
// (a hard refresh, as `argocd app get --hard-refresh` asks): Argo CD's ComparisonError shows in Ready; the registry
// back and refreshed again, Ready clears. `kubectl get clusterruntime` shows each.
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { ANNOTATION_EDITED_BY, contentConfigMapName, LABEL_OUTCOME, sha256 } from "@aicr/api"
import {
  addRepositoryCredential,
  applyManifests,
  ARGOCD_NAMESPACE,
  type ArgoCd,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  type Proc,
  type Registry,
  spawnProc,
  startArgoCd,
  startRegistry,
} from "@aicr/testing/harness"
import { applyStatusAs, removeRuntime, setApproved, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { plannerApp } from "../src/app"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const APPS = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications`
const RELEASE = "gpu-agent"
/** The GPU node whose kubelet goes silent: where a validator pod runs (set by the first test). */
let NODE = "kwok-gpu-2"
const suffix = Math.random().toString(36).slice(2, 6)
const releaseNs = `watch-${RELEASE}-${suffix}`
const exec = promisify(execFile)

let work = ""
let ns = ""
let helm: IsolatedHelm | undefined
let argocd: ArgoCd | undefined
let registry: Registry | undefined
let registryDir = ""
let port = 0
let planner: { readonly stop: () => Promise<void> } | undefined
const procs: Proc[] = []
let chart = { ref: "", digest: "" }

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)
const ready = async (): Promise<Cond | undefined> => (await get(RUNTIME)).status?.conditions?.find((c: Cond) => c.type === "Ready")
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/u, "Z")
const kubectl = async (...args: string[]) => (await exec(info.bin.kubectl!, ["--kubeconfig", info.kubeconfig, ...args])).stdout
const prefix = () => `${registry!.address}/aicr/watch`
const DAEMONSET = `/apis/apps/v1/namespaces/${releaseNs}/daemonsets/${RELEASE}`
const DEPLOYMENT = `/apis/apps/v1/namespaces/${releaseNs}/deployments/${RELEASE}-validator`
const VALIDATORS = 4

/**
 * A chart with a DaemonSet on every GPU node (as a GPU operator's agents) and a Deployment of one validator per GPU
 * node (required anti-affinity per host), packaged with the real helm.
 */
const packageChart = async (h: IsolatedHelm): Promise<string> => {
  const dir = join(h.work, "src", RELEASE)
  await mkdir(join(dir, "templates"), { recursive: true })
  await writeFile(join(dir, "Chart.yaml"), `apiVersion: v2\nname: ${RELEASE}\nversion: 0.1.0\nappVersion: "1.0.0"\ntype: application\n`)
  await writeFile(join(dir, "values.yaml"), "message: default\nvalidators: 4\n")
  await writeFile(
    join(dir, "templates", "daemonset.yaml"),
    `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {matchLabels: {app.kubernetes.io/instance: "{{ .Release.Name }}"}}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: "{{ .Release.Name }}"}
    spec:
      nodeSelector: {nvidia.com/gpu.present: "true"}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
        - name: agent
          image: registry.example/gpu-agent:1.0.0
          env: [{name: MESSAGE, value: {{ .Values.message | quote }}}]
`,
  )
  await writeFile(
    join(dir, "templates", "deployment.yaml"),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-validator
spec:
  replicas: {{ .Values.validators }}
  selector: {matchLabels: {app.kubernetes.io/name: "{{ .Release.Name }}-validator"}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: "{{ .Release.Name }}-validator"}
    spec:
      nodeSelector: {nvidia.com/gpu.present: "true"}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app.kubernetes.io/name: "{{ .Release.Name }}-validator"}}}
      containers:
        - name: validator
          image: registry.example/gpu-validator:1.0.0
`,
  )
  await h.helm("package", dir, "-d", join(h.work, "pkgs"))
  return join(h.work, "pkgs", `${RELEASE}-0.1.0.tgz`)
}

/** Pushes the chart with the real helm; its digest is the one the registry serves (what the mirror records). */
const pushChart = async (h: IsolatedHelm) => {
  await h.helm("push", await packageChart(h), `oci://${prefix()}/charts`, "--plain-http")
  const res = await fetch(`http://${registry!.address}/v2/aicr/watch/charts/${RELEASE}/manifests/0.1.0`, {
    method: "HEAD",
    headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
  })
  const digest = res.headers.get("docker-content-digest")
  if (!res.ok || digest === null) throw new Error(`no manifest digest for ${RELEASE}:0.1.0 (${res.status})`)
  chart = { ref: `${prefix()}/charts/${RELEASE}:0.1.0`, digest }
}

/** A resolution of the one chart, published as the resolver and the registry-mirror would. */
const publish = async () => {
  const input = sha256(`watch-${suffix}`)
  const cm = contentConfigMapName(input)
  const componentRefs = [{ name: RELEASE, namespace: releaseNs, chart: RELEASE, version: "0.1.0", source: "https://charts.example" }]
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: cm, namespace: ns, labels: { "operator.aicr.run/role": "content" } },
      data: {
        "recipe.json": JSON.stringify({ componentRefs, deploymentOrder: [RELEASE] }),
        "values.json": JSON.stringify({
          apiVersion: "operator.aicr.run/v1alpha1",
          kind: "Bundle",
          deployer: "helm",
          files: { [`${RELEASE}/values.yaml`]: "message: watched\nvalidators: 4\n" },
        }),
      },
    },
  ])
  const at = { observedGeneration: (await get(RUNTIME)).metadata.generation, lastTransitionTime: new Date().toISOString(), message: "" }
  await applyStatusAs(info, "aicr-resolver", {
    conditions: [{ type: "Resolved", status: "True", reason: "InputsResolved", ...at }],
    resolution: { inputDigest: input, contentConfigMap: cm, aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" } },
  })
  await applyStatusAs(info, "aicr-registry-mirror", {
    conditions: [{ type: "Mirrored", status: "True", reason: "ContentMirrored", ...at }],
    mirror: {
      inputDigest: input,
      bundle: `${prefix()}/bundles/cluster:input-1@${sha256(input)}`,
      charts: [{ release: RELEASE, ref: `${chart.ref}@${chart.digest}` }],
    },
  })
}

/** The approver's approval, and `Approved` as the approval-guard reports it. */
const approve = async (name: string) => {
  const r = await get(`${ROLLOUTS}/${name}`)
  const now = Date.now()
  const approval = {
    approvedBy: "approver",
    groups: ["aicr-approvers"],
    reason: "planner watch int test",
    approvedAt: iso(now),
    expiresAt: iso(Math.min(now + 3_600_000, Date.parse(r.spec.deadline))),
    toDigest: r.spec.toDigest,
  }
  expectOk(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, body: { spec: { approval } } }), `approve ${name}`)
  await setApproved(info, name, "True", "ApprovedByUser", "Approved by approver")
}

const nodeReady = async (name: string) => (await get(`/api/v1/nodes/${name}`)).status?.conditions?.find((c: Cond) => c.type === "Ready")?.status
const available = async () => (await get(DEPLOYMENT)).status?.availableReplicas ?? 0
/** The GPU nodes the DaemonSet runs on (the harness's four, or more if an earlier file added some). */
let gpuNodes = 0
/** A Lease time (metav1.MicroTime: six fractional digits). */
const micro = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/u, ".$1000Z")
const holdLease = async (spec: Record<string, unknown>) =>
  expectOk(
    await kubeRequest(info, { method: "PATCH", path: `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`, body: { spec } }),
    `lease of ${NODE}`,
  )
const hardRefresh = () => kubectl("-n", ARGOCD_NAMESPACE, "annotate", "application", RELEASE, "argocd.argoproj.io/refresh=hard", "--overwrite")
/** `kubectl get clusterruntime` as a person runs it: the READY and REASON columns of `cluster`. */
const columns = async () =>
  (await kubectl("get", "clusterruntime"))
    .split("\n")
    .find((l) => l.startsWith("cluster "))
    ?.split(/\s+/u)
    .slice(1, 3)
const readyMessage = () => kubectl("get", "clusterruntime", "cluster", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].message}`)

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "planner-watch-it-"))
  ns = await createNamespace(info, "aicr-watch")
  await removeRuntime(info)
  for (const r of (await eventually(() => get(ROLLOUTS), { what: "RuntimeRollouts served" })).items)
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  registryDir = await mkdtemp(join(tmpdir(), "planner-watch-registry-"))
  registry = await startRegistry({ name: "planner-watch", dir: registryDir })
  port = Number(registry.address.split(":")[1])
  helm = await isolatedHelm("aicr-watch-charts-")
  const [started, executor] = await Promise.all([startArgoCd(info), buildApp("step-executor", join(work, "step-executor")), pushChart(helm)])
  argocd = started
  await addRepositoryCredential(info, { name: "watch-oci", url: `oci://${prefix()}`, template: true, oci: true, plainHttp: true })
  await applyManifests(info, [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: releaseNs } },
    {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "AppProject",
      metadata: { name: "aicr", namespace: ARGOCD_NAMESPACE },
      spec: {
        sourceRepos: [`oci://${prefix()}/charts/*`],
        destinations: [{ server: "https://kubernetes.default.svc", namespace: releaseNs }],
        clusterResourceWhitelist: [{ group: "*", kind: "*" }],
      },
    },
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "admin" } },
      spec: {
        intent: "training",
        platform: "kubeflow",
        criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
        validation: { deployment: "Disabled" },
      },
    },
  ])
  const common = [
    "--kubeconfig",
    info.kubeconfig,
    "--leader-elect=false",
    "--metrics-bind-address=0",
    "--health-probe-bind-address=0",
    "--log-level=warn",
    "--operator-namespace",
    ns,
  ]
  planner = startController(info, plannerApp, ["--operator-namespace", ns, "--stabilization-window", "0s", "--not-ready-grace", "3s"])
  procs.push(
    await spawnProc({
      name: "step-executor",
      bin: process.execPath,
      args: [executor.entry, ...common, "--step-timeout", "120s", "--sync-retries", "1"],
      logDir: join(info.dir, "logs", "watch"),
    }),
  )
}, 300_000)

afterAll(async () => {
  // The node's kubelet back, whatever happened above.
  await kubeRequest(info, {
    method: "PATCH",
    path: `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`,
    body: { spec: { renewTime: micro(Date.now() - 7_200_000), leaseDurationSeconds: 40 } },
  })
  await planner?.stop()
  await Promise.all(procs.map((p) => p.stop()))
  await kubeRequest(info, { method: "DELETE", path: `${APPS}/${RELEASE}` })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: `${APPS}/${RELEASE}` })).status === 404, {
    what: "the Application pruned",
    timeoutMs: 60_000,
  }).catch(() => undefined)
  await argocd?.stop()
  await registry?.stop()
  await helm?.cleanup()
  await removeRuntime(info)
  for (const r of (await get(ROLLOUTS)).items) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${releaseNs}` })
  await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${ARGOCD_NAMESPACE}/secrets/watch-oci` })
  await rm(registryDir, { recursive: true, force: true })
  await rm(work, { recursive: true, force: true })
})

describe("planner: after the rollout, the stack is still watched (real Argo CD, kwok nodes, registry)", () => {
  it("rolls the release out with one approval: its DaemonSet on every GPU node and a validator on four, Ready=True", async () => {
    await publish()
    const install = await eventually(async () => (await get(ROLLOUTS)).items.find((r: { spec: { kind: string } }) => r.spec.kind === "Install"), {
      what: "the Install rollout",
      timeoutMs: 30_000,
    })
    await approve(install.metadata.name)
    await eventually(async () => (await get(`${ROLLOUTS}/${install.metadata.name}`)).metadata.labels?.[LABEL_OUTCOME] === "Succeeded", {
      what: "the Install rollout Succeeded",
      timeoutMs: 180_000,
      intervalMs: 500,
    })
    expect(await eventually(async () => ((await ready())?.status === "True" ? ready() : undefined), { what: "Ready=True" })).toMatchObject({
      reason: "ValidationDisabled",
    })
    gpuNodes = (await get(DAEMONSET)).status.desiredNumberScheduled
    expect(gpuNodes).toBeGreaterThanOrEqual(VALIDATORS)
    expect((await get(DAEMONSET)).status.numberAvailable).toBe(gpuNodes)
    expect(await available()).toBe(VALIDATORS)
    const pods = (await get(`/api/v1/namespaces/${releaseNs}/pods?labelSelector=app.kubernetes.io%2Fname%3D${RELEASE}-validator`)).items
    NODE = pods.map((p: { spec: { nodeName: string } }) => p.spec.nodeName).sort()[0]
    expect(await columns()).toEqual(["True", "ValidationDisabled"])
  }, 240_000)

  it("a GPU node's kubelet goes silent → Ready=False/NotReady naming the release and Argo CD's message for its workload; the node back → cleared", async () => {
    // The node's kubelet stops: its Lease is held by another holder that never renews it. kwok, which plays the
    // kubelets, then treats the node as not its own (no heartbeats, no stages), and the node lifecycle controller marks
    // it Unknown after its grace period (50 s) and its pods not ready.
    const now = Date.now()
    await holdLease({ holderIdentity: "silent-kubelet", renewTime: micro(now), leaseDurationSeconds: 3600 })
    await eventually(async () => (await nodeReady(NODE)) === "Unknown", {
      what: `${NODE} Unknown (kubelet stopped posting)`,
      timeoutMs: 120_000,
      intervalMs: 1_000,
    })
    await eventually(async () => (await available()) === VALIDATORS - 1, { what: "the validators down by one", timeoutMs: 60_000 })
    // The DaemonSet alone would not show it: the DaemonSet controller stops counting a node it cannot schedule onto
    // (the unreachable taint), so its pod there drops out of the desired count and Argo CD keeps the DaemonSet Healthy
    // (seen on this control plane). What shows is the Deployment with a replica on the node.
    const down = await eventually(
      async () => {
        const c = await ready()
        return c?.reason === "NotReady" && c
      },
      { what: "Ready=False/NotReady", timeoutMs: 90_000 },
    ).catch(async (e: unknown) => {
      const app = await get(`${APPS}/${RELEASE}`)
      throw new Error(
        `${String(e)}; Ready ${JSON.stringify(await ready())}; Application health ${JSON.stringify(app.status?.health)} sync ${JSON.stringify(app.status?.sync?.status)} resources ${JSON.stringify(app.status?.resources)}`,
      )
    })
    expect(down.status).toBe("False")
    // Argo CD's word for the Application. Argo CD 3.4 keeps the resources' health (`Waiting for rollout to finish: 3 of
    // 4 updated replicas are available`) off the Application unless its controller runs with --persist-resource-health.
    expect(down.message).toMatch(new RegExp(`: release ${RELEASE} at 0\\.1\\.0@sha256:${chart.digest.slice(7, 19)}: health Progressing$`, "u"))
    expect(await columns()).toEqual(["False", "NotReady"])
    expect(await readyMessage()).toBe(down.message)

    // The kubelet back: its Lease expired, kwok takes it again and marks the node Ready.
    await holdLease({ holderIdentity: "silent-kubelet", renewTime: micro(Date.now() - 7_200_000), leaseDurationSeconds: 40 })
    await eventually(async () => (await nodeReady(NODE)) === "True", { what: `${NODE} Ready again`, timeoutMs: 60_000, intervalMs: 1_000 })
    // The returning kubelet reports its pod ready again (kwok's stages only make Pending pods ready).
    const pods = (await get(`/api/v1/namespaces/${releaseNs}/pods?fieldSelector=spec.nodeName%3D${NODE}`)).items
    expect(pods).toHaveLength(2) // the DaemonSet's and the validator
    for (const p of pods) {
      const at = new Date().toISOString()
      const conditions = ["Ready", "ContainersReady"].map((type) => ({ type, status: "True", lastTransitionTime: at }))
      expectOk(
        await kubeRequest(info, {
          method: "PATCH",
          path: `/api/v1/namespaces/${releaseNs}/pods/${p.metadata.name}/status`,
          body: { status: { conditions } },
          contentType: "application/strategic-merge-patch+json",
        }),
        "pod ready again",
      )
    }
    await eventually(async () => (await available()) === VALIDATORS, { what: "every validator available again", timeoutMs: 60_000 })
    const back = await eventually(async () => ((await ready())?.status === "True" ? ready() : undefined), { what: "Ready=True again", timeoutMs: 90_000 })
    expect(back).toMatchObject({ reason: "ValidationDisabled" })
    expect(await columns()).toEqual(["True", "ValidationDisabled"])
  }, 300_000)

  it("the registry stops answering while Argo CD must read the chart again → Argo CD's ComparisonError in Ready; the registry back → cleared", async () => {
    await registry!.stop()
    await hardRefresh()
    const down = await eventually(
      async () => {
        const c = await ready()
        return c?.reason === "NotReady" && c
      },
      { what: "Ready=False/NotReady for the registry outage", timeoutMs: 90_000 },
    )
    expect(down.message).toContain(`release ${RELEASE} at 0.1.0@sha256:${chart.digest.slice(7, 19)}`)
    expect(down.message).toContain("ComparisonError: ")
    expect(down.message).toContain(`127.0.0.1:${port}`)
    expect(await columns()).toEqual(["False", "NotReady"])

    registry = await startRegistry({ name: "planner-watch", dir: registryDir, port })
    await hardRefresh()
    const back = await eventually(async () => ((await ready())?.status === "True" ? ready() : undefined), {
      what: "Ready=True after the registry came back",
      timeoutMs: 90_000,
    })
    expect(back).toMatchObject({ reason: "ValidationDisabled" })
    expect(await columns()).toEqual(["True", "ValidationDisabled"])
  }, 240_000)
})
