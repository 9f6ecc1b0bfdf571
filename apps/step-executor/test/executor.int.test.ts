// The step-executor (runApp: informers, work queue, driver, SSA) on the real kube-apiserver with a real Argo CD v3.4.2
// syncing real charts (pushed with the real helm into the runtime registry) onto kwok nodes. The test plays the planner
// (plans, rollouts with their steps, outcome labels) and the approval-guard (Approved), so what is measured is the
// executor: a 3-release chain advances only once each release is ready at the revision just written, a restart
// mid-rollout repeats no write, suspendEngine freezes and resumes Argo CD, a revocation lets the step in flight finish,
// a failing release fails the rollout with Argo CD's message, removals run in reverse order until pruned, a Move rewrites
// the Application with its new namespace (ready only there; Argo CD prunes the old one), and suspendEngine reports
// EngineSuspensionRefused while an admission policy refuses the patch or a sync operation is still running. A release
// whose namespace the chart did not create is NamespaceMissing until the message's command creates it (Argo CD creates
// no namespace), and a step action from a newer build's CRD is StepUnknown; neither writes an Application.
import { execFileSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { ANNOTATION_EDITED_BY, type Plan, type RolloutStep } from "@aicr/api"
import { ANNOTATION_CHART_DIGEST, type Application, isReadyAt } from "@aicr/argocd"
import type { KubeShape } from "@aicr/kube"
import type { RunOptions } from "@aicr/runtime"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  type ArgoCd,
  eventually,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  readAuditEvents,
  startArgoCd,
  createNamespace,
  expectCondition,
  untilCondition,
} from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { stepExecutorApp } from "../src/app"
import {
  APPS,
  type Chart,
  closeRollout,
  createRollout,
  get,
  installProject,
  pushChart,
  type Recorded,
  ROLLOUTS,
  RUNTIME,
  setApproved,
  startRecorder,
  writePlan,
} from "@aicr/testing/world"

const info: HarnessInfo = inject("harness")
let ns: string
let uid: string
let helm: IsolatedHelm
let argocd: ArgoCd | undefined
let executor: { readonly stop: () => Promise<void> } | undefined
let recorder: ReturnType<typeof startRecorder>
const charts: Record<string, Chart> = {}
const suffix = Math.random().toString(36).slice(2, 6)
const target = (release: string) => `exec-${release}-${suffix}`
const RELEASES = ["demo-a", "demo-b", "demo-c"] as const
/** Installed by the executor whose Application watch delivers nothing (killed between its write and its cache seeing it). */
const LAGGED = ["demo-k1", "demo-k2"] as const
/** The release whose namespace the chart has not created (NamespaceMissing), and the Pod Security level it names. */
const UNCREATED = "demo-n"
const UNCREATED_LEVEL = "baseline"
/** Where the Move test moves demo-m to. */
const MOVED_TO = `exec-demo-m-moved-${suffix}`
/** The node label that lets demo-slow's Deployment (and so its sync operation, waiting on it in wave 0) finish. */
const GATE_LABEL = `exec-gate-${suffix}`
const GATE_NODE = "kwok-system-0"
/** A ValidatingAdmissionPolicy (and binding) that refuses turning automated sync off on demo-m, as a change freeze would. */
const FREEZE = `exec-freeze-${suffix}`
let plans: Record<string, Plan> = {}

const startExecutor = (options: RunOptions = {}) => {
  executor = startController(
    info,
    stepExecutorApp,
    ["--operator-namespace", ns, "--step-timeout", "90s", "--sync-retries", "1", "--component-pod-security", `${target(UNCREATED)}=${UNCREATED_LEVEL}`],
    options,
  )
}
const stopExecutor = async () => {
  await executor?.stop()
  executor = undefined
}

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
const progressing = async (name: string): Promise<Cond | undefined> =>
  (await get(info, `${ROLLOUTS}/${name}`)).status?.conditions?.find((c: Cond) => c.type === "Progressing")
const app = async (name: string): Promise<Application | undefined> => {
  const res = await kubeRequest(info, { method: "GET", path: `${APPS}/${name}` })
  return res.status === 404 ? undefined : expectOk(res, `GET Application ${name}`)
}
const steps = (action: RolloutStep["action"], releases: ReadonlyArray<string>, extra: Partial<RolloutStep> = {}): RolloutStep[] =>
  releases.map((release) => ({ release, namespace: target(release), action, ...extra }))
const releasesAt = (version: string) => RELEASES.map((r) => ({ chart: charts[`${r}@${version}`]!, namespace: target(r) }))
/** The executor's (its user agent) creates and applies of one Application, from the audit log, by answer. */
const attemptsOf = (name: string) =>
  readAuditEvents(info, { resource: "applications", namespace: ARGOCD_NAMESPACE, name }).filter(
    (e) =>
      (e as unknown as { userAgent?: string }).userAgent?.startsWith("aicr-step-executor") &&
      (e.verb === "create" || (e.verb === "patch" && e.requestURI.includes("force="))),
  )
/** Writes of one Application the API server took: each is one write. */
const writesOf = (name: string) => attemptsOf(name).filter((e) => (e.responseStatus?.code ?? 0) < 300)
/** Writes of one Application the API server refused as decided on a view that had moved (AlreadyExists, Conflict). */
const refusedOf = (name: string) => attemptsOf(name).filter((e) => e.responseStatus?.code === 409)
const firstWithDigest = (name: string, digest: string): Recorded | undefined =>
  recorder.apps(name).find((e) => e.object.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === digest)
/** The revision the executor writes for a release's chart: its manifest digest (pinned, never the tag). */
const at = (release: string, version: string): string => charts[`${release}@${version}`]!.digest
const lastBefore = (events: Recorded[], seq: number): Recorded | undefined => events.filter((e) => e.seq < seq).at(-1)

beforeAll(async () => {
  ns = await createNamespace(info, "aicr-exec")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  for (const r of (await eventually(() => get(info, ROLLOUTS), { what: "RuntimeRollouts served" })).items)
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: {
        intent: "training",
        platform: "kubeflow",
        criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
        validation: { deployment: "Disabled" },
      },
    },
  ])
  uid = (await get(info, RUNTIME)).metadata.uid
  helm = await isolatedHelm("aicr-exec-charts-")
  const [started] = await Promise.all([
    startArgoCd(info),
    (async () => {
      for (const r of RELEASES) for (const v of ["0.1.0", "0.2.0", "0.3.0"]) charts[`${r}@${v}`] = await pushChart(info, helm, r, v)
      charts["demo-bad@0.1.0"] = await pushChart(info, helm, "demo-bad", "0.1.0", await badChart(helm))
      charts["demo-m@0.1.0"] = await pushChart(info, helm, "demo-m", "0.1.0")
      charts["demo-slow@0.1.0"] = await pushChart(info, helm, "demo-slow", "0.1.0", await gatedChart(helm))
      for (const r of LAGGED) charts[`${r}@0.1.0`] = await pushChart(info, helm, r, "0.1.0")
      charts[`${UNCREATED}@0.1.0`] = await pushChart(info, helm, UNCREATED, "0.1.0")
    })(),
  ])
  argocd = started
  // The chart's install: the AppProject and the component namespaces, all but UNCREATED's.
  await installProject(info, [...[...RELEASES, "demo-bad", "demo-m", "demo-slow", ...LAGGED, UNCREATED].map(target), MOVED_TO], [target(UNCREATED)])
  recorder = startRecorder(info)
  await recorder.ready
  plans = {
    v1: await writePlan(info, ns, uid, releasesAt("0.1.0")),
    v2: await writePlan(info, ns, uid, releasesAt("0.2.0")),
    v3: await writePlan(info, ns, uid, releasesAt("0.3.0")),
  }
  startExecutor()
}, 300_000)

afterAll(async () => {
  await stopExecutor()
  if (recorder) {
    mkdirSync(join(info.dir, "recordings"), { recursive: true })
    recorder.save(join(info.dir, "recordings", "step-executor.jsonl"))
    await recorder.stop()
  }
  for (const name of [...RELEASES, "demo-bad", "demo-m", "demo-slow", ...LAGGED, UNCREATED])
    await kubeRequest(info, { method: "DELETE", path: `${APPS}/${name}` })
  await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${FREEZE}` })
  await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${FREEZE}` })
  await kubeRequest(info, { method: "PATCH", path: `/api/v1/nodes/${GATE_NODE}`, body: { metadata: { labels: { [GATE_LABEL]: null } } } })
  await argocd?.stop()
  await helm?.cleanup()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  for (const r of (await get(info, ROLLOUTS)).items) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
})

/** A chart Argo CD renders but cannot apply: a ConfigMap whose name the API server refuses. */
const badChart = async (h: IsolatedHelm): Promise<string> => {
  const { mkdir, writeFile } = await import("node:fs/promises")
  const dir = join(h.work, "charts-src", "demo-bad")
  await mkdir(join(dir, "templates"), { recursive: true })
  await writeFile(join(dir, "Chart.yaml"), "apiVersion: v2\nname: demo-bad\nversion: 0.1.0\ntype: application\n")
  await writeFile(join(dir, "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\ndata: {a: b}\n")
  await h.helm("package", dir, "-d", join(h.work, "pkgs"))
  return join(h.work, "pkgs", "demo-bad-0.1.0.tgz")
}

/**
 * A chart whose sync operation stays Running until the test lets it finish: wave 0 is a Deployment that can only be
 * scheduled on a node carrying GATE_LABEL (Argo CD waits for it to be healthy before wave 1), wave 1 a ConfigMap.
 */
const gatedChart = async (h: IsolatedHelm): Promise<string> => {
  const { mkdir, writeFile } = await import("node:fs/promises")
  const dir = join(h.work, "charts-src", "demo-slow")
  await mkdir(join(dir, "templates"), { recursive: true })
  await writeFile(join(dir, "Chart.yaml"), "apiVersion: v2\nname: demo-slow\nversion: 0.1.0\ntype: application\n")
  await writeFile(
    join(dir, "templates", "deployment.yaml"),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-slow
  annotations: {argocd.argoproj.io/sync-wave: "0"}
spec:
  replicas: 1
  progressDeadlineSeconds: 3600
  selector: {matchLabels: {app.kubernetes.io/instance: demo-slow}}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: demo-slow, chart-version: "0.1.0"}
    spec:
      nodeSelector: {eks.amazonaws.com/nodegroup: system, ${GATE_LABEL}: open}
      containers: [{name: app, image: "registry.example/demo:1.1.0"}]
`,
  )
  await writeFile(
    join(dir, "templates", "cm.yaml"),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-slow-after\n  annotations: {argocd.argoproj.io/sync-wave: "1"}\ndata: {a: b}\n',
  )
  await h.helm("package", dir, "-d", join(h.work, "pkgs"))
  return join(h.work, "pkgs", "demo-slow-0.1.0.tgz")
}

const engine = async () => (await get(info, RUNTIME)).status?.engine as { applications?: number; suspended?: number; suspensionRefused?: string } | undefined
const setSuspended = async (on: boolean) =>
  expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { suspendEngine: on ? true : null } } }), on ? "suspend" : "resume")

describe("step-executor on real Argo CD", () => {
  it("installs a 3-release chain one release at a time, each after the previous is ready at its revision", async () => {
    await createRollout(info, { name: "exec-1", runtimeUID: uid, to: plans.v1!, steps: steps("Install", RELEASES) })
    await untilCondition(() => progressing("exec-1"), "Progressing", "True", "StepsCompleted", { timeoutMs: 100_000, intervalMs: 100 })
    const r = await get(info, `${ROLLOUTS}/exec-1`)
    expect(r.status.steps).toMatchObject({ total: 3, done: 3 })
    expect(r.status.steps.items.map((s: { state: string }) => s.state)).toEqual(["Ready", "Ready", "Ready"])
    for (const name of RELEASES) {
      const a = (await app(name))!
      expect(a.metadata.labels).toMatchObject({ "operator.aicr.run/runtime-uid": uid, "operator.aicr.run/release": name })
      expect(a.spec!.project).toBe("aicr")
      expect(a.spec!.source).toEqual({
        repoURL: `oci://${charts[`${name}@0.1.0`]!.ref.replace(/:[^:/]+$/u, "")}`,
        path: ".",
        targetRevision: at(name, "0.1.0"),
        helm: { releaseName: name, valuesObject: { message: `${name}-0.1.0` } },
      })
      expect(a.status!.sync!.revision).toBe(at(name, "0.1.0"))
      expect(a.metadata.annotations![ANNOTATION_CHART_DIGEST]).toBe(charts[`${name}@0.1.0`]!.digest)
      expect(isReadyAt(a, at(name, "0.1.0"))).toBe(true)
    }
    // Each Application appeared only after the previous one was ready at 0.1.0 (in the watch's order).
    for (const [prev, next] of [
      ["demo-a", "demo-b"],
      ["demo-b", "demo-c"],
    ] as const) {
      const first = recorder.apps(next)[0]!
      expect(isReadyAt(lastBefore(recorder.apps(prev), first.seq)!.object, at(prev, "0.1.0"))).toBe(true)
    }
    // The Application count is informational: the executor paces its rewrites (at most one per 10 s per object).
    const rt = await eventually(
      async () => {
        const r = await get(info, RUNTIME)
        return r.status.engine?.applications === 3 && r
      },
      { timeoutMs: 30_000, intervalMs: 250, what: "status.engine.applications 3 (paced)" },
    )
    expect(rt.status.engine).toMatchObject({ namespace: "argocd", project: "aicr", applications: 3, suspended: 0 })
    expectCondition(
      rt.status.conditions.find((c: Cond) => c.type === "EngineAvailable"),
      "EngineAvailable",
      "True",
      "EngineReady",
    )
    await closeRollout(info, "exec-1", "Succeeded")
  })

  it("upgrades the chain advancing only at the new revision (stale Healthy ignored), and a restart mid-rollout repeats no write", async () => {
    const before = Object.fromEntries(RELEASES.map((n) => [n, writesOf(n).length]))
    await createRollout(info, {
      name: "exec-2",
      runtimeUID: uid,
      from: plans.v1!,
      to: plans.v2!,
      steps: steps("Upgrade", RELEASES, { from: "0.1.0", to: "0.2.0", verdict: "safe" }),
    })
    // Crash the executor right after the first write, and bring it back.
    await eventually(async () => (await app("demo-a"))?.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === charts["demo-a@0.2.0"]!.digest, {
      intervalMs: 20,
      what: "demo-a written at 0.2.0",
    })
    await stopExecutor()
    startExecutor()
    await untilCondition(() => progressing("exec-2"), "Progressing", "True", "StepsCompleted", { timeoutMs: 100_000, intervalMs: 100 })
    for (const name of RELEASES) {
      expect(isReadyAt((await app(name))!, at(name, "0.2.0"))).toBe(true)
      expect(writesOf(name).length - before[name]!).toBe(1)
    }
    for (const [prev, next] of [
      ["demo-a", "demo-b"],
      ["demo-b", "demo-c"],
    ] as const) {
      const written = firstWithDigest(next, charts[`${next}@0.2.0`]!.digest)!
      const prevState = lastBefore(recorder.apps(prev), written.seq)!.object
      expect(isReadyAt(prevState, at(prev, "0.2.0"))).toBe(true)
      // The previous release's Deployment had rolled out the new chart before the next Application was written.
      const dep = lastBefore(
        recorder.events.filter((e) => e.kind === "Deployment" && e.object.metadata.namespace === target(prev)),
        written.seq,
      )!.object
      expect(dep.spec.template.metadata.labels["chart-version"]).toBe("0.2.0")
      expect(dep.status).toMatchObject({ observedGeneration: dep.metadata.generation, updatedReplicas: dep.spec.replicas, readyReplicas: dep.spec.replicas })
    }
    // The trap was there: after its write demo-a was Healthy at the old revision for a while, which a health-only
    // predicate would have taken for ready.
    const aWritten = firstWithDigest("demo-a", charts["demo-a@0.2.0"]!.digest)!
    const stale = recorder
      .apps("demo-a")
      .filter((e) => e.seq >= aWritten.seq && e.object.status?.health?.status === "Healthy" && !isReadyAt(e.object, at("demo-a", "0.2.0")))
    expect(stale.length).toBeGreaterThan(0)
    await closeRollout(info, "exec-2", "Succeeded")
  })

  it("suspendEngine stops syncing and self-heal on every Application, deletes nothing; clearing it repairs the drift", async () => {
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { suspendEngine: true } } }), "suspend")
    await eventually(
      async () => {
        const apps = await Promise.all(RELEASES.map(app))
        return apps.every((a) => a?.spec?.syncPolicy?.automated?.enabled === false && a.spec.syncPolicy.automated.selfHeal === true)
      },
      { timeoutMs: 10_000, intervalMs: 50, what: "every Application suspended" },
    )
    await eventually(async () => (await get(info, RUNTIME)).status?.engine?.suspended === 3, { what: "status.engine.suspended = 3" })
    const deployment = `/apis/apps/v1/namespaces/${target("demo-a")}/deployments/demo-a`
    expectOk(await kubeRequest(info, { method: "DELETE", path: deployment }), "drift: delete demo-a's Deployment")
    await new Promise((r) => setTimeout(r, 5_000))
    expect((await kubeRequest(info, { method: "GET", path: deployment })).status).toBe(404)
    expect((await Promise.all(RELEASES.map(app))).every((a) => a !== undefined)).toBe(true)
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { suspendEngine: null } } }), "resume")
    await eventually(async () => (await kubeRequest(info, { method: "GET", path: deployment })).status === 200, {
      timeoutMs: 60_000,
      what: "Argo CD repaired the drift",
    })
    await eventually(async () => (await app("demo-a")) !== undefined && isReadyAt((await app("demo-a"))!, at("demo-a", "0.2.0")), {
      timeoutMs: 60_000,
      what: "demo-a ready again",
    })
    for (const a of await Promise.all(RELEASES.map(app))) expect(a!.spec!.syncPolicy!.automated!.enabled).toBeUndefined()
    expect((await get(info, RUNTIME)).status.engine.suspended).toBe(0)
  })

  it("a revocation mid-rollout lets the step in flight finish and starts nothing new", async () => {
    await createRollout(info, {
      name: "exec-3",
      runtimeUID: uid,
      from: plans.v2!,
      to: plans.v3!,
      steps: steps("Upgrade", RELEASES, { from: "0.2.0", to: "0.3.0", verdict: "safe" }),
    })
    await eventually(async () => (await app("demo-a"))?.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === charts["demo-a@0.3.0"]!.digest, {
      intervalMs: 10,
      what: "demo-a written at 0.3.0",
    })
    const now = new Date().toISOString().replace(/\.\d+Z$/u, "Z")
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `${ROLLOUTS}/exec-3`,
        body: { spec: { revocation: { revokedBy: "bob", reason: "int test revokes", revokedAt: now } } },
      }),
      "revoke",
    )
    await setApproved(info, "exec-3", "False", "RolloutRevoked", "Revoked by bob: int test revokes")
    const c = await untilCondition(() => progressing("exec-3"), "Progressing", "False", "RolloutRevoked", { timeoutMs: 100_000, intervalMs: 100 })
    expect(c.message).toContain("2/3 demo-b (Upgrade)")
    expect(isReadyAt((await app("demo-a"))!, at("demo-a", "0.3.0"))).toBe(true)
    expect((await app("demo-b"))!.metadata.annotations![ANNOTATION_CHART_DIGEST]).toBe(charts["demo-b@0.2.0"]!.digest)
    expect((await app("demo-c"))!.metadata.annotations![ANNOTATION_CHART_DIGEST]).toBe(charts["demo-c@0.2.0"]!.digest)
    await closeRollout(info, "exec-3", "Revoked")
  })

  it("a release Argo CD cannot sync fails the rollout with Argo CD's message; nothing after it starts", async () => {
    const bad = { chart: charts["demo-bad@0.1.0"]!, namespace: target("demo-bad") }
    const mixed = [releasesAt("0.3.0")[0]!, ...releasesAt("0.2.0").slice(1)]
    const plan = await writePlan(info, ns, uid, [...mixed.slice(0, 1), bad, ...releasesAt("0.3.0").slice(1)])
    plans.bad = plan
    await createRollout(info, {
      name: "exec-4",
      runtimeUID: uid,
      from: plans.v2!,
      to: plan,
      steps: [...steps("Install", ["demo-bad"]), ...steps("Upgrade", ["demo-b", "demo-c"], { verdict: "safe" })],
    })
    const c = await untilCondition(() => progressing("exec-4"), "Progressing", "False", "RolloutFailed", { timeoutMs: 100_000, intervalMs: 100 })
    const argoMessage = (await app("demo-bad"))!.status!.operationState!.message!
    expect(argoMessage.length).toBeGreaterThan(0)
    expect(c.message).toContain("1/3 demo-bad (Install) failed")
    // Argo CD's message verbatim (conditions drop a trailing period).
    expect(c.message).toContain(argoMessage.replace(/\.$/u, ""))
    const r = await get(info, `${ROLLOUTS}/exec-4`)
    expect(r.status.steps.items[0]).toMatchObject({ state: "Failed", release: "demo-bad" })
    expect((await app("demo-b"))!.metadata.annotations![ANNOTATION_CHART_DIGEST]).toBe(charts["demo-b@0.2.0"]!.digest)
    await closeRollout(info, "exec-4", "Failed")
  })

  it("removes releases in reverse order, each Application deleted with its resources before the next", async () => {
    const empty = await writePlan(info, ns, uid, [])
    const order = ["demo-bad", "demo-c", "demo-b", "demo-a"]
    await createRollout(info, {
      name: "exec-5",
      runtimeUID: uid,
      from: plans.bad!,
      to: empty,
      steps: order.map((release) => ({ release, namespace: target(release), action: "Remove" as const })),
    })
    await untilCondition(() => progressing("exec-5"), "Progressing", "True", "StepsCompleted", { timeoutMs: 100_000, intervalMs: 100 })
    for (const name of order) expect(await app(name)).toBeUndefined()
    const deleted = order.map((n) => recorder.apps(n).find((e) => e.type === "DELETED")!)
    const deleting = order.map((n) => recorder.apps(n).find((e) => e.object.metadata.deletionTimestamp !== undefined)!)
    for (let i = 1; i < order.length; i++) expect(deleting[i]!.seq).toBeGreaterThan(deleted[i - 1]!.seq)
    for (const name of ["demo-c", "demo-b", "demo-a"]) {
      const res = await kubeRequest(info, { method: "GET", path: `/apis/apps/v1/namespaces/${target(name)}/deployments/${name}` })
      expect(res.status).toBe(404)
    }
    await closeRollout(info, "exec-5", "Succeeded")
  })

  it("a Move rewrites the Application with the new namespace, is ready only there, and Argo CD prunes the old namespace", async () => {
    const from = target("demo-m")
    const installed = await writePlan(info, ns, uid, [{ chart: charts["demo-m@0.1.0"]!, namespace: from }])
    await createRollout(info, { name: "exec-6", runtimeUID: uid, to: installed, steps: steps("Install", ["demo-m"]) })
    await untilCondition(() => progressing("exec-6"), "Progressing", "True", "StepsCompleted", { timeoutMs: 100_000, intervalMs: 100 })
    await closeRollout(info, "exec-6", "Succeeded")
    const oldDeployment = `/apis/apps/v1/namespaces/${from}/deployments/demo-m`
    expect((await kubeRequest(info, { method: "GET", path: oldDeployment })).status).toBe(200)
    const moved = await writePlan(info, ns, uid, [{ chart: charts["demo-m@0.1.0"]!, namespace: MOVED_TO }])
    const mark = recorder.events.length
    await createRollout(info, {
      name: "exec-7",
      runtimeUID: uid,
      from: installed,
      to: moved,
      steps: [{ release: "demo-m", namespace: MOVED_TO, action: "Move", from: "0.1.0", to: "0.1.0" }],
    })
    await untilCondition(() => progressing("exec-7"), "Progressing", "True", "StepsCompleted", { timeoutMs: 100_000, intervalMs: 100 })
    const a = (await app("demo-m"))!
    expect(a.spec!.destination).toEqual({ server: "https://kubernetes.default.svc", namespace: MOVED_TO })
    expect(a.status!.sync!.comparedTo!.destination).toEqual({ server: "https://kubernetes.default.svc", namespace: MOVED_TO })
    expect(isReadyAt(a, at("demo-m", "0.1.0"))).toBe(true)
    // Ready was first seen only after the new namespace's Deployment had rolled out.
    const after = recorder.apps("demo-m").filter((e) => e.seq >= recorder.events[mark]!.seq && e.object.spec?.destination?.namespace === MOVED_TO)
    const firstReady = after.find((e) => isReadyAt(e.object, at("demo-m", "0.1.0")))!
    const dep = lastBefore(
      recorder.events.filter((e) => e.kind === "Deployment" && e.object.metadata.namespace === MOVED_TO),
      firstReady.seq,
    )!.object
    expect(dep.status).toMatchObject({ observedGeneration: dep.metadata.generation, readyReplicas: 1, updatedReplicas: 1 })
    // The trap a Move sets (measured): right after the write, Argo CD still shows Synced and Healthy as compared in the
    // old namespace; a predicate that ignores the destination counts those events as ready.
    const staleOld = after.filter(
      (e) =>
        e.object.status?.sync?.comparedTo?.destination?.namespace === from &&
        e.object.status?.sync?.status === "Synced" &&
        e.object.status?.health?.status === "Healthy",
    )
    process.stdout.write(
      `[step-executor int] Move: ${staleOld.length} Application events after the write were Synced+Healthy as compared in the old namespace\n`,
    )
    // Argo CD prunes what the release left in the old namespace (automated prune; the resources carry its tracking id).
    await eventually(async () => (await kubeRequest(info, { method: "GET", path: oldDeployment })).status === 404, {
      timeoutMs: 60_000,
      what: "old namespace's Deployment pruned",
    })
    expect((await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${from}/configmaps/demo-m-settings` })).status).toBe(404)
    // The old namespace is the chart's, not a managed resource of the Application: it stays.
    expect((await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${from}` })).status).toBe(200)
    expect(writesOf("demo-m")).toHaveLength(2)
    await closeRollout(info, "exec-7", "Succeeded")
  })

  it("a Move whose Application is not at its old location is MovedReleaseMissing and writes nothing", async () => {
    const plan = await writePlan(info, ns, uid, [
      { chart: charts["demo-m@0.1.0"]!, namespace: MOVED_TO },
      { chart: charts["demo-a@0.1.0"]!, namespace: MOVED_TO },
    ])
    await createRollout(info, {
      name: "exec-8",
      runtimeUID: uid,
      to: plan,
      steps: [{ release: "demo-a", namespace: MOVED_TO, action: "Move", from: "0.1.0", to: "0.1.0" }],
    })
    const c = await untilCondition(() => progressing("exec-8"), "Progressing", "False", "MovedReleaseMissing", { timeoutMs: 100_000, intervalMs: 100 })
    expect(c.message).toContain("Application argocd/demo-a is not at its old location (it does not exist)")
    expect(await app("demo-a")).toBeUndefined()
    await closeRollout(info, "exec-8", "Failed")
  })

  it("EngineSuspensionRefused while an admission policy refuses the suspension patch; it clears once the patch goes through", async () => {
    await applyManifests(info, [
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicy",
        metadata: { name: FREEZE },
        spec: {
          failurePolicy: "Fail",
          matchConstraints: { resourceRules: [{ apiGroups: ["argoproj.io"], apiVersions: ["*"], operations: ["UPDATE"], resources: ["applications"] }] },
          validations: [
            {
              expression:
                "!has(object.spec.syncPolicy) || !has(object.spec.syncPolicy.automated) || !has(object.spec.syncPolicy.automated.enabled) || object.spec.syncPolicy.automated.enabled",
              message: "change freeze: automated sync may not be turned off",
              reason: "Forbidden",
            },
          ],
        },
      },
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicyBinding",
        metadata: { name: FREEZE },
        spec: {
          policyName: FREEZE,
          validationActions: ["Deny"],
          matchResources: { objectSelector: { matchLabels: { "operator.aicr.run/release": "demo-m" } } },
        },
      },
    ])
    // The policy is in force once a dry run of the same patch is refused.
    await eventually(
      async () =>
        (await kubeRequest(info, { method: "PATCH", path: `${APPS}/demo-m?dryRun=All`, body: { spec: { syncPolicy: { automated: { enabled: false } } } } }))
          .status === 403,
      { timeoutMs: 30_000, what: "the freeze policy refuses the patch" },
    )
    await setSuspended(true)
    const refused = await eventually(async () => (await engine())?.suspensionRefused, { timeoutMs: 30_000, what: "status.engine.suspensionRefused" })
    expect(refused).toContain("argocd/demo-m: the API server refused the suspension patch (Forbidden)")
    expect(refused).toContain("change freeze: automated sync may not be turned off")
    expect(await engine()).toMatchObject({ applications: 1, suspended: 0 })
    expect((await app("demo-m"))!.spec!.syncPolicy!.automated!.enabled).toBeUndefined()
    expectOk(
      await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${FREEZE}` }),
      "lift the freeze",
    )
    // No watch sees the policy go: the executor's retry (10 s) does.
    await eventually(async () => (await engine())?.suspensionRefused === undefined, { timeoutMs: 60_000, what: "the refusal cleared" })
    expect(await engine()).toMatchObject({ applications: 1, suspended: 1 })
    expect((await app("demo-m"))!.spec!.syncPolicy!.automated!.enabled).toBe(false)
    await setSuspended(false)
    await eventually(async () => (await app("demo-m"))!.spec!.syncPolicy!.automated!.enabled === undefined, { what: "demo-m resumed" })
  })

  it("EngineSuspensionRefused while a sync operation runs (Argo CD finishes it, later waves included); it clears once the operation ended", async () => {
    const plan = await writePlan(info, ns, uid, [
      { chart: charts["demo-m@0.1.0"]!, namespace: MOVED_TO },
      { chart: charts["demo-slow@0.1.0"]!, namespace: target("demo-slow") },
    ])
    await createRollout(info, { name: "exec-9", runtimeUID: uid, to: plan, steps: steps("Install", ["demo-slow"]) })
    // Wave 0's Deployment cannot be scheduled yet: the operation stays Running, waiting for it to be healthy.
    await eventually(async () => (await app("demo-slow"))?.status?.operationState?.phase === "Running", { timeoutMs: 60_000, what: "demo-slow's sync Running" })
    await setSuspended(true)
    const c = await untilCondition(() => progressing("exec-9"), "Progressing", "False", "EngineSuspensionRefused", { timeoutMs: 30_000, intervalMs: 100 })
    expect(c.message).toContain("argocd/demo-slow: a sync operation is running")
    expect((await app("demo-slow"))!.spec!.syncPolicy!.automated!.enabled).toBe(false)
    // The runtime's status is written right after the rollout's.
    expect(await eventually(async () => (await engine())?.suspensionRefused, { what: "status.engine.suspensionRefused" })).toContain(
      "Argo CD finishes it before automated sync stays off",
    )
    const afterWave0 = `/api/v1/namespaces/${target("demo-slow")}/configmaps/demo-slow-after`
    expect((await kubeRequest(info, { method: "GET", path: afterWave0 })).status).toBe(404)
    // Let wave 0 become healthy: Argo CD goes on with the operation although automated sync is off, and finishes it.
    expectOk(
      await kubeRequest(info, { method: "PATCH", path: `/api/v1/nodes/${GATE_NODE}`, body: { metadata: { labels: { [GATE_LABEL]: "open" } } } }),
      "open the gate",
    )
    // The operation ends and the step is ready at its revision (a step in flight finishes even while suspended): the
    // rollout completes, and the suspension now holds everywhere.
    await untilCondition(() => progressing("exec-9"), "Progressing", "True", "StepsCompleted", { timeoutMs: 120_000, intervalMs: 100 })
    await eventually(async () => (await engine())?.suspensionRefused === undefined, { what: "the refusal cleared" })
    const done = (await app("demo-slow"))!
    expect(done.status!.operationState!.phase).toBe("Succeeded")
    // Wave 1 was applied after the suspension was written: the operation in flight went on to its end.
    expect((await kubeRequest(info, { method: "GET", path: afterWave0 })).status).toBe(200)
    expect(await engine()).toMatchObject({ applications: 2, suspended: 2 })
    expect((await engine())!.suspensionRefused).toBeUndefined()
    expect((await app("demo-slow"))!.spec!.syncPolicy!.automated!.enabled).toBe(false)
    await setSuspended(false)
    await eventually(async () => (await app("demo-slow"))!.spec!.syncPolicy!.automated!.enabled === undefined, { what: "demo-slow resumed" })
    await closeRollout(info, "exec-9", "Succeeded")
  }, 300_000)

  it("killed between its Application write and its cache seeing it: neither the stale process nor a successor whose cache predates the write writes it again", async () => {
    // An executor whose Application watch delivers nothing: its cache never sees the Application it writes.
    let held = 0
    const deaf = (kube: KubeShape): KubeShape => ({
      ...kube,
      watch: ((kind, options, onEvent) =>
        kube.watch(kind, options, (e) => (kind.kind === "Application" ? Effect.sync(() => void held++) : onEvent(e as never)))) as KubeShape["watch"],
    })
    await stopExecutor()
    startExecutor({ wrapKube: deaf })
    const plan = await writePlan(
      info,
      ns,
      uid,
      LAGGED.map((r) => ({ chart: charts[`${r}@0.1.0`]!, namespace: target(r) })),
    )
    const beforeWrite: string = (
      expectOk(await kubeRequest(info, { method: "GET", path: APPS }), "list Applications") as { metadata: { resourceVersion: string } }
    ).metadata.resourceVersion
    await createRollout(info, { name: "exec-lag", runtimeUID: uid, to: plan, steps: steps("Install", LAGGED) })
    await eventually(async () => writesOf("demo-k1").length === 1, { intervalMs: 20, what: "demo-k1 written" })
    // Its own status writes and Argo CD's work bring more passes; the cache still shows no demo-k1: none writes again.
    await eventually(async () => held >= 3, { timeoutMs: 30_000, what: "Argo CD's updates of demo-k1 held back" })
    await new Promise((r) => setTimeout(r, 2_000))
    expect(writesOf("demo-k1")).toHaveLength(1)
    expect(writesOf("demo-k2")).toHaveLength(0)
    // Killed now, with the write in the API server and not in its cache. Its successor's Application cache is filled
    // as the API server was before that write (a list at that exact resourceVersion), and its watch holds the events
    // after it: a predecessor's write still in flight lands after its successor listed, the same way. The successor
    // decides to create demo-k1 again; the API server refuses it (AlreadyExists), whatever the timing.
    await stopExecutor()
    let release: () => void = () => {}
    const released = new Promise<void>((r) => (release = r))
    let listedAt: string | undefined
    const stale = (kube: KubeShape): KubeShape => ({
      ...kube,
      list: ((kind, options) => {
        if (kind.kind !== "Application" || listedAt !== undefined) return kube.list(kind, options)
        listedAt = beforeWrite
        return Effect.promise(() => kubeRequest(info, { method: "GET", path: `${APPS}?resourceVersion=${beforeWrite}&resourceVersionMatch=Exact` })).pipe(
          Effect.map((res) => {
            const body = expectOk(res, "list Applications before the write") as { items: Application[]; metadata: { resourceVersion: string } }
            return {
              items: body.items.map((a) => ({ ...a, apiVersion: "argoproj.io/v1alpha1", kind: "Application" })),
              resourceVersion: body.metadata.resourceVersion,
            }
          }),
        )
      }) as KubeShape["list"],
      watch: ((kind, options, onEvent) =>
        kube.watch(kind, options, (e) =>
          kind.kind === "Application" ? Effect.promise(() => released).pipe(Effect.andThen(onEvent(e as never))) : onEvent(e as never),
        )) as KubeShape["watch"],
    })
    startExecutor({ wrapKube: stale })
    await eventually(async () => refusedOf("demo-k1").length >= 1, {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: "the successor's repeated create of demo-k1 refused",
    })
    expect(listedAt).toBe(beforeWrite)
    expect(refusedOf("demo-k1").every((e) => e.verb === "create")).toBe(true)
    expect(writesOf("demo-k1")).toHaveLength(1)
    // The watch delivers the write: the successor sees demo-k1 and goes on.
    release()
    await untilCondition(() => progressing("exec-lag"), "Progressing", "True", "StepsCompleted", { timeoutMs: 120_000, intervalMs: 100 })
    expect(writesOf("demo-k1")).toHaveLength(1)
    expect(writesOf("demo-k2")).toHaveLength(1)
    await closeRollout(info, "exec-lag", "Succeeded")
  }, 180_000)

  it("a release whose namespace does not exist is NamespaceMissing and writes nothing; the message's command creates it and the step runs", async () => {
    const where = target(UNCREATED)
    const plan = await writePlan(info, ns, uid, [{ chart: charts[`${UNCREATED}@0.1.0`]!, namespace: where }])
    await createRollout(info, { name: "exec-n", runtimeUID: uid, to: plan, steps: steps("Install", [UNCREATED]) })
    const c = await untilCondition(() => progressing("exec-n"), "Progressing", "False", "NamespaceMissing", { timeoutMs: 100_000, intervalMs: 100 })
    const labels = ["enforce", "audit", "warn"].map((m) => `pod-security.kubernetes.io/${m}=${UNCREATED_LEVEL}`).join(" ")
    const command = `kubectl create namespace ${where} && kubectl label namespace ${where} ${labels}`
    expect(c.message).toBe(
      `step 1/1 ${UNCREATED} (Install) not started: namespace ${where} does not exist (or is being deleted) and Argo CD does not create namespaces, so no Application is written into it; create it with its Pod Security labels: ${command} (its level in the chart's namespaces.components), or set create: true for it there and upgrade the chart`,
    )
    expect(await app(UNCREATED)).toBeUndefined()
    expect(writesOf(UNCREATED)).toEqual([])
    // The command from the message, run as a person would, with the real kubectl.
    execFileSync("bash", ["-c", command], {
      env: { PATH: [dirname(info.bin.kubectl!), "/usr/bin", "/bin"].join(":"), KUBECONFIG: info.kubeconfig, HOME: info.dir },
      stdio: "pipe",
    })
    await untilCondition(() => progressing("exec-n"), "Progressing", "True", "StepsCompleted", { timeoutMs: 100_000, intervalMs: 100 })
    const created = await get(info, `/api/v1/namespaces/${where}`)
    expect(created.metadata.labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": UNCREATED_LEVEL,
      "pod-security.kubernetes.io/audit": UNCREATED_LEVEL,
      "pod-security.kubernetes.io/warn": UNCREATED_LEVEL,
    })
    expect(isReadyAt((await app(UNCREATED))!, at(UNCREATED, "0.1.0"))).toBe(true)
    expect(writesOf(UNCREATED)).toHaveLength(1)
    await closeRollout(info, "exec-n", "Succeeded")
    // Leave no Application behind: Argo CD prunes the release first.
    await kubeRequest(info, { method: "DELETE", path: `${APPS}/${UNCREATED}` })
    await eventually(async () => (await app(UNCREATED)) === undefined || undefined, { timeoutMs: 120_000, what: `Application ${UNCREATED} gone` })
  })

  it("a step action this build does not know (a newer build's rollout, after a downgrade) is StepUnknown and writes nothing", async () => {
    // A newer build's CRD accepts one more step action; this executor's build does not know it.
    const crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/runtimerollouts.operator.aicr.run"
    const props = "/spec/versions/0/schema/openAPIV3Schema/properties"
    const enums = [
      `${props}/spec/properties/steps/items/properties/action/enum`,
      `${props}/status/properties/steps/properties/items/items/properties/action/enum`,
    ]
    const before = (await get(info, crd)).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.steps.items.properties.action.enum as string[]
    expect(before).toEqual(["Install", "Upgrade", "Remove", "Move", "Adopt"])
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: crd,
        body: enums.map((path) => ({ op: "add", path: `${path}/-`, value: "Replace" })),
        contentType: "application/json-patch+json",
      }),
      "a newer build's CRD",
    )
    try {
      const plan = await writePlan(info, ns, uid, [{ chart: charts["demo-a@0.1.0"]!, namespace: target("demo-a") }])
      const applied = writesOf("demo-a").length
      await eventually(
        async () => {
          try {
            await createRollout(info, {
              name: "exec-u",
              runtimeUID: uid,
              to: plan,
              steps: [{ release: "demo-a", namespace: target("demo-a"), action: "Replace" as RolloutStep["action"] }],
            })
            return true
          } catch {
            return undefined
          }
        },
        { timeoutMs: 30_000, what: "a rollout with the newer action admitted" },
      )
      const c = await untilCondition(() => progressing("exec-u"), "Progressing", "False", "StepUnknown", { timeoutMs: 100_000, intervalMs: 100 })
      expect(c.message).toBe("step 1/1 demo-a (Replace): this step-executor does not know the action Replace")
      expect(writesOf("demo-a")).toHaveLength(applied)
      await closeRollout(info, "exec-u", "Failed")
    } finally {
      const added = before.length
      const restored = await kubeRequest(info, {
        method: "PATCH",
        path: crd,
        body: enums.flatMap((path) => [
          { op: "test", path: `${path}/${added}`, value: "Replace" },
          { op: "remove", path: `${path}/${added}` },
        ]),
        contentType: "application/json-patch+json",
      })
      expectOk(restored, "this build's CRD restored")
    }
  })
})
