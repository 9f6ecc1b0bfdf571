/**
 * Re-adoption (operator.md §4.15) with the real planner and step-executor (their shipped bundles, each its own
 * process) on the real kube-apiserver, with a real Argo CD v3.4.2 syncing real charts from the runtime registry onto kwok nodes.
 *
 * A 3-release stack is rolled out; then the operator's namespace (every plan and content ConfigMap) and the runtime
 * are lost while the stack keeps running. A new runtime (another UID) sees the Applications as orphans until
 * spec.adoption names the old UID; a hand edit blocks the adoption, naming the Application; once the edit is gone,
 * the plan is rebuilt from the live Applications (the same desiredStateDigest as the lost plan) and an Adopt rollout
 * awaits one approval. After it, every Application belongs to the new runtime, its spec untouched, nothing re-synced.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ANNOTATION_EDITED_BY, LABEL_OUTCOME, planConfigMapName, type RolloutStep } from "@aicr/api"
import { type Application, isReadyAt } from "@aicr/argocd"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  createNamespace,
  deleteApplication,
  eventually,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  type Proc,
  readAuditEvents,
  spawnProc,
  expectCondition,
  untilCondition,
} from "@aicr/testing/harness"
import { APPS, type Chart, createRollout, get, installProject, pushChart, removeRuntime, ROLLOUTS, RUNTIME, setApproved, writePlan } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type AppBuild, buildApp } from "../hack/build-apps"

const info: HarnessInfo = inject("harness")
const suffix = Math.random().toString(36).slice(2, 6)
const RELEASES = ["adopt-a", "adopt-b", "adopt-c"] as const
const target = (release: string) => `${release}-${suffix}`
let ns = ""
let helm: IsolatedHelm
const procs: Record<string, Proc | undefined> = {}
const bundles: Record<string, AppBuild> = {}
const work = mkdtempSync(join(tmpdir(), "aicr-adopt-"))
const charts: Record<string, Chart> = {}

const common = ["--kubeconfig", info.kubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=warn"]
const start = async (name: "planner" | "step-executor") => {
  const flags =
    name === "planner"
      ? [...common, "--operator-namespace", ns, "--engine-namespace", ARGOCD_NAMESPACE, "--stabilization-window", "10m"]
      : [...common, "--operator-namespace", ns, "--step-timeout", "90s", "--sync-retries", "1"]
  procs[name] = await spawnProc({ name, bin: process.execPath, args: [bundles[name]!.entry, ...flags], logDir: join(info.dir, "logs", "re-adoption") })
}
const stop = async (name: string) => {
  const p = procs[name]
  procs[name] = undefined
  await p?.stop()
}

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
const condition = async (path: string, type: string): Promise<Cond | undefined> =>
  (await get(info, path)).status?.conditions?.find((c: Cond) => c.type === type)
const app = async (name: string): Promise<Application> =>
  expectOk(await kubeRequest(info, { method: "GET", path: `${APPS}/${name}` }), `GET Application ${name}`)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rolloutsOf = async (uid: string): Promise<any[]> =>
  (await get(info, ROLLOUTS)).items.filter((r: { spec: { runtimeUID: string } }) => r.spec.runtimeUID === uid)
const createRuntime = async (spec: Record<string, unknown> = {}): Promise<string> => {
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: { intent: "training", validation: { deployment: "Disabled" }, ...spec },
    },
  ])
  return (await get(info, RUNTIME)).metadata.uid
}
// The stuck-finalizer runbook: the finalizer is removed by hand, which leaves the Applications for later adoption.
const deleteRuntime = () => removeRuntime(info)
const approve = async (name: string) => {
  const r = await get(info, `${ROLLOUTS}/${name}`)
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/u, "Z")
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: `${ROLLOUTS}/${name}`,
      body: {
        spec: {
          approval: {
            approvedBy: "bob",
            reason: "take the stack back",
            approvedAt: iso(Date.now()),
            expiresAt: iso(Date.now() + 3_600_000),
            toDigest: r.spec.toDigest,
          },
        },
      },
    }),
    "approve",
  )
  await setApproved(info, name, "True", "ApprovedByUser", "Approved by bob")
}
const editValues = async (name: string, message: string) =>
  expectOk(
    await kubeRequest(info, { method: "PATCH", path: `${APPS}/${name}`, body: { spec: { source: { helm: { valuesObject: { message } } } } } }),
    `edit ${name}`,
  )

beforeAll(async () => {
  await deleteRuntime()
  for (const r of (await eventually(() => get(info, ROLLOUTS), { what: "RuntimeRollouts served" })).items)
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  ns = await createNamespace(info, "aicr-adopt")
  helm = await isolatedHelm("aicr-adopt-charts-")
  // The e2e tier runs one Argo CD for every file (global setup); this file uses it and leaves it running.
  expect(inject("argocd")?.namespace).toBe(ARGOCD_NAMESPACE)
  const [planner, executor] = await Promise.all([
    buildApp("planner", join(work, "planner")),
    buildApp("step-executor", join(work, "step-executor")),
    (async () => {
      for (const r of RELEASES) charts[r] = await pushChart(info, helm, r, "0.1.0")
    })(),
  ])
  bundles.planner = planner
  bundles["step-executor"] = executor
  await installProject(info, RELEASES.map(target))
}, 600_000)

afterAll(async () => {
  await stop("planner")
  await stop("step-executor")
  // Leave the tier's Argo CD as found: no Application (pruned first) and no AppProject of this file.
  for (const name of RELEASES) await deleteApplication(info, name)
  await kubeRequest(info, { method: "DELETE", path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/appprojects/aicr` })
  await helm?.cleanup()
  rmSync(work, { recursive: true, force: true })
  await deleteRuntime()
  for (const r of (await get(info, ROLLOUTS)).items) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
})

describe("re-adoption after the operator's namespace and runtime were lost", () => {
  let oldUid = ""
  let newUid = ""
  let digest = ""
  let before: Record<string, Application> = {}

  it("rolls out a 3-release stack, then loses every plan, the namespace and the runtime; the stack keeps running", async () => {
    oldUid = await createRuntime()
    const plan = await writePlan(
      info,
      ns,
      oldUid,
      RELEASES.map((r, i) => ({ chart: charts[r]!, namespace: target(r), ...(i > 0 ? { dependsOn: [RELEASES[i - 1]!] } : {}) })),
    )
    digest = plan.desiredStateDigest
    const steps: RolloutStep[] = RELEASES.map((release) => ({ release, namespace: target(release), action: "Install" }))
    await start("step-executor")
    await createRollout(info, { name: "adopt-install-1", runtimeUID: oldUid, to: plan, steps })
    await untilCondition(() => condition(`${ROLLOUTS}/adopt-install-1`, "Progressing"), "Progressing", "True", "StepsCompleted", {
      timeoutMs: 120_000,
      intervalMs: 100,
    })
    expectOk(
      await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/adopt-install-1`, body: { metadata: { labels: { [LABEL_OUTCOME]: "Succeeded" } } } }),
      "close",
    )
    await stop("step-executor")
    expectOk(await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${ns}` }), "delete the operator namespace")
    await eventually(async () => (await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}` })).status === 404, {
      timeoutMs: 60_000,
      what: "namespace gone",
    })
    await deleteRuntime()
    for (const r of RELEASES) expect(isReadyAt(await app(r), charts[r]!.digest)).toBe(true)
    before = Object.fromEntries(await Promise.all(RELEASES.map(async (r) => [r, await app(r)] as const)))
  })

  it("a new runtime sees the Applications as orphans: nothing rolls out, and the condition names the UID and the fix", async () => {
    expectOk(
      await kubeRequest(info, { method: "POST", path: "/api/v1/namespaces", body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } } }),
      "recreate the operator namespace",
    )
    newUid = await createRuntime()
    expect(newUid).not.toBe(oldUid)
    await start("planner")
    const planned = await untilCondition(() => condition(RUNTIME, "Planned"), "Planned", "False", "OrphanedObjectsPresent", {
      timeoutMs: 120_000,
      intervalMs: 100,
    })
    expect(planned.message).toContain(`belong to runtime ${oldUid}, not to this runtime ${newUid}`)
    expect(planned.message).toContain(`set spec.adoption.fromRuntimeUID: ${oldUid}`)
    expectCondition(await condition(RUNTIME, "Stalled"), "Stalled", "True", "OrphanedObjectsPresent")
    expect(await rolloutsOf(newUid)).toEqual([])
  })

  it("an Application edited by hand blocks the adoption, naming it; reverting the edit lets the adoption through", async () => {
    await editValues("adopt-b", "edited by hand")
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { adoption: { fromRuntimeUID: oldUid } } } }), "name the old runtime")
    const blocked = await untilCondition(() => condition(RUNTIME, "Planned"), "Planned", "False", "AdoptionBlocked", { timeoutMs: 120_000, intervalMs: 100 })
    expect(blocked.message).toContain(
      `Application ${ARGOCD_NAMESPACE}/adopt-b: its spec (values, sync policy or ignoreDifferences) was changed after the operator wrote it`,
    )
    expect(await rolloutsOf(newUid)).toEqual([])
    await editValues("adopt-b", "adopt-b-0.1.0")
    // Argo CD syncs the edit and its revert; the adoption waits until adopt-b is Synced again.
    await untilCondition(() => condition(RUNTIME, "Planned"), "Planned", "True", "PlanComputed", { timeoutMs: 120_000, intervalMs: 100 })
  })

  it("rebuilds the lost plan exactly and creates one Adopt rollout awaiting approval, without waiting for a resolution or the window", async () => {
    const [r] = await rolloutsOf(newUid)
    expect(await rolloutsOf(newUid)).toHaveLength(1)
    expect(r.spec).toMatchObject({ kind: "Adopt", fromDigest: digest, toDigest: digest, requiresApproval: true, requestedBy: "alice" })
    expect(r.spec.steps).toEqual(RELEASES.map((release) => ({ release, namespace: target(release), action: "Adopt" })))
    const cm = await get(info, `/api/v1/namespaces/${ns}/configmaps/${planConfigMapName(digest)}`)
    expect(JSON.parse(cm.data["plan.json"])).toMatchObject({ source: "Adoption", runtimeUID: newUid, desiredStateDigest: digest })
    expect((await condition(RUNTIME, "Ready"))!.message).toBe(
      `rollout ${r.metadata.name} awaiting approval (kubectl aicr approve ${r.metadata.name} --reason "…")`,
    )
  })

  it("after one approval every Application belongs to the new runtime, written once each, its spec and sync untouched", async () => {
    const [r] = await rolloutsOf(newUid)
    const since = new Date().toISOString()
    await start("step-executor")
    await approve(r.metadata.name)
    await untilCondition(() => condition(`${ROLLOUTS}/${r.metadata.name}`, "Progressing"), "Progressing", "True", "StepsCompleted", {
      timeoutMs: 120_000,
      intervalMs: 100,
    })
    await eventually(async () => (await get(info, `${ROLLOUTS}/${r.metadata.name}`)).metadata.labels?.[LABEL_OUTCOME] === "Succeeded", {
      timeoutMs: 30_000,
      what: "the planner closes the Adopt rollout Succeeded",
    })
    await eventually(async () => (await get(info, RUNTIME)).status?.plans?.active === digest, { timeoutMs: 30_000, what: "the adopted plan is active" })
    for (const name of RELEASES) {
      const a = await app(name)
      expect(a.metadata.labels).toMatchObject({ "operator.aicr.run/runtime-uid": newUid, "operator.aicr.run/plan": digest.slice(7, 39) })
      expect(a.spec).toEqual(before[name]!.spec)
      expect(isReadyAt(a, charts[name]!.digest)).toBe(true)
      const writes = readAuditEvents(info, { verb: "patch", resource: "applications", namespace: ARGOCD_NAMESPACE, name }).filter(
        // Successful writes only: an apply the API server refuses (the executor's own create owns the fields, so its
        // first apply conflicts and is sent again with force, at the same resourceVersion) changes nothing.
        (e) =>
          (e as unknown as { userAgent?: string }).userAgent?.startsWith("aicr-step-executor") &&
          e.stageTimestamp >= since &&
          (e.responseStatus?.code ?? 200) < 300,
      )
      expect(writes).toHaveLength(1)
    }
    // Untouched releases were not synced again: their last operation is the one from before the loss.
    for (const name of ["adopt-a", "adopt-c"])
      expect((await app(name)).status!.operationState!.finishedAt).toBe(before[name]!.status!.operationState!.finishedAt)
  })
})
