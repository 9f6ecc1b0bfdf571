// The step-executor (runApp: informers, work queue, driver, SSA) on the real kube-apiserver with a real Argo CD v3.4.2
// syncing real charts (pushed with the real helm into the runtime registry) onto kwok nodes. The test plays the planner
// (plans, rollouts with their steps, outcome labels) and the approval-guard (Approved), so what is measured is the
// executor: a 3-release chain advances only once each release is ready at the revision just written, a restart
// mid-rollout repeats no write, suspendEngine freezes and resumes Argo CD, a revocation lets the step in flight finish,
// a failing release fails the rollout with Argo CD's message, and removals run in reverse order until pruned.
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { ANNOTATION_EDITED_BY, type Plan, type RolloutStep } from "@aicr/api"
import { ANNOTATION_CHART_DIGEST, type Application, isReadyAt } from "@aicr/argocd"
import { parseConfig, runApp } from "@aicr/runtime"
import {
  applyManifests, ARGOCD_NAMESPACE, type ArgoCd, eventually, expectOk, type HarnessInfo, type IsolatedHelm, isolatedHelm, kubeRequest, readAuditEvents, startArgoCd, createNamespace,
} from "@aicr/testing/harness"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { stepExecutorApp } from "../src/app"
import { APPS, type Chart, closeRollout, createRollout, get, installProject, pushChart, type Recorded, ROLLOUTS, RUNTIME, setApproved, startRecorder, writePlan } from "./support/world"

const info: HarnessInfo = inject("harness")
let ns: string
let uid: string
let helm: IsolatedHelm
let argocd: ArgoCd | undefined
let fiber: Fiber.Fiber<never, unknown> | undefined
let recorder: ReturnType<typeof startRecorder>
const charts: Record<string, Chart> = {}
const suffix = Math.random().toString(36).slice(2, 6)
const target = (release: string) => `exec-${release}-${suffix}`
const RELEASES = ["demo-a", "demo-b", "demo-c"] as const
let plans: Record<string, Plan> = {}

const startExecutor = () => {
  const config = parseConfig("step-executor", ["--kubeconfig", info.kubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=warn", "--operator-namespace", ns, "--step-timeout", "90s", "--sync-retries", "1"], {})
  fiber = Effect.runFork(runApp(stepExecutorApp, config))
}
const stopExecutor = async () => {
  if (fiber) await Effect.runPromise(Fiber.interrupt(fiber))
  fiber = undefined
}

interface Cond { type: string; status: string; reason: string; message: string }
const progressing = async (name: string): Promise<Cond | undefined> => (await get(info, `${ROLLOUTS}/${name}`)).status?.conditions?.find((c: Cond) => c.type === "Progressing")
const waitProgressing = (name: string, status: string, reason: string, timeoutMs = 100_000) =>
  eventually(async () => {
    const c = await progressing(name)
    return c?.status === status && c.reason === reason && c
  }, { timeoutMs, intervalMs: 100, what: `rollout ${name} Progressing=${status}/${reason}` })
const app = async (name: string): Promise<Application | undefined> => {
  const res = await kubeRequest(info, { method: "GET", path: `${APPS}/${name}` })
  return res.status === 404 ? undefined : expectOk(res, `GET Application ${name}`)
}
const steps = (action: RolloutStep["action"], releases: ReadonlyArray<string>, extra: Partial<RolloutStep> = {}): RolloutStep[] =>
  releases.map((release) => ({ release, namespace: target(release), action, ...extra }))
const releasesAt = (version: string) => RELEASES.map((r) => ({ chart: charts[`${r}@${version}`]!, namespace: target(r) }))
/** Applies of one Application by the executor (its user agent), from the audit log: each is one write. */
const writesOf = (name: string) =>
  readAuditEvents(info, { verb: "patch", resource: "applications", namespace: ARGOCD_NAMESPACE, name }).filter((e) => (e as unknown as { userAgent?: string }).userAgent?.startsWith("aicr-step-executor") && e.requestURI.includes("force="))
const firstWithDigest = (name: string, digest: string): Recorded | undefined => recorder.apps(name).find((e) => e.object.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === digest)
const lastBefore = (events: Recorded[], seq: number): Recorded | undefined => events.filter((e) => e.seq < seq).at(-1)

beforeAll(async () => {
  ns = await createNamespace(info, "aicr-exec")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  for (const r of (await eventually(() => get(info, ROLLOUTS), { what: "RuntimeRollouts served" })).items) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: { intent: "training", platform: "kubeflow", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" }, validation: { deployment: "Disabled" } },
    },
  ])
  uid = (await get(info, RUNTIME)).metadata.uid
  helm = await isolatedHelm("aicr-exec-charts-")
  const [started] = await Promise.all([
    startArgoCd(info),
    (async () => {
      for (const r of RELEASES) for (const v of ["0.1.0", "0.2.0", "0.3.0"]) charts[`${r}@${v}`] = await pushChart(info, helm, r, v)
      charts["demo-bad@0.1.0"] = await pushChart(info, helm, "demo-bad", "0.1.0", await badChart(helm))
    })(),
  ])
  argocd = started
  await installProject(info, [...RELEASES, "demo-bad"].map(target))
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
  for (const name of [...RELEASES, "demo-bad"]) await kubeRequest(info, { method: "DELETE", path: `${APPS}/${name}` })
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

describe("step-executor on real Argo CD", () => {
  it("installs a 3-release chain one release at a time, each after the previous is ready at its revision", async () => {
    await createRollout(info, { name: "exec-1", runtimeUID: uid, to: plans.v1!, steps: steps("Install", RELEASES) })
    await waitProgressing("exec-1", "True", "StepsCompleted")
    const r = await get(info, `${ROLLOUTS}/exec-1`)
    expect(r.status.steps).toMatchObject({ total: 3, done: 3 })
    expect(r.status.steps.items.map((s: { state: string }) => s.state)).toEqual(["Ready", "Ready", "Ready"])
    for (const name of RELEASES) {
      const a = (await app(name))!
      expect(a.metadata.labels).toMatchObject({ "operator.aicr.run/runtime-uid": uid, "operator.aicr.run/release": name })
      expect(a.spec!.project).toBe("aicr")
      expect(a.spec!.source).toMatchObject({ chart: name, targetRevision: "0.1.0", helm: { valuesObject: { message: `${name}-0.1.0` } } })
      expect(a.metadata.annotations![ANNOTATION_CHART_DIGEST]).toBe(charts[`${name}@0.1.0`]!.digest)
      expect(isReadyAt(a, "0.1.0")).toBe(true)
    }
    // Each Application appeared only after the previous one was ready at 0.1.0 (in the watch's order).
    for (const [prev, next] of [["demo-a", "demo-b"], ["demo-b", "demo-c"]] as const) {
      const first = recorder.apps(next)[0]!
      expect(isReadyAt(lastBefore(recorder.apps(prev), first.seq)!.object, "0.1.0")).toBe(true)
    }
    const rt = await get(info, RUNTIME)
    expect(rt.status.engine).toMatchObject({ namespace: "argocd", project: "aicr", applications: 3, suspended: 0 })
    expect(rt.status.conditions.find((c: Cond) => c.type === "EngineAvailable")).toMatchObject({ status: "True", reason: "EngineReady" })
    await closeRollout(info, "exec-1", "Succeeded")
  })

  it("upgrades the chain advancing only at the new revision (stale Healthy ignored), and a restart mid-rollout repeats no write", async () => {
    const before = Object.fromEntries(RELEASES.map((n) => [n, writesOf(n).length]))
    await createRollout(info, { name: "exec-2", runtimeUID: uid, from: plans.v1!, to: plans.v2!, steps: steps("Upgrade", RELEASES, { from: "0.1.0", to: "0.2.0", verdict: "safe" }) })
    // Crash the executor right after the first write, and bring it back.
    await eventually(async () => (await app("demo-a"))?.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === charts["demo-a@0.2.0"]!.digest, { intervalMs: 20, what: "demo-a written at 0.2.0" })
    await stopExecutor()
    startExecutor()
    await waitProgressing("exec-2", "True", "StepsCompleted")
    for (const name of RELEASES) {
      expect(isReadyAt((await app(name))!, "0.2.0")).toBe(true)
      expect(writesOf(name).length - before[name]!).toBe(1)
    }
    for (const [prev, next] of [["demo-a", "demo-b"], ["demo-b", "demo-c"]] as const) {
      const written = firstWithDigest(next, charts[`${next}@0.2.0`]!.digest)!
      const prevState = lastBefore(recorder.apps(prev), written.seq)!.object
      expect(isReadyAt(prevState, "0.2.0")).toBe(true)
      // The previous release's Deployment had rolled out the new chart before the next Application was written.
      const dep = lastBefore(recorder.events.filter((e) => e.kind === "Deployment" && e.object.metadata.namespace === target(prev)), written.seq)!.object
      expect(dep.spec.template.metadata.labels["chart-version"]).toBe("0.2.0")
      expect(dep.status).toMatchObject({ observedGeneration: dep.metadata.generation, updatedReplicas: dep.spec.replicas, readyReplicas: dep.spec.replicas })
    }
    // The trap was there: after its write demo-a was Healthy at the old revision for a while, which a health-only
    // predicate would have taken for ready.
    const aWritten = firstWithDigest("demo-a", charts["demo-a@0.2.0"]!.digest)!
    const stale = recorder.apps("demo-a").filter((e) => e.seq >= aWritten.seq && e.object.status?.health?.status === "Healthy" && !isReadyAt(e.object, "0.2.0"))
    expect(stale.length).toBeGreaterThan(0)
    await closeRollout(info, "exec-2", "Succeeded")
  })

  it("suspendEngine stops syncing and self-heal on every Application, deletes nothing; clearing it repairs the drift", async () => {
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { suspendEngine: true } } }), "suspend")
    await eventually(async () => {
      const apps = await Promise.all(RELEASES.map(app))
      return apps.every((a) => a?.spec?.syncPolicy?.automated?.enabled === false && a.spec.syncPolicy.automated.selfHeal === true)
    }, { timeoutMs: 10_000, intervalMs: 50, what: "every Application suspended" })
    await eventually(async () => (await get(info, RUNTIME)).status?.engine?.suspended === 3, { what: "status.engine.suspended = 3" })
    const deployment = `/apis/apps/v1/namespaces/${target("demo-a")}/deployments/demo-a`
    expectOk(await kubeRequest(info, { method: "DELETE", path: deployment }), "drift: delete demo-a's Deployment")
    await new Promise((r) => setTimeout(r, 5_000))
    expect((await kubeRequest(info, { method: "GET", path: deployment })).status).toBe(404)
    expect((await Promise.all(RELEASES.map(app))).every((a) => a !== undefined)).toBe(true)
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { suspendEngine: null } } }), "resume")
    await eventually(async () => (await kubeRequest(info, { method: "GET", path: deployment })).status === 200, { timeoutMs: 60_000, what: "Argo CD repaired the drift" })
    await eventually(async () => (await app("demo-a")) !== undefined && isReadyAt((await app("demo-a"))!, "0.2.0"), { timeoutMs: 60_000, what: "demo-a ready again" })
    for (const a of await Promise.all(RELEASES.map(app))) expect(a!.spec!.syncPolicy!.automated!.enabled).toBeUndefined()
    expect((await get(info, RUNTIME)).status.engine.suspended).toBe(0)
  })

  it("a revocation mid-rollout lets the step in flight finish and starts nothing new", async () => {
    await createRollout(info, { name: "exec-3", runtimeUID: uid, from: plans.v2!, to: plans.v3!, steps: steps("Upgrade", RELEASES, { from: "0.2.0", to: "0.3.0", verdict: "safe" }) })
    await eventually(async () => (await app("demo-a"))?.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === charts["demo-a@0.3.0"]!.digest, { intervalMs: 10, what: "demo-a written at 0.3.0" })
    const now = new Date().toISOString().replace(/\.\d+Z$/u, "Z")
    expectOk(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/exec-3`, body: { spec: { revocation: { revokedBy: "bob", reason: "int test revokes", revokedAt: now } } } }), "revoke")
    await setApproved(info, "exec-3", "False", "RolloutRevoked", "Revoked by bob: int test revokes")
    const c = await waitProgressing("exec-3", "False", "RolloutRevoked")
    expect(c.message).toContain("2/3 demo-b (Upgrade)")
    expect(isReadyAt((await app("demo-a"))!, "0.3.0")).toBe(true)
    expect((await app("demo-b"))!.metadata.annotations![ANNOTATION_CHART_DIGEST]).toBe(charts["demo-b@0.2.0"]!.digest)
    expect((await app("demo-c"))!.metadata.annotations![ANNOTATION_CHART_DIGEST]).toBe(charts["demo-c@0.2.0"]!.digest)
    await closeRollout(info, "exec-3", "Revoked")
  })

  it("a release Argo CD cannot sync fails the rollout with Argo CD's message; nothing after it starts", async () => {
    const bad = { chart: charts["demo-bad@0.1.0"]!, namespace: target("demo-bad") }
    const mixed = [releasesAt("0.3.0")[0]!, ...releasesAt("0.2.0").slice(1)]
    const plan = await writePlan(info, ns, uid, [...mixed.slice(0, 1), bad, ...releasesAt("0.3.0").slice(1)])
    plans.bad = plan
    await createRollout(info, { name: "exec-4", runtimeUID: uid, from: plans.v2!, to: plan, steps: [...steps("Install", ["demo-bad"]), ...steps("Upgrade", ["demo-b", "demo-c"], { verdict: "safe" })] })
    const c = await waitProgressing("exec-4", "False", "RolloutFailed")
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
    await createRollout(info, { name: "exec-5", runtimeUID: uid, from: plans.bad!, to: empty, steps: order.map((release) => ({ release, namespace: target(release), action: "Remove" as const })) })
    await waitProgressing("exec-5", "True", "StepsCompleted")
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
})
