// The runtime's Ready and Stalled as a user reads them (`kubectl get clusterruntime cluster -o jsonpath=…`), on the
// real kube-apiserver: the planner (runApp) and the step-executor (its shipped bundle, as a process) run; the test
// plays the resolver and the registry-mirror (their rooms) and the approval-guard (Approved), as planner.int does.
// A paused runtime gets no rollout (Planned=False/Paused, Ready=Paused); unpaused, the rollout is created while the
// step-executor finds no AppProject (its EngineAvailable=False/ProjectMissing: Ready and Stalled ProjectMissing); the
// AppProject created, the rollout awaits approval (Stalled AwaitingApproval); approved, its first step's namespace does
// not exist (the executor's Progressing=False/NamespaceMissing: Stalled NamespaceMissing naming the rollout and the
// step); the namespace created with the message's command, the step is written and Stalled clears.
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { ANNOTATION_EDITED_BY, contentConfigMapName, inputDigest as inputDigestOf, LABEL_RUNTIME_UID, sha256 } from "@aicr/api"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  installArgoCdObjects,
  kubeRequest,
  type Proc,
  spawnProc,
  expectCondition,
  untilCondition,
} from "@aicr/testing/harness"
import { applyStatusAs, removeRuntime, setApproved, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { plannerApp } from "../src/app"

const run = promisify(execFile)
const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const APPS = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications`
const VERSION = "v0.11.1"
const suffix = Math.random().toString(36).slice(2, 6)
/** The AppProject both controllers name; absent until the test creates it (ProjectMissing). */
const PROJECT = `stall-${suffix}`
/** The one release, in a namespace the chart has not created (NamespaceMissing). */
const RELEASE = `stall-demo-${suffix}`
let ns: string
let work: string
let planner: { readonly stop: () => Promise<void> } | undefined
let executor: Proc | undefined

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rollouts = async (): Promise<any[]> => (await get(ROLLOUTS)).items
const patchRuntime = async (body: unknown) => expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body }), "patch the runtime")

/** The real kubectl, as a user runs it (the admin's kubeconfig). */
const kubectl = async (...args: string[]) =>
  (await run(info.bin.kubectl!, args, { env: { PATH: [dirname(info.bin.kubectl!), "/usr/bin", "/bin"].join(":"), KUBECONFIG: info.kubeconfig, HOME: work } }))
    .stdout
/**
 * One condition of the runtime, as `kubectl get clusterruntime cluster -o jsonpath=…` prints its status, reason and
 * message: one read, tab-separated (three reads could straddle a status write and mix two versions).
 */
const condition = async (type: string) => {
  const at = `.status.conditions[?(@.type=="${type}")]`
  const out = await kubectl("get", "clusterruntime", "cluster", "-o", `jsonpath={${at}.status}{"\t"}{${at}.reason}{"\t"}{${at}.message}`)
  const [status = "", reason = "", message = ""] = out.split("\t")
  return { status, reason, message }
}
/** Publishes a one-release resolution as the resolver and the registry-mirror would (their rooms). */
const publish = async () => {
  const recipe = {
    componentRefs: [{ name: RELEASE, namespace: RELEASE, chart: "demo", version: "0.1.0", source: "https://charts.example", dependencyRefs: [] }],
    deploymentOrder: [RELEASE],
  }
  const input = inputDigestOf({ aicr: { version: VERSION, image: `ghcr.io/nvidia/aicr:${VERSION}` }, intent: "training", discovered: { acceleratedNodes: 1 } })
  const cm = contentConfigMapName(input)
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: cm, namespace: ns, labels: { "operator.aicr.run/role": "content" } },
      data: {
        "recipe.json": JSON.stringify(recipe),
        "values.json": JSON.stringify({ kind: "Bundle", deployer: "helm", files: { [`${RELEASE}/values.yaml`]: "replicas: 1\n" } }),
      },
    },
  ])
  const generation = (await get(RUNTIME)).metadata.generation
  const at = { observedGeneration: generation, lastTransitionTime: new Date().toISOString(), message: "" }
  await applyStatusAs(info, "aicr-resolver", {
    conditions: [{ type: "Resolved", status: "True", reason: "InputsResolved", ...at }],
    resolution: { inputDigest: input, contentConfigMap: cm, aicr: { version: VERSION, image: `ghcr.io/nvidia/aicr:${VERSION}` }, releases: 1 },
  })
  const charts = [{ release: RELEASE, ref: `${info.registry}/aicr/cluster/charts/demo:0.1.0@${sha256("demo-0.1.0")}` }]
  await applyStatusAs(info, "aicr-registry-mirror", {
    conditions: [{ type: "Mirrored", status: "True", reason: "ContentMirrored", ...at }],
    mirror: { inputDigest: input, charts },
  })
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "planner-stalled-"))
  ns = await createNamespace(info, "aicr-planner-stalled")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  for (const r of await eventually(() => rollouts(), { what: "RuntimeRollouts served" }))
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  // Argo CD's CRDs and namespace (no Argo CD process: no step here needs a sync), but not the AppProject PROJECT.
  await installArgoCdObjects(info)
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: { intent: "training", paused: true, criteria: { service: "eks", accelerator: "h100", os: "ubuntu" }, validation: { deployment: "Disabled" } },
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
    "--engine-project",
    PROJECT,
  ]
  planner = startController(info, plannerApp, ["--operator-namespace", ns, "--engine-project", PROJECT, "--stabilization-window", "1s"])
  const bundle = await buildApp("step-executor", join(work, "step-executor"))
  executor = await spawnProc({
    name: "step-executor",
    bin: process.execPath,
    args: [bundle.entry, ...common, "--component-pod-security", `${RELEASE}=baseline`],
    logDir: join(info.dir, "logs", "planner-stalled"),
  })
}, 180_000)

afterAll(async () => {
  await planner?.stop()
  await executor?.stop()
  await removeRuntime(info)
  for (const r of await rollouts()) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  for (const a of (await get(APPS)).items)
    if (a.metadata.name === RELEASE)
      await kubeRequest(info, {
        method: "PATCH",
        path: `${APPS}/${RELEASE}`,
        body: { metadata: { finalizers: null } },
        contentType: "application/merge-patch+json",
      })
  await kubeRequest(info, { method: "DELETE", path: `${APPS}/${RELEASE}` })
  await kubeRequest(info, { method: "DELETE", path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/appprojects/${PROJECT}` })
  await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${RELEASE}` })
  await rm(work, { recursive: true, force: true })
})

describe("the runtime's Ready and Stalled, read with kubectl as a user would", () => {
  let name: string

  it("spec.paused: a resolved target starts no rollout; Planned=False/Paused, Ready=False/Paused", async () => {
    await publish()
    const planned = await untilCondition(() => condition("Planned"), "Planned", "False", "Paused")
    expect(planned.message).toMatch(/^spec\.paused is set: target plan \S+ starts no assessment and no rollout until it is cleared$/u)
    expectCondition(await condition("Ready"), "Ready", "False", "Paused")
    // Another pass after the window: still no rollout.
    await patchRuntime({ metadata: { annotations: { "stalled-it/touch": "1" } } })
    await new Promise((r) => setTimeout(r, 3_000))
    expect(await condition("Planned")).toMatchObject({ reason: "Paused" })
    expect(await rollouts()).toEqual([])
  })

  it("unpaused without the AppProject: the rollout is created; the step-executor's ProjectMissing is Ready and Stalled, with its message", async () => {
    await patchRuntime({ spec: { paused: null } })
    // A spec edit is a new generation: the resolver and the mirror report on it again (unchanged inputs).
    await publish()
    const r = await eventually(async () => (await rollouts()).find((x) => x.spec.toDigest !== undefined), { what: "the Install rollout", timeoutMs: 30_000 })
    name = r.metadata.name
    expect(r.spec.runtimeUID).toBe((await get(RUNTIME)).metadata.uid)
    const engine = await untilCondition(() => condition("EngineAvailable"), "EngineAvailable", "False", "ProjectMissing")
    expect(engine.message).toContain(PROJECT)
    const ready = await untilCondition(() => condition("Ready"), "Ready", "False", "ProjectMissing")
    expect(ready).toEqual({ status: "False", reason: "ProjectMissing", message: engine.message })
    expect(await untilCondition(() => condition("Stalled"), "Stalled", "True", "ProjectMissing")).toEqual({
      status: "True",
      reason: "ProjectMissing",
      message: engine.message,
    })
  })

  it("the AppProject created: Stalled AwaitingApproval naming the rollout and the approve command, Ready RollingOut", async () => {
    await applyManifests(info, [
      {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "AppProject",
        metadata: { name: PROJECT, namespace: ARGOCD_NAMESPACE },
        spec: {
          sourceRepos: ["*"],
          destinations: [{ server: "https://kubernetes.default.svc", namespace: RELEASE }],
          clusterResourceWhitelist: [{ group: "*", kind: "*" }],
        },
      },
    ])
    await untilCondition(() => condition("EngineAvailable"), "EngineAvailable", "True", "EngineReady")
    await setApproved(info, name, "False", "AwaitingApproval", "No approval for the target plan yet; approvers: group aicr-approvers")
    const stalled = await untilCondition(() => condition("Stalled"), "Stalled", "True", "AwaitingApproval")
    expect(stalled).toEqual({
      status: "True",
      reason: "AwaitingApproval",
      message: `rollout ${name} awaiting approval (kubectl aicr approve ${name} --reason "…"): No approval for the target plan yet; approvers: group aicr-approvers`,
    })
    expect(await condition("Ready")).toMatchObject({
      status: "False",
      reason: "RollingOut",
      message: expect.stringMatching(new RegExp(`^rollout ${name} awaiting approval`, "u")),
    })
  })

  it("approved, its release namespace missing: the step-executor's NamespaceMissing is Stalled, naming the rollout and the step", async () => {
    const r = await get(`${ROLLOUTS}/${name}`)
    const now = new Date()
    const approval = {
      approvedBy: "bob",
      reason: "stalled int test",
      approvedAt: now.toISOString(),
      expiresAt: new Date(Math.min(now.getTime() + 3_600_000, Date.parse(r.spec.deadline))).toISOString(),
      toDigest: r.spec.toDigest,
    }
    expectOk(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, body: { spec: { approval } } }), "approve")
    await setApproved(info, name, "True", "ApprovedByUser", "Approved by bob")
    const stalled = await untilCondition(() => condition("Stalled"), "Stalled", "True", "NamespaceMissing")
    expect(stalled.message).toMatch(new RegExp(`^rollout ${name} step 1/1 ${RELEASE} \\(Install\\) not started: namespace ${RELEASE} does not exist`, "u"))
    const progressing = (await get(`${ROLLOUTS}/${name}`)).status.conditions.find((c: { type: string }) => c.type === "Progressing")
    expect(stalled.message).toBe(`rollout ${name} ${progressing.message}`)
    expect(await condition("Ready")).toEqual({
      status: "False",
      reason: "RollingOut",
      message: `rollout ${name} stalled: NamespaceMissing: ${progressing.message}`,
    })
    expect(stalled.message).toContain(`kubectl create namespace ${RELEASE} && kubectl label namespace ${RELEASE} pod-security.kubernetes.io/enforce=baseline`)
  })

  it("the namespace created with the message's command: the step is written and Stalled clears", async () => {
    const command = (await condition("Stalled")).message.match(/kubectl create namespace .+? pod-security\.kubernetes\.io\/warn=baseline/u)![0]
    await run("bash", ["-c", command], { env: { PATH: [dirname(info.bin.kubectl!), "/usr/bin", "/bin"].join(":"), KUBECONFIG: info.kubeconfig, HOME: work } })
    await untilCondition(() => condition("Stalled"), "Stalled", "False", "NotStalled")
    const app = await get(`${APPS}/${RELEASE}`)
    expect(app.metadata.labels[LABEL_RUNTIME_UID]).toBe((await get(RUNTIME)).metadata.uid)
    expect(await condition("Ready")).toMatchObject({
      status: "False",
      reason: "RollingOut",
      message: expect.stringContaining(`rollout ${name}: step 1/1 ${RELEASE} (Install)`),
    })
  })
})
