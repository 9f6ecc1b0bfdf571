/**
 * The acceptance stories that start from an install on the previous pinned AICR (v0.10.16): the AICR upgrade by one
 * chart value (2), the rollback by pinning the earlier plan (3), and a rollout stopped mid-way (4). ONE
 * `hack/aicr-dev.mjs up --detach` in its own state directory with `aicr.version` v0.10.16 serves them, each story
 * starting where the one before left the cluster: everything real and nothing started by hand — `helm install` of the
 * chart, each controller from its image under its own identity, AICR's Jobs by the real CLI, the real Argo CD, the
 * real registry, kwok GPU nodes. Before the stories, the v0.10.16 install is approved and rolled out.
 *
 * A "training job" is started first on a kwok GPU node (e2e/acceptance-world.ts): at the end of every story it must
 * be the same pod (UID), never restarted, still Running, its process alive.
 *
 * Charts: the REAL upstream charts (third-party/charts, `AICR_UPSTREAM_CHARTS=real`, set explicitly), served by the
 * local chart upstream at their public repository paths: the v0.10.16 install rolls out the recipe's 13 components
 * (and the `-manifests` wrapper releases) through Argo CD; story 2 upgrades kai-scheduler v0.12.17 → v0.13.0 (with
 * kai's CRDs at the new chart's schema) and nvsentinel v0.10.0 → v1.1.0. The stand-ins this depends on
 * (docs/local-control-plane.md, "What kwok cannot run"): the webhook stand-in answers the charts' admission webhooks,
 * their caBundles and prometheus-adapter's aggregated API; kwok completes every hook Job without running it.
 *
 * Story 4's step in flight: the runtime edit sets `prometheus-adapter:podLabels.aicr-e2e-hold` (a value the real
 * chart has), and the local plane's kwok never readies a pod with that label (HOLD_LABEL,
 * packages/testing/src/harness/kubelet/stages.ts). The new prometheus-adapter pod stays not ready, so its Deployment,
 * its Application and the rollout's step stay in flight, deterministically and with no sleep, until the test removes
 * the label from the pod with kubectl — after the revoke has landed — and kwok readies it.
 *
 * Checked the user's way: `helm upgrade`, `kubectl`, `kubectl aicr` (the plugin on PATH, contexts of the plane's
 * kubeconfig per user) and the API server's audit log. Each story prints its wall time when it passes, and all of
 * them at the end (stderr).
 */
import { rmSync } from "node:fs"
import { setTimeout as sleep } from "node:timers/promises"
import { type Application, isReadyAt, readRecord } from "@aicr/argocd"
import { eventually, expectOk, HOLD_LABEL, kubeRequest } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acceptanceWorld, conditionOf, NS, OUTCOME, type Pod, type Rollout, RUNTIME, nowIso, versions } from "./acceptance-world"

/** The charts the local chart upstream serves: the real ones, named explicitly (not whatever `up` defaults to). */
const CHARTS = "real" as const
const world = acceptanceWorld({ prefix: "aicr-acceptance-upgrade-", aicrVersion: versions.aicrPrevious, charts: CHARTS })
const { dir, sh, kubectl, helmCmd, json, plane, get, rollouts, rolloutOf, applications, openRollout, waitOutcome, editRuntime, approve, writesSince } = world

/** The chart version each Application was written for: the tag of the chart reference in its release record. */
const versionOf = (a: Application): string => {
  const read = readRecord(a)
  if (!read.ok) throw new Error(`Application ${a.metadata.name}: ${read.why}`)
  return read.record.release.chart.ref.slice(read.record.release.chart.ref.lastIndexOf(":") + 1)
}
const chartVersions = async () => Object.fromEntries((await applications()).map((a) => [a.metadata.name, versionOf(a)]))
/** What a rollout's steps change, as `kubectl get runtimerollout -o jsonpath='{.spec.steps}'` shows them. */
const stepsOf = async (name: string): Promise<NonNullable<Rollout["spec"]["steps"]>> =>
  JSON.parse(await kubectl("get", "runtimerollout", name, "-o", "jsonpath={.spec.steps}")) as NonNullable<Rollout["spec"]["steps"]>
/** The version changes among the steps: [release, action, from, to, verdict]. */
const versionChanges = (steps: NonNullable<Rollout["spec"]["steps"]>) =>
  steps.filter((s) => s.from !== undefined && s.to !== undefined && s.from !== s.to).map((s) => [s.release, s.action, s.from, s.to, s.verdict])
/** Every Application's spec: what a write would change (not its generation, which Argo CD's own operations bump). */
const specs = async () => Object.fromEntries((await applications()).map((a) => [a.metadata.name, a.spec]))
/** The non-Remove steps: the releases whose Application a rollout writes (a Remove deletes it). */
const written = (steps: NonNullable<Rollout["spec"]["steps"]>) =>
  steps
    .filter((s) => s.action !== "Remove")
    .map((s) => s.release)
    .sort()

/**
 * The runtime's `status.plans.active` once it is `expected` (or what it is after 60 s): the planner labels the rollout
 * with its outcome and then, in a second write of the same pass, sets the active plan on the runtime, so right after
 * the label is seen the runtime may still name the plan before.
 */
const activePlan = async (expected: string): Promise<string | undefined> => {
  const read = async () => (await get(RUNTIME)).status?.plans?.active
  return (
    (await eventually(async () => ((await read()) === expected ? expected : undefined), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: `status.plans.active ${expected}`,
    }).catch(() => undefined)) ?? (await read())
  )
}

/** KAI's `configs.kai.scheduler` CRD as the API server serves it (its schema's descriptions tell the chart versions apart). */
const kaiConfigCrd = async () =>
  JSON.stringify(
    expectOk(
      await kubeRequest(plane(), { method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/configs.kai.scheduler" }),
      "get CRD configs.kai.scheduler",
    ),
  )

/** The recipe's components: each an Application, with the `<component>-manifests` wrapper releases AICR's bundle adds. */
const COMPONENTS = [
  "aws-ebs-csi-driver",
  "aws-efa",
  "cert-manager",
  "kube-prometheus-stack",
  "k8s-ephemeral-storage-metrics",
  "prometheus-adapter",
  "skyhook-operator",
  "skyhook-customizations",
  "gpu-operator",
  "kai-scheduler",
  "kubeflow-trainer",
  "nvidia-dra-driver-gpu",
  "nvsentinel",
]

/** `text` as a regular expression that matches it literally. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")

const timings: Array<[string, number]> = []
let storyStart = 0
const begin = () => (storyStart = Date.now())
const end = async (story: string) => {
  await world.expectTrainingUntouched()
  timings.push([story, (Date.now() - storyStart) / 1000])
  process.stderr.write(`[acceptance-upgrade] ${story}: passed in ${((Date.now() - storyStart) / 1000).toFixed(1)} s\n`)
}

/** The v0.10.16 install's plan, and the v0.11.1 plan of story 2. */
let planA = ""
let planB = ""

beforeAll(async () => {
  begin()
  await world.up()
  timings.push(["up --detach (AICR v0.10.16)", (Date.now() - storyStart) / 1000])
  // The upstream serves the projects' own packages, none a stand-in (its first line lists them).
  expect(world.servedCharts().filter((c) => c.origin !== CHARTS)).toEqual([])
  begin()
  await world.startTraining()
  timings.push(["training job running", (Date.now() - storyStart) / 1000])

  // The starting state: the v0.10.16 recipe installed, with one approval.
  begin()
  const install = await openRollout()
  expect(install.spec.kind).toBe("Install")
  planA = install.spec.toDigest
  await approve(install.metadata.name, `first install on AICR ${versions.aicrPrevious}`)
  expect(await waitOutcome(install.metadata.name)).toBe("Succeeded")
  expect(conditionOf(await get(RUNTIME), "Resolved")?.message).toContain(`with AICR ${versions.aicrPrevious} into`)
  const apps = await applications()
  // v0.10.16's recipe: its 13 components plus the wrapper releases, kai-scheduler v0.12.17 with its manifest release
  // (the Job that runs as kai-operator), nvsentinel v0.10.0; every Application ready at the chart digest it names.
  const names = apps.map((a) => a.metadata.name)
  expect(names).toEqual(expect.arrayContaining([...COMPONENTS, "kai-scheduler-manifests"]))
  expect(names.filter((n) => !COMPONENTS.includes(n)).every((n) => n.endsWith("-manifests"))).toBe(true)
  for (const a of apps) expect(isReadyAt(a, a.spec!.source.targetRevision), a.metadata.name).toBe(true)
  expect(await chartVersions()).toMatchObject({
    "kai-scheduler": "v0.12.17",
    nvsentinel: "v0.10.0",
    "gpu-operator": "v25.10.1",
    "kube-prometheus-stack": "82.8.0",
    "kubeflow-trainer": "2.1.0",
  })
  expect(await kaiConfigCrd()).toContain("Connection defines the connection configuration for")
  timings.push([`install on AICR ${versions.aicrPrevious}`, (Date.now() - storyStart) / 1000])
}, 1_500_000)

afterAll(async () => {
  process.stderr.write(`acceptance-upgrade story wall times (s):\n${timings.map(([s, t]) => `  ${t.toFixed(1).padStart(7)}  ${s}`).join("\n")}\n`)
  await world.down()
  rmSync(dir, { recursive: true, force: true })
}, 300_000)

describe("acceptance: from an install on the previous AICR", () => {
  it(
    `2. upgrade AICR by changing one value (helm upgrade --reuse-values --set aicr.version=${versions.aicr}): a new plan, each component change rated, one approval rolls it out and validation passes`,
    { timeout: 1_200_000 },
    async () => {
      begin()
      const names = (await rollouts()).map((x) => x.metadata.name)
      const upgraded = await helmCmd(
        "upgrade",
        "aicr-operator",
        `oci://${plane().registry}/charts/aicr-operator`,
        "--plain-http",
        "--namespace",
        NS,
        "--reuse-values",
        "--set",
        `aicr.version=${versions.aicr}`,
      )
      expect(upgraded.code, upgraded.stderr).toBe(0)
      const r = await openRollout(names)
      expect(r.spec).toMatchObject({ kind: "Upgrade", fromDigest: planA, requiresApproval: true })
      expect(conditionOf(r, "Approved")).toMatchObject({ status: "False", reason: "AwaitingApproval" })
      planB = r.spec.toDigest
      expect(planB).not.toBe(planA)
      expect(conditionOf(await get(RUNTIME), "Resolved")?.message).toContain(`with AICR ${versions.aicr} into`)

      // Each component change rated (AICR 0.x has no upgrade-check: unknown, never safe), as kubectl and kubectl aicr show it.
      const steps = await stepsOf(r.metadata.name)
      expect(versionChanges(steps)).toEqual([
        ["kai-scheduler", "Upgrade", "v0.12.17", "v0.13.0", "unknown"],
        ["nvsentinel", "Upgrade", "v0.10.0", "v1.1.0", "unknown"],
      ])
      const described = await sh(`kubectl aicr describe ${r.metadata.name} --context approver`)
      expect(described.code, described.stderr).toBe(0)
      expect(described.stdout).toMatch(/\d+ +kai-scheduler +kai-scheduler +Upgrade +unknown +Pending/)
      expect(described.stdout).toMatch(/\d+ +nvsentinel +nvsentinel +Upgrade +unknown +Pending/)
      expect(described.stdout).toMatch(/kai-scheduler +v0\.12\.17 +v0\.13\.0 +\S+ +unknown/)
      expect(described.stdout).toMatch(/nvsentinel +v0\.10\.0 +v1\.1\.0 +\S+ +unknown/)

      // One approval rolls it out; deployment validation passes.
      const since = nowIso()
      await approve(r.metadata.name, `AICR ${versions.aicr}`)
      expect(await waitOutcome(r.metadata.name)).toBe("Succeeded")
      const done = await rolloutOf(r.metadata.name)
      expect(conditionOf(done, "Validated")).toMatchObject({ status: "True" })
      expect(done.status!.steps!.items!.map((s) => [s.release, s.state])).toEqual(steps.map((s) => [s.release, "Ready"]))
      expect(await chartVersions()).toMatchObject({ "kai-scheduler": "v0.13.0", nvsentinel: "v1.1.0" })
      // KAI v0.13.0 changed configs.kai.scheduler: spec.prometheus lost `connection`, the operator config gained
      // `nodeSelector`. The chart's crd-upgrader hook Job would apply it; kwok completes that Job without running it,
      // and the CRD is upgraded because Argo CD applies the chart's crds/ itself (server-side).
      const crd = await kaiConfigCrd()
      expect(crd).toContain("NodeSelector defines node selector for KAI operators")
      expect(crd).not.toContain("Connection defines the connection configuration for")
      const writes = writesSince(since)
      expect([...writes.keys()].sort()).toEqual(written(steps))
      expect([...writes.entries()].filter(([, n]) => n !== 1)).toEqual([])
      expect(await activePlan(planB)).toBe(planB)
      await end("2. AICR upgrade by one chart value")
    },
  )

  it(
    "3. roll back by pinning the earlier plan: assessed and approved like any change, nothing rolls back on its own (after 2)",
    { timeout: 1_200_000 },
    async () => {
      begin()
      const names = (await rollouts()).map((x) => x.metadata.name)
      const before = await specs()
      const since = nowIso()
      await editRuntime({ spec: { pin: { desiredStateDigest: planA } } })
      const r = await openRollout(names)
      expect(r.spec).toMatchObject({ kind: "Rollback", fromDigest: planB, toDigest: planA, requiresApproval: true, requestedBy: "admin" })
      expect(conditionOf(r, "Approved")).toMatchObject({ status: "False", reason: "AwaitingApproval" })
      // Assessed like any change: each version change rated.
      const steps = await stepsOf(r.metadata.name)
      expect(versionChanges(steps)).toEqual([
        ["kai-scheduler", "Upgrade", "v0.13.0", "v0.12.17", "unknown"],
        ["nvsentinel", "Upgrade", "v1.1.0", "v0.10.0", "unknown"],
      ])
      const described = await sh(`kubectl aicr describe ${r.metadata.name} --context approver`)
      expect(described.code, described.stderr).toBe(0)
      expect(described.stdout).toMatch(/Kind: +Rollback/)
      expect(described.stdout).toMatch(/kai-scheduler +v0\.13\.0 +v0\.12\.17 +\S+ +unknown/)

      // Nothing rolls back on its own: past the planner's stabilization window, no Application changed.
      await sleep(20_000)
      expect(writesSince(since).size).toBe(0)
      expect(await specs()).toEqual(before)
      expect(await chartVersions()).toMatchObject({ "kai-scheduler": "v0.13.0", nvsentinel: "v1.1.0" })
      expect(conditionOf(await rolloutOf(r.metadata.name), "Approved")?.reason).toBe("AwaitingApproval")

      await approve(r.metadata.name, "back to the v0.10.16 plan")
      expect(await waitOutcome(r.metadata.name)).toBe("Succeeded")
      expect(await activePlan(planA)).toBe(planA)
      expect(await chartVersions()).toMatchObject({ "kai-scheduler": "v0.12.17", nvsentinel: "v0.10.0" })
      const writes = writesSince(since)
      expect([...writes.keys()].sort()).toEqual(written(steps))
      expect([...writes.entries()].filter(([, n]) => n !== 1)).toEqual([])
      await end("3. rollback by pinning")
    },
  )

  it(
    "4. stop a rollout mid-way: kubectl aicr revoke during a step; that step finishes, nothing else starts, a retry needs a fresh approval (after 3)",
    { timeout: 1_500_000 },
    async () => {
      begin()
      const names = (await rollouts()).map((x) => x.metadata.name)
      // Unpinned, with prometheus-adapter's pods labelled to be held (its step stays in flight until the test
      // releases the pod) and a values change of nvsentinel, a later step.
      const versionsBefore = await chartVersions()
      await editRuntime({
        spec: {
          pin: null,
          overrides: [
            { path: `prometheus-adapter:podLabels.${HOLD_LABEL}`, value: "held" },
            { path: "nvsentinel:podLabels.team", value: "ml" },
          ],
        },
      })
      const r = await openRollout(names)
      expect(r.spec.kind).toBe("Upgrade")
      const planned = r.spec.steps ?? []
      // The held step, and the later ones that must not start (nvsentinel; after story 3's rollback, kai-scheduler too).
      const k = planned.findIndex((s) => s.release === "prometheus-adapter")
      expect(planned[k]).toMatchObject({ release: "prometheus-adapter", action: "Upgrade" })
      const later = planned.slice(k + 1).map((s) => s.release)
      expect(later).toContain("nvsentinel")
      const upToHeld = Object.fromEntries(written(planned.slice(0, k + 1)).map((x) => [x, 1]))
      const since = nowIso()
      await approve(r.metadata.name, "prometheus-adapter held")

      // The held step in flight: written, its new pod scheduled and not ready.
      const inFlight = await eventually(
        async () => {
          const s = (await rolloutOf(r.metadata.name)).status?.steps?.items?.[k]
          return s && (s.state === "Applying" || s.state === "WaitingForReady") ? s : undefined
        },
        { timeoutMs: 300_000, intervalMs: 200, what: `step ${k + 1} of ${r.metadata.name} in flight` },
      )
      expect(inFlight.release).toBe("prometheus-adapter")
      const held = await eventually(
        async () => {
          const pods = (await json<{ items: Pod[] }>("-n", "monitoring", "get", "pods", "-l", `app.kubernetes.io/name=prometheus-adapter,${HOLD_LABEL}`)).items
          return pods.find((x) => x.spec.nodeName !== undefined)
        },
        { timeoutMs: 300_000, intervalMs: 500, what: "the held prometheus-adapter pod scheduled" },
      )
      expect(held.status.conditions?.find((c) => c.type === "Ready")?.status).not.toBe("True")

      const revoked = await sh(`kubectl aicr revoke ${r.metadata.name} --reason "GPU incident" --context approver`)
      expect(revoked.code, revoked.stderr).toBe(0)
      expect(revoked.stdout).toContain(`runtimerollout.operator.aicr.run/${r.metadata.name} revoked by approver`)
      // While the step is held: the rollout has not ended, its step is still in flight, nothing else was written.
      await sleep(10_000)
      const mid = await rolloutOf(r.metadata.name)
      expect(mid.metadata.labels?.[OUTCOME]).toBeUndefined()
      expect(mid.status?.steps?.items?.[k]?.state).toMatch(/^(Applying|WaitingForReady)$/)
      // The step-executor's word for the revoked generation: a step in flight (what the planner waits on to end it).
      const generation = (mid as Rollout & { metadata: { generation?: number } }).metadata.generation
      expect(conditionOf(mid, "Progressing")).toMatchObject({ status: "True", reason: "StepInProgress", observedGeneration: generation })
      expect(Object.fromEntries(writesSince(since))).toEqual(upToHeld)

      // Released: the step finishes, and the rollout ends Revoked with every later step Pending and unwritten.
      const released = await sh(`kubectl -n monitoring label pod ${held.metadata.name} ${HOLD_LABEL}- --context admin`)
      expect(released.code, released.stderr).toBe(0)
      expect(await waitOutcome(r.metadata.name, 600_000)).toBe("Revoked")
      const ended = await rolloutOf(r.metadata.name)
      const items = ended.status!.steps!.items!
      expect(items.map((s) => [s.release, s.state])).toEqual(planned.map((s, i) => [s.release, i <= k ? "Ready" : "Pending"]))
      expect(items[k]!.readyAtRevision).toBe(items[k]!.writtenRevision)
      expect(conditionOf(ended, "Approved")?.reason).toBe("RolloutRevoked")
      // As kubectl aicr describe shows the steps: the held step was in flight at the revocation and finished; every
      // later step says it never started, and why.
      const shown = await sh(`kubectl aicr describe ${r.metadata.name} --context approver`)
      expect(shown.code, shown.stderr).toBe(0)
      const revokedAt = /^ +Revoked by: +approver at (\S+): GPU incident$/mu.exec(shown.stdout)?.[1]
      expect(revokedAt, shown.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/u)
      const why = escape(`the rollout was revoked by approver at ${revokedAt!}`)
      const row = (i: number) => shown.stdout.split("\n").find((l) => new RegExp(`^ +${i + 1} +${planned[i]!.release} `, "u").test(l))
      expect(row(k)).toMatch(new RegExp(` Ready +In flight when ${why}; it finished: ready at ${escape(items[k]!.readyAtRevision!)}$`, "u"))
      for (let i = k + 1; i < planned.length; i++) expect(row(i)).toMatch(new RegExp(` Pending +Not started: ${why}$`, "u"))
      expect(Object.fromEntries(writesSince(since))).toEqual(upToHeld)
      expect(await chartVersions()).toEqual(versionsBefore)

      // Nothing retries on its own: past the stabilization window, no new rollout, and the runtime says why it stalled.
      await sleep(20_000)
      expect((await rollouts()).filter((x) => x.metadata.labels?.[OUTCOME] === undefined)).toEqual([])
      expect(conditionOf(await get(RUNTIME), "Stalled")).toMatchObject({ status: "True", reason: "RolloutRevoked" })
      expect(Object.fromEntries(writesSince(since))).toEqual(upToHeld)

      // The retry, the runbook's way: a new rollout that waits for its own approval.
      const retry = await sh(`kubectl annotate clusterruntime cluster operator.aicr.run/retry=${r.metadata.name} --context admin`)
      expect(retry.code, retry.stderr).toBe(0)
      const again = await openRollout([...names, r.metadata.name])
      expect(again.spec.toDigest).toBe(r.spec.toDigest)
      expect(conditionOf(again, "Approved")).toMatchObject({ status: "False", reason: "AwaitingApproval" })
      await sleep(10_000)
      // Before its approval nothing starts: every step after the held one stays Pending (and nothing is written, the
      // audit log below). The steps the revoked rollout finished may already show Ready: the executor reports the
      // live Applications, and those are at the revision this plan writes.
      const waiting = (await rolloutOf(again.metadata.name)).status?.steps?.items ?? []
      expect(waiting.filter((s) => s.index > k + 1 && s.state !== "Pending")).toEqual([])
      expect(waiting.filter((s) => s.index <= k + 1 && s.state !== "Pending" && s.state !== "Ready")).toEqual([])
      expect(Object.fromEntries(writesSince(since))).toEqual(upToHeld)
      const retried = nowIso()
      await approve(again.metadata.name, "retry after the incident")
      expect(await waitOutcome(again.metadata.name)).toBe("Succeeded")
      expect(await chartVersions()).toMatchObject({ "kai-scheduler": "v0.13.0", nvsentinel: "v1.1.0" })
      // Every later step written once, after the fresh approval.
      const writes = writesSince(retried)
      for (const release of written(planned.slice(k + 1))) expect(writes.get(release), release).toBe(1)
      await end("4. revoke mid-step, retry")
    },
  )
})
