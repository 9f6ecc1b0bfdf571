// Two rollout stalls the step-executor finds in the live Applications, reached on the real kube-apiserver with a real
// Argo CD v3.4.2 syncing real charts (pushed with the real helm into the runtime registry) onto kwok nodes. The planner
// (runApp) and the step-executor (its shipped bundle, as a process) run; the test plays the resolver and the
// registry-mirror (their rooms) and the approval-guard (Approved), as planner stalled.int does. An Application with the
// first release's name that this operator did not create is ForeignObject on the rollout's Progressing and the runtime's
// Stalled, and is never changed; once it is gone, the first release is written and ready, the second written (it never
// becomes ready: no node matches its Deployment), and the first release's Application edited by hand (moved to another
// namespace with kubectl) is InventoryDrift on both, naming the step; nothing is written over the edit.
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { ANNOTATION_EDITED_BY, contentConfigMapName, inputDigest as inputDigestOf, LABEL_RUNTIME_UID } from "@aicr/api"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  type ArgoCd,
  createNamespace,
  eventually,
  expectCondition,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  type Proc,
  readAuditEvents,
  spawnProc,
  startArgoCd,
  untilCondition,
} from "@aicr/testing/harness"
import {
  APPS,
  type Chart,
  get,
  installProject,
  pushChart,
  removeRuntime,
  ROLLOUTS,
  RUNTIME,
  setApproved,
  applyStatusAs,
  startController,
} from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { plannerApp } from "../src/app"

const run = promisify(execFile)
const info: HarnessInfo = inject("harness")
const VERSION = "v0.11.1"
const suffix = Math.random().toString(36).slice(2, 6)
/** The first release: ready once synced. A foreign Application takes its name first; later its own is edited by hand. */
const FIRST = `stalls-a-${suffix}`
/** The second release: its Deployment fits no node, so it is written but never ready and the rollout stays open. */
const SECOND = `stalls-b-${suffix}`
/** Where the hand edit moves the first release's Application (not a destination of the AppProject). */
const ELSEWHERE = `stalls-elsewhere-${suffix}`
let ns: string
let work: string
let helm: IsolatedHelm | undefined
let argocd: ArgoCd | undefined
let planner: { readonly stop: () => Promise<void> } | undefined
let executor: Proc | undefined
const charts: Record<string, Chart> = {}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rollouts = async (): Promise<any[]> => (await get(info, ROLLOUTS)).items
const rollout = async (name: string) => get(info, `${ROLLOUTS}/${name}`)
const runtime = async () => get(info, RUNTIME)
const application = async (name: string) => {
  const res = await kubeRequest(info, { method: "GET", path: `${APPS}/${name}` })
  return res.status === 404 ? undefined : expectOk(res, `GET Application ${name}`)
}
const env = () => ({ PATH: [dirname(info.bin.kubectl!), "/usr/bin", "/bin"].join(":"), KUBECONFIG: info.kubeconfig, HOME: work })
/** The real kubectl, as a user runs it (the admin's kubeconfig). */
const kubectl = async (...args: string[]) => (await run(info.bin.kubectl!, args, { env: env() })).stdout
/** Writes (not status reads) of one Application by an operator controller, from the audit log, up to `until`. */
const operatorWritesOf = (name: string, until: string) =>
  readAuditEvents(info, { resource: "applications", namespace: ARGOCD_NAMESPACE, name }).filter(
    (e) => ["create", "update", "patch", "delete"].includes(e.verb) && (e.userAgent ?? "").startsWith("aicr-") && e.stageTimestamp <= until,
  )

/** A chart whose Deployment no node can take (Argo CD reports it Progressing for as long as the test runs). */
const unschedulableChart = async (h: IsolatedHelm, name: string): Promise<string> => {
  const dir = join(h.work, "charts-src", name)
  await mkdir(join(dir, "templates"), { recursive: true })
  await writeFile(join(dir, "Chart.yaml"), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\ntype: application\n`)
  await writeFile(
    join(dir, "templates", "deployment.yaml"),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 1
  progressDeadlineSeconds: 3600
  selector: {matchLabels: {app.kubernetes.io/instance: ${name}}}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: ${name}}
    spec:
      nodeSelector: {stalls-no-such-node-${suffix}: "true"}
      containers: [{name: app, image: "registry.example/demo:1.1.0"}]
`,
  )
  await h.helm("package", dir, "-d", join(h.work, "pkgs"))
  return join(h.work, "pkgs", `${name}-0.1.0.tgz`)
}

/** Publishes the two-release resolution as the resolver and the registry-mirror would (their rooms). */
const publish = async () => {
  const ref = (r: string) => ({ name: r, namespace: r, chart: r, version: "0.1.0", source: "https://charts.example" })
  const recipe = {
    componentRefs: [
      { ...ref(FIRST), dependencyRefs: [] },
      { ...ref(SECOND), dependencyRefs: [FIRST] },
    ],
    deploymentOrder: [FIRST, SECOND],
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
        "values.json": JSON.stringify({
          kind: "Bundle",
          deployer: "helm",
          files: { [`${FIRST}/values.yaml`]: `message: ${FIRST}\n`, [`${SECOND}/values.yaml`]: `message: ${SECOND}\n` },
        }),
      },
    },
  ])
  const generation = (await runtime()).metadata.generation
  const at = { observedGeneration: generation, lastTransitionTime: new Date().toISOString(), message: "" }
  await applyStatusAs(info, "aicr-resolver", {
    conditions: [{ type: "Resolved", status: "True", reason: "InputsResolved", ...at }],
    resolution: { inputDigest: input, contentConfigMap: cm, aicr: { version: VERSION, image: `ghcr.io/nvidia/aicr:${VERSION}` }, releases: 2 },
  })
  await applyStatusAs(info, "aicr-registry-mirror", {
    conditions: [{ type: "Mirrored", status: "True", reason: "ContentMirrored", ...at }],
    mirror: { inputDigest: input, charts: [FIRST, SECOND].map((r) => ({ release: r, ref: `${charts[r]!.ref}@${charts[r]!.digest}` })) },
  })
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "rollout-stalls-"))
  ns = await createNamespace(info, "aicr-rollout-stalls")
  await removeRuntime(info)
  for (const r of await eventually(() => rollouts(), { what: "RuntimeRollouts served" }))
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  helm = await isolatedHelm("rollout-stalls-charts-")
  const h = helm
  const [started] = await Promise.all([
    startArgoCd(info),
    (async () => {
      charts[FIRST] = await pushChart(info, h, FIRST, "0.1.0")
      charts[SECOND] = await pushChart(info, h, SECOND, "0.1.0", await unschedulableChart(h, SECOND))
    })(),
  ])
  argocd = started
  // The chart's install: the AppProject (destinations FIRST and SECOND only) and the two component namespaces.
  await installProject(info, [FIRST, SECOND])
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: { intent: "training", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" }, validation: { deployment: "Disabled" } },
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
  planner = startController(info, plannerApp, ["--operator-namespace", ns, "--stabilization-window", "1s"])
  const bundle = await buildApp("step-executor", join(work, "step-executor"))
  executor = await spawnProc({
    name: "step-executor",
    bin: process.execPath,
    args: [bundle.entry, ...common, "--step-timeout", "15m"],
    logDir: join(info.dir, "logs", "rollout-stalls"),
  })
}, 300_000)

afterAll(async () => {
  await planner?.stop()
  await executor?.stop()
  await removeRuntime(info)
  for (const r of await rollouts()) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  for (const name of [FIRST, SECOND]) {
    if ((await application(name)) !== undefined)
      await kubeRequest(info, {
        method: "PATCH",
        path: `${APPS}/${name}`,
        body: { metadata: { finalizers: null } },
        contentType: "application/merge-patch+json",
      })
    await kubeRequest(info, { method: "DELETE", path: `${APPS}/${name}` })
  }
  await argocd?.stop()
  await helm?.cleanup()
  for (const name of [FIRST, SECOND]) await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${name}` })
  await rm(work, { recursive: true, force: true })
})

describe("rollout stalls found in the live Applications, on real Argo CD", () => {
  let name: string
  let foreignSpec: unknown

  it("an Application with the first release's name that the operator did not create: ForeignObject on Progressing and Stalled, naming it; never changed", async () => {
    // Someone else's Application, there before the rollout reaches the step.
    await applyManifests(info, [
      {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: FIRST, namespace: ARGOCD_NAMESPACE, labels: { team: "platform" } },
        spec: {
          project: "default",
          source: { repoURL: "https://charts.example.com", chart: FIRST, targetRevision: "1.0.0" },
          destination: { server: "https://kubernetes.default.svc", namespace: FIRST },
        },
      },
    ])
    const planted = (await application(FIRST))!
    foreignSpec = planted.spec
    await publish()
    const r = await eventually(async () => (await rollouts()).find((x) => x.spec.toDigest !== undefined), { what: "the Install rollout", timeoutMs: 60_000 })
    name = r.metadata.name
    expect(r.spec.steps.map((s: { release: string; action: string }) => [s.release, s.action])).toEqual([
      [FIRST, "Install"],
      [SECOND, "Install"],
    ])
    const now = new Date()
    const approval = {
      approvedBy: "bob",
      reason: "rollout-stalls int test",
      approvedAt: now.toISOString(),
      expiresAt: new Date(Math.min(now.getTime() + 3_600_000, Date.parse(r.spec.deadline))).toISOString(),
      toDigest: r.spec.toDigest,
    }
    expectOk(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, body: { spec: { approval } } }), "approve")
    await setApproved(info, name, "True", "ApprovedByUser", "Approved by bob")

    const progressing = await untilCondition(() => rollout(name), "Progressing", "False", "ForeignObject")
    expect(progressing.message).toBe(
      `step 1/2 ${FIRST} (Install): Application ${ARGOCD_NAMESPACE}/${FIRST} was not created by this operator; it is never adopted or changed`,
    )
    const stalled = await untilCondition(runtime, "Stalled", "True", "ForeignObject")
    expect(stalled.message).toBe(`rollout ${name} ${progressing.message}`)
    // Ready's message follows the same stall (the planner's next pass after the executor's rollout write may come a
    // moment after Stalled's).
    const ready = await eventually(
      async () => {
        const c = expectCondition(await runtime(), "Ready", "False", "RollingOut")
        return c.message === `rollout ${name} stalled: ForeignObject: ${progressing.message}` ? c : undefined
      },
      { timeoutMs: 60_000, what: "Ready naming the ForeignObject stall" },
    ).catch(async (e: unknown) => {
      throw new Error(`${String(e)}; Ready: ${JSON.stringify(expectCondition(await runtime(), "Ready", "False", "RollingOut"))}`)
    })
    expect(ready.message).toBe(`rollout ${name} stalled: ForeignObject: ${progressing.message}`)

    // A few more passes (a runtime touch wakes both controllers): still untouched, nothing written for either release.
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { annotations: { "rollout-stalls/touch": "1" } } } }), "touch")
    await new Promise((res) => setTimeout(res, 3_000))
    const after = (await application(FIRST))!
    expect(after.spec).toEqual(foreignSpec)
    expect(after.metadata.labels).toEqual({ team: "platform" })
    expect(after.metadata.annotations).toEqual(planted.metadata.annotations)
    // (Its generation moves: the Application CRD has no status subresource, so Argo CD's status writes bump it.)
    expect(await application(SECOND)).toBeUndefined()
    expect(operatorWritesOf(FIRST, new Date().toISOString())).toEqual([])
    expectCondition(await rollout(name), "Progressing", "False", "ForeignObject")
  }, 180_000)

  it("the foreign Application gone: the first release is written and ready, the second written, and Stalled clears", async () => {
    await kubectl("-n", ARGOCD_NAMESPACE, "delete", "application", FIRST, "--wait=true")
    const second = await eventually(async () => application(SECOND), { what: `Application ${SECOND} written`, timeoutMs: 150_000 })
    const uid = (await runtime()).metadata.uid
    for (const a of [(await application(FIRST))!, second]) expect(a.metadata.labels[LABEL_RUNTIME_UID]).toBe(uid)
    // The audit filter that found no operator write of the foreign Application finds the step-executor's own.
    const written = operatorWritesOf(FIRST, new Date().toISOString())
    expect(written.length).toBeGreaterThan(0)
    expect(written.every((e) => e.userAgent!.startsWith("aicr-step-executor"))).toBe(true)
    await untilCondition(runtime, "Stalled", "False", "NotStalled")
    const steps = (await rollout(name)).status.steps.items.map((s: { state: string }) => s.state)
    expect(steps).toEqual(["Ready", "WaitingForReady"])
  }, 180_000)

  it("the first release's Application moved by hand with kubectl while the second is in flight: InventoryDrift on Progressing and Stalled, naming the step; nothing rewrites it", async () => {
    const before = new Date().toISOString()
    await kubectl(
      "-n",
      ARGOCD_NAMESPACE,
      "patch",
      "application",
      FIRST,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { destination: { namespace: ELSEWHERE } } }),
    )
    const progressing = await untilCondition(() => rollout(name), "Progressing", "False", "InventoryDrift")
    expect(progressing.message).toBe(
      `step 1/2 ${FIRST} (Install): its Application no longer carries the revision written, yet a later step was written; the Application was changed by hand`,
    )
    const stalled = await untilCondition(runtime, "Stalled", "True", "InventoryDrift")
    expect(stalled.message).toBe(`rollout ${name} ${progressing.message}`)
    // Ready's message follows the same stall (the planner's next pass after the executor's rollout write may come a
    // moment after Stalled's).
    const ready = await eventually(
      async () => {
        const c = expectCondition(await runtime(), "Ready", "False", "RollingOut")
        return c.message === `rollout ${name} stalled: InventoryDrift: ${progressing.message}` ? c : undefined
      },
      { timeoutMs: 60_000, what: "Ready naming the InventoryDrift stall" },
    ).catch(async (e: unknown) => {
      throw new Error(`${String(e)}; Ready: ${JSON.stringify(expectCondition(await runtime(), "Ready", "False", "RollingOut"))}`)
    })
    expect(ready.message).toBe(`rollout ${name} stalled: InventoryDrift: ${progressing.message}`)
    // The edit stands: the executor writes over neither Application, and the rollout stays open.
    await new Promise((res) => setTimeout(res, 3_000))
    expect((await application(FIRST))!.spec.destination.namespace).toBe(ELSEWHERE)
    const writes = readAuditEvents(info, { resource: "applications", namespace: ARGOCD_NAMESPACE }).filter(
      (e) =>
        ["create", "update", "patch", "delete"].includes(e.verb) &&
        e.objectRef?.subresource === undefined &&
        (e.userAgent ?? "").startsWith("aicr-") &&
        e.stageTimestamp >= before &&
        [FIRST, SECOND].includes(e.objectRef?.name ?? ""),
    )
    expect(writes).toEqual([])
    expectCondition(await rollout(name), "Progressing", "False", "InventoryDrift")
  }, 180_000)
})
