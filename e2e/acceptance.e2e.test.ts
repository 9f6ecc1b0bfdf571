/**
 * The acceptance stories: the seed's validated scenarios (plus removal) end to end, on the chart `aicr-dev up`
 * installs, as a platform team lives them. ONE `hack/aicr-dev.mjs up --detach` in its own state directory serves every
 * story, in a deliberate order (each story starts where the one before left the cluster, which keeps the file within
 * CI's time budget): everything real and nothing started by hand — `helm install` of the chart, each controller from
 * its image under its own identity, AICR's Jobs by the real CLI, the real Argo CD, the real registry, kwok GPU nodes.
 *
 * A "training job" is started first on a kwok GPU node: a Job whose container the process kubelet really runs (a
 * process on this machine, from an image on the plane's registry). At the end of every story it must be the same pod
 * (UID), never restarted, still Running, its process alive.
 *
 * Charts: the REAL upstream charts (third-party/charts, `AICR_UPSTREAM_CHARTS=real`, `CHARTS` below), served by the
 * local chart upstream at their public repository paths; `up` raises the step timeout for them (45m). The stand-ins
 * they depend on (docs/local-control-plane.md, "What kwok cannot run"): the webhook stand-in answers the charts'
 * admission webhooks, their caBundles and prometheus-adapter's aggregated API; kwok completes every hook Job without
 * running it. AICR is the pinned version (v0.11.1); the stories that start from an install on the previous one
 * (v0.10.16) — 2, 3 and 4 — are in e2e/acceptance-upgrade.e2e.test.ts.
 *
 * The order, each story starting from the state the one before leaves: 8 (the refusals, on the first rollout while it
 * awaits approval), 1 + 9 (its one approval, watched), 1 (the order of the steps, validation, evidence),
 * 7 (suspendEngine), 10 (removal: drop the Kubeflow platform), 5 (crash and upgrade of the operator mid-rollout),
 * 6 (lose the operator; the reinstall refuses a hand edit, then one approval takes the stack back, validated with the
 * AICR and recipe of the runtime's resolution), 9 (rest: a node NotReady and a registry outage in Ready).
 * Each story prints its wall time when it passes, and all of them at the end (stderr).
 *
 * Checked the user's way: `kubectl`, `kubectl aicr` (the plugin on PATH, contexts of the plane's kubeconfig per user),
 * `helm`, and the API server's audit log.
 */
import { spawn } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { planConfigMapName } from "@aicr/api"
import { adoptProc, ARGOCD_NAMESPACE, eventually, processesOfPod, readAuditEvents, type Registry, startRegistry } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { DEPLOYMENTS, pushControllerRelease } from "../hack/local-chart"
import { acceptanceWorld, type Cond, conditionOf, devScript, EXECUTOR, NS, nowIso, OUTCOME, type Pod, root, run, RUNTIME, versions } from "./acceptance-world"

/** The charts the local chart upstream serves: the real ones (third-party/charts), named explicitly. */
const CHARTS = "real" as const

const world = acceptanceWorld({ prefix: "aicr-acceptance-", aicrVersion: versions.aicr, charts: CHARTS })
const {
  dir,
  env,
  userEnv,
  sh,
  kubectl,
  helmCmd,
  json,
  plane,
  get,
  rollouts,
  rolloutOf,
  applications,
  openRollout,
  waitOutcome,
  editRuntime,
  approve,
  writesSince,
} = world
const { training, startTraining, expectTrainingUntouched } = world

const timings: Array<[string, number]> = []
let storyStart = 0
const begin = () => (storyStart = Date.now())
const end = async (story: string) => {
  await expectTrainingUntouched()
  timings.push([story, (Date.now() - storyStart) / 1000])
  process.stderr.write(`[acceptance] ${story}: passed in ${((Date.now() - storyStart) / 1000).toFixed(1)} s\n`)
}

let first = ""
// Story 6: what the lost operator left (its Applications, its runtime's uid and spec), for the re-adoption.
let lost: Awaited<ReturnType<typeof applications>> = []
let oldUid: string | undefined
let lostSpec: Record<string, unknown> = {}
// Story 9: the plane's registry, started again after its outage (the plane's own process is stopped by then).
let restartedRegistry: Registry | undefined

beforeAll(async () => {
  begin()
  await run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 64 << 20 })
  timings.push(["up --detach", (Date.now() - storyStart) / 1000])
  begin()
  await startTraining()
  timings.push(["training job running", (Date.now() - storyStart) / 1000])
  first = (await openRollout()).metadata.name
}, 1_500_000)

afterAll(async () => {
  process.stderr.write(`acceptance story wall times (s):\n${timings.map(([s, t]) => `  ${t.toFixed(1).padStart(7)}  ${s}`).join("\n")}\n`)
  await run(process.execPath, [devScript, "down"], { cwd: root, env }).catch(() => undefined)
  await restartedRegistry?.stop()
  rmSync(dir, { recursive: true, force: true })
}, 300_000)

describe("acceptance: the validated scenarios on the installed chart", () => {
  it("the local chart upstream serves the charts CHARTS names (the real ones), as its first line says", () => {
    const served = world.servedCharts()
    expect(served.length).toBeGreaterThan(0)
    expect(served.filter((c) => c.origin !== CHARTS)).toEqual([])
  })

  it("8. nobody approves their own change: the five refusals through the plugin and kubectl, as real users try them", { timeout: 600_000 }, async () => {
    begin()
    const r = await rolloutOf(first)
    expect(conditionOf(r, "Approved")).toMatchObject({ status: "False", reason: "AwaitingApproval" })
    // The editor stamp recorded admin (who applied the sample) as the editor: admin requested this change.
    expect(r.spec.requestedBy).toBe("admin")
    const now = Date.now()
    const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/u, "Z")
    const approval = (by: string) =>
      JSON.stringify({
        spec: { approval: { approvedBy: by, reason: "mine", approvedAt: iso(now), expiresAt: iso(now + 3_600_000), toDigest: r.spec.toDigest } },
      })

    // 1. Without the approver role: carol has no grant on rollouts.
    const carol = await sh(`kubectl aicr approve ${first} --reason "looks fine" --context carol`)
    expect(carol.code).toBe(1)
    expect(carol.stderr).toMatch(/^Error: forbidden: .*User "carol" cannot get resource "runtimerollouts" in API group "operator\.aicr\.run"/)

    // 2. Your own runtime edit: the plugin refuses, and so does the API server when the plugin is bypassed.
    const own = await sh(`kubectl aicr approve ${first} --reason "mine" --context admin`)
    expect([own.code, own.stderr]).toEqual([1, "Error: you (admin) requested this change: nobody approves their own runtime edit; ask another approver\n"])
    const ownPatch = await sh(`kubectl patch runtimerollout ${first} --context admin --type merge -p '${approval("admin")}'`)
    expect(ownPatch.code).toBe(1)
    expect(ownPatch.stderr).toContain(
      `admin made the runtime edit that produced rollout ${first} (spec.requestedBy): nobody approves their own change, ask another approver`,
    )

    // 3. In someone else's name: an approver writing bob as the approver.
    const other = await sh(`kubectl patch runtimerollout ${first} --context approver --type merge -p '${approval("bob")}'`)
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(
      "spec.approval.approvedBy is bob but the request comes from approver: approve in your own name (kubectl aicr approve fills it in)",
    )

    // 4. The operator approving itself: the planner's ServiceAccount token, used with the plugin.
    const token = (await kubectl("-n", NS, "create", "token", "aicr-planner", "--duration", "10m")).trim()
    const cluster = (await kubectl("config", "view", "-o", 'jsonpath={.contexts[?(@.name=="admin")].context.cluster}')).trim()
    await kubectl("config", "set-credentials", "stolen-planner", `--token=${token}`)
    await kubectl("config", "set-context", "stolen-planner", `--cluster=${cluster}`, "--user=stolen-planner")
    const self = await sh(`kubectl aicr approve ${first} --reason "self" --context stolen-planner`)
    expect(self.code).toBe(1)
    expect(self.stderr).toContain(
      `the operator's own identity system:serviceaccount:${NS}:aicr-planner may not approve, revoke or acknowledge rollout ${first}`,
    )

    // 5. A tenant reaching the operator's resources: the rollout, the runtime, the plans.
    const tenant = await sh(`kubectl aicr describe ${first} --context tenant`)
    expect(tenant.code).toBe(1)
    expect(tenant.stderr).toMatch(/User "tenant" cannot get resource "runtimerollouts"/)
    for (const [args, what] of [
      ["get clusterruntime cluster", /User "tenant" cannot get resource "clusterruntimes"/],
      [`-n ${NS} get configmaps`, /User "tenant" cannot list resource "configmaps"/],
      [`-n ${NS} get secrets`, /User "tenant" cannot list resource "secrets"/],
    ] as const) {
      const t = await sh(`kubectl ${args} --context tenant`)
      expect(t.code, args).toBe(1)
      expect(t.stderr, args).toMatch(what)
    }

    // Nothing got through: no approval, still awaiting one, no Application written.
    const after = await rolloutOf(first)
    expect(after.spec.approval).toBeUndefined()
    expect(conditionOf(after, "Approved")?.reason).toBe("AwaitingApproval")
    expect(await applications()).toEqual([])
    await end("8. the five refusals")
  })

  it(
    "1 + 9. install on bare GPU nodes: one approval installs every release of the v0.11.1 recipe in plan order, each ready at the revision it wrote; Ready and kubectl aicr watch (piped) name the step in flight (after 8)",
    { timeout: 1_800_000 },
    async () => {
      begin()
      const r = await rolloutOf(first)
      expect(r.spec.kind).toBe("Install")
      const planned = r.spec.steps ?? []
      expect(planned.length).toBeGreaterThanOrEqual(13)
      expect(planned.every((s) => s.action === "Install")).toBe(true)

      // kubectl aicr watch, piped: one line per change, exits with the outcome.
      const watch = spawn("bash", ["-c", `kubectl aicr watch ${first} --context approver | cat; exit "\${PIPESTATUS[0]}"`], { cwd: dir, env: userEnv })
      let watched = ""
      watch.stdout.on("data", (d: Buffer) => (watched += d.toString()))
      const watchExit = new Promise<number | null>((resolve) => watch.on("exit", (code) => resolve(code)))
      // The runtime's Ready message during the rollout, as `kubectl get clusterruntime` shows it.
      const readyMessages = new Set<string>()
      let sampling = true
      const sampler = (async () => {
        while (sampling) {
          const m = conditionOf(await get(RUNTIME), "Ready")?.message
          if (m) readyMessages.add(m)
          await new Promise((res) => setTimeout(res, 500))
        }
      })()

      const approved = await sh(`kubectl aicr approve ${first} --expires 2h --reason "first install" --context approver`)
      expect(approved.code, approved.stderr).toBe(0)
      expect(approved.stdout).toContain(`runtimerollout.operator.aicr.run/${first} approved by approver until `)

      const outcome = await waitOutcome(first)
      const code = await watchExit
      sampling = false
      await sampler
      expect(outcome).toBe("Succeeded")
      // 9: the watch followed the steps in order and exited 0 (Succeeded).
      expect(code, watched).toBe(0)
      const lines = watched.trimEnd().split("\n")
      expect(lines.at(-1)).toMatch(new RegExp(`^${first} ended Succeeded: ${planned.length}/${planned.length} steps ready`))
      const seen = lines
        .map((l) => new RegExp(`^${first} (\\d+)/${planned.length} (\\S+) \\(Install\\) `).exec(l))
        .filter((m) => m !== null)
        .map((m) => [Number(m[1]), m[2]] as const)
      expect(seen.length, watched).toBeGreaterThan(0)
      for (const [i, release] of seen) expect(release).toBe(planned[i - 1]!.release)
      expect(seen.map(([i]) => i)).toEqual([...seen.map(([i]) => i)].sort((a, b) => a - b))
      // 9: Ready named the step in flight, as `rollout <name>: step i/N <release> (Install)`.
      const steps = [...readyMessages]
        .map((m) => new RegExp(`^rollout ${first}: step (\\d+)/${planned.length} (\\S+) \\(Install\\)$`).exec(m))
        .filter((m) => m !== null)
      expect(steps.length, [...readyMessages].join("\n")).toBeGreaterThan(0)
      for (const m of steps) expect(m[2]).toBe(planned[Number(m[1]) - 1]!.release)

      // 1: each step ready at the revision it wrote, every release of the recipe with its Application.
      const done = await rolloutOf(first)
      const items = done.status!.steps!.items!
      expect(items.map((s) => [s.release, s.state])).toEqual(planned.map((s) => [s.release, "Ready"]))
      for (const s of items) expect(s.readyAtRevision, s.release).toBe(s.writtenRevision)
      const apps = new Map((await applications()).map((a) => [a.metadata.name, a]))
      expect([...apps.keys()].sort()).toEqual(planned.map((s) => s.release).sort())
      await end("1 + 9. install, watched")
    },
  )

  it(
    "1. each step started only after the one before was ready at its revision (the audit log's write times against the rollout's step records and Argo CD's health times); every Application Synced and Healthy, Ready=True, deployment validation passed and kubectl aicr evidence names the plan and the approver (after 1 + 9)",
    { timeout: 600_000 },
    async () => {
      begin()
      const done = await rolloutOf(first)
      const planned = done.spec.steps!.map((s) => s.release)
      const items = done.status!.steps!.items!
      // The step-executor's first write of each Application (create or apply), from the API server's audit log.
      const writes = readAuditEvents(plane(), { resource: "applications", namespace: ARGOCD_NAMESPACE, username: EXECUTOR }).filter(
        (e) => (e.verb === "create" || e.verb === "patch") && e.objectRef?.subresource === undefined && (e.responseStatus?.code ?? 200) < 300,
      )
      const firstWrite = new Map<string, string>()
      for (const e of writes) if (!firstWrite.has(e.objectRef!.name!)) firstWrite.set(e.objectRef!.name!, e.stageTimestamp)
      // Written in plan order, each Application once during the install.
      expect([...firstWrite.keys()]).toEqual(planned)
      const apps = new Map((await applications()).map((a) => [a.metadata.name, a]))
      const at = (t: string | undefined, what: string) => {
        expect(t, what).toBeDefined()
        return Date.parse(t!)
      }
      // Argo CD's record of when each Application turned Healthy (its health's last transition, to the second), read
      // right after the install, against the step's start in the rollout's own record and the write in the audit log.
      // (The rollout's step records hold no completion time: status.steps.items[].completedAt is left unset.)
      for (let i = 1; i < planned.length; i++) {
        const [before, release] = [planned[i - 1]!, planned[i]!]
        const written = at(firstWrite.get(release), `${release} written`)
        const healthy = at(
          (apps.get(before)?.status?.health as { lastTransitionTime?: string } | undefined)?.lastTransitionTime,
          `${before}'s health.lastTransitionTime`,
        )
        expect(written, `${release} written after ${before}`).toBeGreaterThan(at(firstWrite.get(before), `${before} written`))
        expect(Math.floor(written / 1000) * 1000, `${release} written (audit log) after Argo CD saw ${before} Healthy`).toBeGreaterThanOrEqual(healthy)
        expect(at(items[i]!.startedAt, `${release} startedAt`), `${release} started (step record) after Argo CD saw ${before} Healthy`).toBeGreaterThanOrEqual(
          healthy,
        )
      }
      // Every Application Synced and Healthy at the revision the rollout wrote.
      for (const release of planned) {
        const a = apps.get(release)!
        expect([a.status?.sync?.status, a.status?.health?.status], release).toEqual(["Synced", "Healthy"])
        expect(a.status?.sync?.revision, release).toBe(a.spec?.source.targetRevision)
      }
      // Ready=True, deployment validation passed, as kubectl shows them.
      await eventually(async () => (conditionOf(await get(RUNTIME), "Ready")?.status === "True" ? true : undefined), {
        timeoutMs: 120_000,
        what: "Ready=True after the install",
      })
      expect(
        await kubectl(
          "get",
          "clusterruntime",
          "cluster",
          "-o",
          'jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}',
        ),
      ).toBe("True/RolledOut")
      expect(
        await kubectl(
          "get",
          "runtimerollout",
          first,
          "-o",
          'jsonpath={.status.conditions[?(@.type=="Validated")].status}/{.status.conditions[?(@.type=="Validated")].reason} {.status.validation.result}',
        ),
      ).toBe("True/ValidationPassed Passed")
      // The evidence, pulled from the registry by the plugin: the plan and the approver.
      const evidence = await sh(`kubectl aicr evidence ${first} --context approver`)
      expect(evidence.code, evidence.stderr).toBe(0)
      expect(evidence.stdout).toContain(`Rollout:       ${first} → plan ${done.spec.toDigest}`)
      expect(evidence.stdout).toMatch(/^Approved by: {3}approver .*: first install$/mu)
      expect(evidence.stdout).toContain("Report:        ctrf.json is the report the binding names (sha256 matches)")
      await end("1. install in order, validated, evidence")
    },
  )

  it(
    "7. suspendEngine stops every sync and drift repair and deletes nothing; clearing it repairs a resource deleted meanwhile (after 1)",
    { timeout: 900_000 },
    async () => {
      begin()
      const rolloutsBefore = (await rollouts()).length
      const before = await applications()
      const t0 = Date.now()
      await editRuntime({ spec: { suspendEngine: true } })
      await eventually(
        async () => {
          const apps = await applications()
          return apps.length === before.length && apps.every((a) => (a.spec?.syncPolicy?.automated as { enabled?: boolean } | undefined)?.enabled === false)
            ? true
            : undefined
        },
        { timeoutMs: 120_000, intervalMs: 250, what: "every Application's automated sync off" },
      )
      timings.push(["7. suspendEngine: every Application's automated sync off", (Date.now() - t0) / 1000])
      await eventually(async () => conditionOf(await get(RUNTIME), "Ready")?.reason === "EngineSuspended", {
        timeoutMs: 60_000,
        what: "Ready=False EngineSuspended",
      })
      const lastSync = new Map((await applications()).map((a) => [a.metadata.name, a.status?.operationState?.finishedAt]))

      // Drift while frozen: a Deployment of cert-manager deleted by hand stays deleted, and nothing else moves.
      expect((await sh("kubectl -n cert-manager delete deployment cert-manager-webhook --context admin")).code).toBe(0)
      await eventually(async () => (await applications()).find((a) => a.metadata.name === "cert-manager")?.status?.sync?.status === "OutOfSync", {
        timeoutMs: 120_000,
        what: "Argo CD to see cert-manager OutOfSync",
      })
      await new Promise((res) => setTimeout(res, 20_000))
      expect((await sh("kubectl -n cert-manager get deployment cert-manager-webhook --context admin")).stderr).toContain("NotFound")
      const frozen = await applications()
      expect(frozen.map((a) => a.metadata.name).sort()).toEqual(before.map((a) => a.metadata.name).sort())
      expect(frozen.filter((a) => a.metadata.deletionTimestamp !== undefined)).toEqual([])
      for (const a of frozen) expect(a.status?.operationState?.finishedAt, a.metadata.name).toBe(lastSync.get(a.metadata.name))
      expect((await sh("kubectl -n cert-manager get deployment cert-manager --context admin")).code).toBe(0)

      // Cleared: automation resumes and the deletion is repaired.
      const t1 = Date.now()
      await editRuntime({ spec: { suspendEngine: null } })
      await eventually(async () => (await sh("kubectl -n cert-manager get deployment cert-manager-webhook --context admin")).code === 0, {
        timeoutMs: 300_000,
        intervalMs: 500,
        what: "cert-manager-webhook repaired",
      })
      timings.push(["7. suspendEngine cleared: the deleted Deployment back", (Date.now() - t1) / 1000])
      await eventually(
        async () => {
          const a = (await applications()).find((x) => x.metadata.name === "cert-manager")
          return a?.status?.sync?.status === "Synced" && a.status.health?.status === "Healthy" ? true : undefined
        },
        { timeoutMs: 300_000, what: "cert-manager Synced and Healthy again" },
      )
      await eventually(async () => conditionOf(await get(RUNTIME), "Ready")?.status === "True", { timeoutMs: 120_000, what: "Ready=True after the suspension" })
      // Suspending is no change of the stack: no rollout came of it.
      expect((await rollouts()).length).toBe(rolloutsBefore)
      await end("7. suspendEngine")
    },
  )

  it("10. removing a component is an approved step that uninstalls it in reverse dependency order (after 7)", { timeout: 1_500_000 }, async () => {
    begin()
    const names = (await rollouts()).map((x) => x.metadata.name)
    const installOrder = (await rolloutOf(first)).spec.steps!.map((s) => s.release)
    // Drop the Kubeflow platform: kubeflow-trainer leaves the recipe.
    await editRuntime({ spec: { platform: null } })
    const r = await openRollout(names)
    const steps = r.spec.steps ?? []
    const removed = steps.filter((s) => s.action === "Remove").map((s) => s.release)
    expect(removed).toContain("kubeflow-trainer")
    // Removals come last, in reverse dependency order.
    expect(
      steps
        .slice(steps.length - removed.length)
        .map((s) => s.action)
        .every((a) => a === "Remove"),
    ).toBe(true)
    expect(removed).toEqual([...removed].sort((a, b) => installOrder.indexOf(b) - installOrder.indexOf(a)))
    expect(conditionOf(r, "Approved")).toMatchObject({ status: "False", reason: "AwaitingApproval" })
    expect((await applications()).map((a) => a.metadata.name)).toContain("kubeflow-trainer")
    const since = nowIso()
    await approve(r.metadata.name, "no Kubeflow here")
    expect(await waitOutcome(r.metadata.name)).toBe("Succeeded")
    const apps = (await applications()).map((a) => a.metadata.name)
    for (const name of removed) expect(apps, name).not.toContain(name)
    // Uninstalled: the step-executor deleted each Application (Argo CD pruned its resources), in that order.
    const deletes = readAuditEvents(plane(), { verb: "delete", resource: "applications", namespace: ARGOCD_NAMESPACE, username: EXECUTOR }).filter(
      (e) => e.stageTimestamp >= since && (e.responseStatus?.code ?? 200) < 300,
    )
    expect(deletes.map((e) => e.objectRef?.name)).toEqual(removed)
    expect((await sh("kubectl -n kubeflow get deployments -o name --context admin")).stdout).toBe("")
    await end("10. removal")
  })

  it(
    "5. helm upgrade of one controller's image and SIGKILL of every controller's process mid-rollout: the same rollout resumes and finishes, the audit log shows no write repeated (after 10)",
    { timeout: 1_800_000 },
    async () => {
      begin()
      const names = (await rollouts()).map((x) => x.metadata.name)
      // A values change of six releases: a rollout long enough to crash in.
      const releases = ["cert-manager", "skyhook-operator", "gpu-operator", "kai-scheduler", "nvidia-dra-driver-gpu", "nvsentinel"]
      await editRuntime({ spec: { overrides: releases.map((r) => ({ path: `${r}:podLabels.rollout`, value: "crash-test" })) } })
      const r = await openRollout(names)
      const planned = (r.spec.steps ?? []).map((s) => s.release)
      expect([...planned].sort()).toEqual([...releases].sort())
      const since = nowIso()
      await approve(r.metadata.name, "crash test")
      await eventually(async () => (writesSince(since).size >= 1 ? true : undefined), {
        timeoutMs: 600_000,
        intervalMs: 250,
        what: "the first Application of the rollout written",
      })

      // SIGKILL of each controller's process, one after another at random points of the rollout.
      const pods = (await json<{ items: Pod[] }>("-n", NS, "get", "pods", "-l", "app.kubernetes.io/part-of=aicr-operator")).items
      expect(pods.length).toBe(DEPLOYMENTS.length)
      const killed: string[] = []
      for (const pod of pods) {
        await new Promise((res) => setTimeout(res, Math.floor(Math.random() * 3_000)))
        const pids = processesOfPod(pod.metadata.name)
        expect(pids.length, pod.metadata.name).toBeGreaterThan(0)
        for (const pid of pids) process.kill(pid, "SIGKILL")
        killed.push(pod.metadata.name)
      }
      // And a new image of the step-executor alone, by helm upgrade, while the rollout is still going.
      const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as { controllers: { stepExecutor: { image: { digest: string } } } }
      const image = await pushControllerRelease(plane(), "stepExecutor", "0.1.1-acceptance", join(dir, "images"))
      expect(image.digest).not.toBe(values.controllers.stepExecutor.image.digest)
      const upgraded = await helmCmd(
        "upgrade",
        "aicr-operator",
        `oci://${plane().registry}/charts/aicr-operator`,
        "--plain-http",
        "--namespace",
        NS,
        "--reuse-values",
        "--set",
        `controllers.stepExecutor.image.digest=${image.digest}`,
      )
      expect(upgraded.code, upgraded.stderr).toBe(0)
      expect(await kubectl("-n", NS, "rollout", "status", "deployment/aicr-step-executor", "--timeout=600s")).toContain("successfully rolled out")

      // The same rollout resumes and finishes; each Application written once.
      expect(await waitOutcome(r.metadata.name)).toBe("Succeeded")
      const writes = writesSince(since)
      expect([...writes.keys()].sort()).toEqual([...releases].sort())
      expect([...writes.entries()].filter(([, n]) => n !== 1)).toEqual([])
      // The killed containers came back (restarted by the kubelet, or replaced by the upgrade).
      const after = (await json<{ items: Pod[] }>("-n", NS, "get", "pods", "-l", "app.kubernetes.io/part-of=aicr-operator")).items
      for (const p of after.filter((x) => killed.includes(x.metadata.name)))
        expect(p.status.containerStatuses?.[0]?.restartCount, p.metadata.name).toBeGreaterThanOrEqual(1)
      expect(after.find((p) => p.metadata.name.startsWith("aicr-step-executor-"))!.spec.containers[0]!.image).toBe(`${image.repository}@${image.digest}`)
      await end("5. crash and upgrade mid-rollout")
    },
  )

  it(
    "6 (first part). lose the operator, keep the stack: helm uninstall, aicr-system, every plan and the runtime deleted; the stack and the training job keep running; after a reinstall an Application edited by hand blocks the adoption, naming it (after 5)",
    { timeout: 1_800_000 },
    async () => {
      begin()
      const apps = await applications()
      lost = apps
      const runtime = await get(RUNTIME)
      oldUid = runtime.metadata.uid
      lostSpec = runtime.spec
      const helmOut = await helmCmd("uninstall", "aicr-operator", "--namespace", NS, "--wait")
      expect(helmOut.code, helmOut.stderr).toBe(0)
      expect((await sh(`kubectl delete namespace ${NS} --context admin --wait=true --timeout=300s`)).code).toBe(0)
      expect((await sh("kubectl delete runtimerollouts --all --context admin")).code).toBe(0)
      // The runtime: the stuck-finalizer runbook (its finalizer removed by hand), which leaves the Applications.
      expect((await sh(`kubectl patch clusterruntime cluster --context admin --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]'`)).code).toBe(0)
      expect((await sh("kubectl delete clusterruntime cluster --context admin --wait=true")).code).toBe(0)
      // Without the operator, after a while: every Application still there, synced and healthy.
      await new Promise((res) => setTimeout(res, 15_000))
      const kept = await applications()
      expect(kept.map((a) => a.metadata.name).sort()).toEqual(apps.map((a) => a.metadata.name).sort())
      expect(kept.filter((a) => a.status?.sync?.status !== "Synced" || a.status?.health?.status !== "Healthy").map((a) => a.metadata.name)).toEqual([])
      await expectTrainingUntouched()

      // Reinstall the guide's way (up again: the namespace, the chart, the sample runtime).
      await run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 64 << 20 })
      const newUid = (await get(RUNTIME)).metadata.uid
      expect(newUid).not.toBe(oldUid)
      await eventually(async () => (conditionOf(await get(RUNTIME), "Planned")?.reason === "OrphanedObjectsPresent" ? true : undefined), {
        timeoutMs: 300_000,
        what: "Planned=False OrphanedObjectsPresent",
      })
      // One hand edit: the adoption is refused, naming it.
      expect(
        (
          await sh(
            `kubectl -n ${ARGOCD_NAMESPACE} patch application nvsentinel --context admin --type merge -p '{"spec":{"source":{"helm":{"valuesObject":{"handEdit":"yes"}}}}}'`,
          )
        ).code,
      ).toBe(0)
      await editRuntime({ spec: { adoption: { fromRuntimeUID: oldUid } } })
      const blocked = await eventually(
        async () => {
          const c = conditionOf(await get(RUNTIME), "Planned")
          return c?.reason === "AdoptionBlocked" ? c : undefined
        },
        { timeoutMs: 300_000, what: "Planned=False AdoptionBlocked" },
      )
      expect(blocked.message).toContain(`Application ${ARGOCD_NAMESPACE}/nvsentinel`)
      expect((await rollouts()).filter((x) => x.metadata.labels?.[OUTCOME] === undefined)).toEqual([])
      timings.push(["6. (first part) loss, reinstall, hand edit refused", (Date.now() - storyStart) / 1000])
    },
  )

  it(
    "6 (second part). once the hand edit is undone, the plan is rebuilt from what runs and one approval takes the stack back, each Application written once, its spec unchanged (after 6, first part)",
    { timeout: 1_200_000 },
    async () => {
      begin()
      const newUid = (await get(RUNTIME)).metadata.uid
      const names = (await rollouts()).map((x) => x.metadata.name)
      // The reinstall applied the guide's sample runtime; the team applies theirs as it was before the loss (no
      // Kubeflow platform since story 10, story 5's overrides), so that what runs is what the runtime asks for.
      const current = (await get(RUNTIME)).spec as Record<string, unknown>
      await editRuntime({
        spec: {
          ...Object.fromEntries(Object.keys(current).map((k) => [k, null])),
          ...lostSpec,
          adoption: current["adoption"],
        },
      })
      // The hand edit undone, the way it was made.
      const t0 = Date.now()
      expect(
        (
          await sh(
            `kubectl -n ${ARGOCD_NAMESPACE} patch application nvsentinel --context admin --type merge -p '{"spec":{"source":{"helm":{"valuesObject":{"handEdit":null}}}}}'`,
          )
        ).code,
      ).toBe(0)
      // Rebuilt from the live Applications (story 5's Upgrade wrote six of them under a later plan than the rest): one
      // Adopt rollout of every Application, awaiting approval.
      const r = await openRollout(names).catch(async (e: unknown) => {
        throw new Error(`${String(e)}; Planned: ${JSON.stringify(conditionOf(await get(RUNTIME), "Planned"))}`)
      })
      timings.push(["6. (second part) hand edit undone → Adopt rollout AwaitingApproval", (Date.now() - t0) / 1000])
      expect(r.spec.kind).toBe("Adopt")
      expect(conditionOf(r, "Approved")).toMatchObject({ status: "False", reason: "AwaitingApproval" })
      const live = await applications()
      expect((r.spec.steps ?? []).map((s) => [s.release, s.action]).sort()).toEqual(lost.map((a) => [a.metadata.name, "Adopt"]).sort())
      // Nothing of the stack changed by the loss and the reinstall: the specs are the ones the lost operator wrote.
      const spec = new Map(lost.map((a) => [a.metadata.name, a.spec]))
      for (const a of live) expect(a.spec, a.metadata.name).toEqual(spec.get(a.metadata.name))

      const since = nowIso()
      const t1 = Date.now()
      await approve(r.metadata.name, "take the stack back")
      expect(await waitOutcome(r.metadata.name, 600_000)).toBe("Succeeded")
      timings.push(["6. (second part) approval → Adopt rollout Succeeded", (Date.now() - t1) / 1000])
      // Validated like any rollout, with the AICR and recipe of the resolution that renders what runs; the evidence
      // names the adopted plan and the approver.
      expect(
        await kubectl(
          "get",
          "runtimerollout",
          r.metadata.name,
          "-o",
          'jsonpath={.status.conditions[?(@.type=="Validated")].status}/{.status.conditions[?(@.type=="Validated")].reason} {.status.validation.result}',
        ),
      ).toBe("True/ValidationPassed Passed")
      const evidence = await sh(`kubectl aicr evidence ${r.metadata.name} --context approver`)
      expect(evidence.code, evidence.stderr).toBe(0)
      expect(evidence.stdout).toContain(`Rollout:       ${r.metadata.name} → plan ${r.spec.toDigest}`)
      expect(evidence.stdout).toMatch(/^Approved by: {3}approver .*: take the stack back$/mu)
      expect(evidence.stdout).toContain("Report:        ctrf.json is the report the binding names (sha256 matches)")
      const adopted = JSON.parse(await kubectl("-n", NS, "get", "configmap", planConfigMapName(r.spec.toDigest), "-o", "jsonpath={.data.plan\\.json}")) as {
        source: string
        aicr?: { version: string }
        content: Array<{ key: string }>
      }
      expect([adopted.source, adopted.aicr?.version, adopted.content.map((c) => c.key).includes("recipe.json")]).toEqual(["Adoption", versions.aicr, true])
      // Each Application written once (audit log), now the new runtime's, its spec unchanged, not synced again.
      const writes = writesSince(since)
      expect([...writes.keys()].sort()).toEqual(lost.map((a) => a.metadata.name).sort())
      expect([...writes.entries()].filter(([, n]) => n !== 1)).toEqual([])
      const synced = new Map(live.map((a) => [a.metadata.name, a.status?.operationState?.finishedAt]))
      const after = await applications()
      expect(after.map((a) => a.metadata.name).sort()).toEqual(lost.map((a) => a.metadata.name).sort())
      for (const a of after) {
        expect(a.metadata.labels?.["operator.aicr.run/runtime-uid"], a.metadata.name).toBe(newUid)
        expect(a.spec, a.metadata.name).toEqual(spec.get(a.metadata.name))
        expect(a.status?.operationState?.finishedAt, a.metadata.name).toBe(synced.get(a.metadata.name))
      }
      await eventually(async () => ((await get(RUNTIME)).status?.plans?.active === r.spec.toDigest ? true : undefined), {
        timeoutMs: 120_000,
        what: "the adopted plan active",
      })
      // The runtime as the team had it resolves to what runs: Ready, and no rollout of a change.
      await eventually(async () => (conditionOf(await get(RUNTIME), "Ready")?.status === "True" ? true : undefined), {
        timeoutMs: 600_000,
        what: "Ready=True after the adoption",
      }).catch(async (e: unknown) => {
        const rt = await get(RUNTIME)
        throw new Error(
          `${String(e)}; conditions ${JSON.stringify(rt.status?.conditions?.map((c: Cond) => `${c.type}=${c.status}/${c.reason}: ${c.message}`))}`,
        )
      })
      expect((await rollouts()).filter((x) => x.metadata.labels?.[OUTCOME] === undefined).map((x) => x.metadata.name)).toEqual([])
      expect(oldUid).not.toBe(newUid)
      await end("6. (second part) re-adoption with one approval")
    },
  )

  it(
    "9 (rest). a node going NotReady and a registry outage show in the runtime's Ready with their cause, read with kubectl, and clear on recovery; the training job runs on (after 6)",
    { timeout: 1_200_000 },
    async () => {
      begin()
      const readyColumns = async () =>
        (
          await kubectl(
            "get",
            "clusterruntime",
            "cluster",
            "-o",
            'jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}',
          )
        ).trim()
      const readyMessage = () => kubectl("get", "clusterruntime", "cluster", "-o", 'jsonpath={.status.conditions[?(@.type=="Ready")].message}')
      const waitReady = (what: string, want: (columns: string, message: string) => boolean) =>
        eventually(
          async () => {
            const [c, m] = [await readyColumns(), await readyMessage()]
            return want(c, m) ? m : undefined
          },
          { timeoutMs: 300_000, intervalMs: 1_000, what },
        ).catch(async (e: unknown) => {
          throw new Error(`${String(e)}; Ready ${await readyColumns()}: ${await readyMessage()}`)
        })
      await waitReady("Ready=True before the outages", (c) => c.startsWith("True/"))

      // (a) A node's kubelet goes silent: its Lease taken by a holder that never renews it, so kwok (which plays the
      // kubelets) stops heartbeating it, and the node lifecycle controller marks it Unknown and its pods not ready.
      // A DaemonSet's pod there need not show (the DaemonSet controller may drop an unreachable node from its desired
      // count, and Argo CD then keeps the DaemonSet Healthy): the node taken is one where a Deployment of the stack has
      // a replica, and not the training job's. The real charts place their Deployments on the system nodes (GPU nodes
      // run their DaemonSets only), so that is a system node; a GPU node is taken first when one qualifies. Such a node
      // carries several releases' pods, so Ready names several releases (the first few, "and N more"): each one named
      // must have a pod on that node.
      interface StackPod {
        metadata: { name: string; namespace: string; labels?: Record<string, string>; ownerReferences?: Array<{ kind: string; name: string }> }
        spec: { nodeName?: string }
      }
      // Which release a workload belongs to: the Application whose managed resources list it (kind/namespace/name).
      const owner = new Map<string, string>()
      for (const a of await applications())
        for (const r of (a.status as { resources?: Array<{ kind: string; namespace?: string; name: string }> } | undefined)?.resources ?? [])
          if (["Deployment", "DaemonSet", "StatefulSet"].includes(r.kind)) owner.set(`${r.kind}/${r.namespace}/${r.name}`, a.metadata.name)
      const deploymentOf = (p: StackPod) => {
        const rs = p.metadata.ownerReferences?.find((o) => o.kind === "ReplicaSet")?.name
        const hash = p.metadata.labels?.["pod-template-hash"]
        return rs !== undefined && hash !== undefined && rs.endsWith(`-${hash}`)
          ? `Deployment/${p.metadata.namespace}/${rs.slice(0, -hash.length - 1)}`
          : undefined
      }
      const releaseOf = (p: StackPod) => {
        const direct = p.metadata.ownerReferences?.find((o) => o.kind === "DaemonSet" || o.kind === "StatefulSet")
        return owner.get(direct !== undefined ? `${direct.kind}/${p.metadata.namespace}/${direct.name}` : (deploymentOf(p) ?? ""))
      }
      /** The releases Ready names, with the health it gives each. */
      const named = (message: string) => [...message.matchAll(/release (\S+) at \S+: health (\w+)/gu)].map((m) => [m[1]!, m[2]!] as const)
      const pods = (await json<{ items: StackPod[] }>("get", "pods", "-A")).items
      const gpuFirst = (p: StackPod) => (p.spec.nodeName?.startsWith("kwok-gpu-") === true ? 0 : 1)
      const candidates = pods
        .filter((p) => p.spec.nodeName?.startsWith("kwok-") === true && p.spec.nodeName !== training.node && owner.has(deploymentOf(p) ?? ""))
        .sort((a, b) => gpuFirst(a) - gpuFirst(b))
      expect(
        candidates.length,
        `a Deployment replica of the stack on a node other than the training job's (${training.node}); pods on kwok nodes: ${pods
          .filter((p) => p.spec.nodeName?.startsWith("kwok-"))
          .map((p) => `${p.metadata.namespace}/${p.metadata.name}@${p.spec.nodeName}`)
          .join(", ")}`,
      ).toBeGreaterThan(0)
      const node = candidates[0]!.spec.nodeName!
      const onNode = new Set(pods.filter((p) => p.spec.nodeName === node).flatMap((p) => releaseOf(p) ?? []))
      const micro = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/u, ".$1000Z")
      const lease = (spec: Record<string, unknown>) =>
        sh(`kubectl -n kube-node-lease patch lease ${node} --context admin --type merge -p '${JSON.stringify({ spec })}'`)
      const nodeReady = async () => (await kubectl("get", "node", node, "-o", 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')).trim()
      const t0 = Date.now()
      expect((await lease({ holderIdentity: "silent-kubelet", renewTime: micro(Date.now()), leaseDurationSeconds: 3600 })).code).toBe(0)
      let nodeDown = ""
      try {
        await eventually(async () => ((await nodeReady()) === "Unknown" ? true : undefined), { timeoutMs: 180_000, intervalMs: 1_000, what: `${node} Unknown` })
        nodeDown = await waitReady(
          `Ready=False/NotReady naming releases with pods on ${node} (${[...onNode].join(", ")})`,
          (c, m) => c === "False/NotReady" && named(m).length > 0,
        )
        timings.push([`9. node ${node} silent → Ready=False/NotReady`, (Date.now() - t0) / 1000])
        for (const [r, health] of named(nodeDown)) {
          expect(onNode, `${r}, named in: ${nodeDown}`).toContain(r)
          expect(health, r).toMatch(/^(Progressing|Degraded)$/u)
        }
      } finally {
        // The kubelet back: its Lease expired, kwok takes the node again and marks it Ready.
        expect((await lease({ holderIdentity: "silent-kubelet", renewTime: micro(Date.now() - 7_200_000), leaseDurationSeconds: 40 })).code).toBe(0)
      }
      await eventually(async () => ((await nodeReady()) === "True" ? true : undefined), { timeoutMs: 180_000, intervalMs: 1_000, what: `${node} Ready again` })
      // The registry outage below is read on the first release the node's outage named.
      const release = named(nodeDown)[0]![0]
      // The returning kubelet reports its pods ready again (kwok's stages only make Pending pods ready): played here.
      const t1 = Date.now()
      for (const p of (await json<{ items: StackPod[] }>("get", "pods", "-A", "--field-selector", `spec.nodeName=${node}`)).items) {
        const at = new Date().toISOString()
        const conditions = ["Ready", "ContainersReady"].map((type) => ({ type, status: "True", lastTransitionTime: at }))
        const patched = await sh(
          `kubectl -n ${p.metadata.namespace} patch pod ${p.metadata.name} --subresource status --context admin --type strategic -p '${JSON.stringify({ status: { conditions } })}'`,
        )
        expect(patched.code, patched.stderr).toBe(0)
      }
      await waitReady("Ready=True after the node came back", (c) => c.startsWith("True/"))
      timings.push([`9. node ${node} back → Ready=True`, (Date.now() - t1) / 1000])

      // (b) The registry stops answering while Argo CD must read a chart again (a hard refresh, as
      // `argocd app get --hard-refresh` asks): Argo CD's ComparisonError shows in Ready, naming the registry.
      const recorded = (JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { procs: Array<{ name: string; pid: number; bin: string; log: string }> })
        .procs
      const reg = recorded.find((p) => p.name === "registry")!
      expect(reg, "the plane's registry process").toBeDefined()
      const address = plane().registry
      const refresh = async (name: string) =>
        expect((await sh(`kubectl -n ${ARGOCD_NAMESPACE} annotate application ${name} argocd.argoproj.io/refresh=hard --overwrite --context admin`)).code).toBe(
          0,
        )
      const t2 = Date.now()
      await adoptProc(reg.name, reg.pid, reg.bin, reg.log).stop()
      try {
        await refresh(release)
        const down = await waitReady(
          "Ready=False/NotReady for the registry outage",
          (c, m) => c === "False/NotReady" && m.includes(`release ${release} at `) && m.includes("ComparisonError: "),
        )
        timings.push(["9. registry stopped → Ready=False/NotReady (ComparisonError)", (Date.now() - t2) / 1000])
        expect(down).toContain(address)
      } finally {
        // The registry back on its address and storage, as the plane ran it.
        restartedRegistry = await startRegistry({ dir: plane().dir, port: Number(address.split(":")[1]) })
      }
      const t3 = Date.now()
      await refresh(release)
      await waitReady("Ready=True after the registry came back", (c) => c.startsWith("True/"))
      timings.push(["9. registry back → Ready=True", (Date.now() - t3) / 1000])
      await end("9. node NotReady and registry outage")
    },
  )
})
