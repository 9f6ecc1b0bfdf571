// The step-executor as it ships (its esbuild bundle, as its own process) on a fresh local control plane with a real
// Argo CD v3.4.2 and 13 charts in the runtime registry, pods on kwok nodes. Not a test: it prints one JSON line.
//  - a clean 13-release install: per-edge overhead (release seen ready at its revision → next Application seen
//    written, both from one watch), time per step, API writes and reads per step (audit log: the executor runs as an
//    identity whose reads are audited too);
//  - idle, as a user runs it (the shipped bundle started as the image starts it, no node flags unless BENCH_NODE_FLAGS,
//    no forced GC: packages/runtime/bench/idle.ts): RSS sampled every 5 s over BENCH_IDLE_MINUTES (default 5) after
//    that install ended (the rollout closed, 13 Applications watched), then apart what a full GC leaves, and the API
//    requests it made per idle minute (audit log; architecture.md §7: budget ≤ 80 MiB per idle controller);
//  - suspend latency (suspendEngine set → every Application seen with automated sync off) and resume, over
//    BENCH_SUSPEND_ROUNDS rounds (default 5);
//  - chaos: upgrades of the 13 releases while the executor is SIGKILLed at random points and restarted, until at
//    least 20 kills happened during rollouts: each kill 0.1–1.5 s after the process synced its caches (on a loaded
//    machine a restart takes longer than that, and a kill before it acts tests nothing); every rollout must finish,
//    and the audit log must show each Application written once per step (writes the API server took; the repeats it
//    refused, decided on a view that had moved, are counted apart by why, as `refused`);
//  - side by side, the same 13 charts through Argo CD sync waves (an app-of-apps chart, one wave per release, Argo CD's
//    default 2 s wave delay, child health assessed by a Lua health check in argocd-cm) and through a loop that polls
//    readiness every 30 s: the same per-edge overhead, measured from the same kind of watch.
// Run: npx tsx apps/step-executor/bench/rollout.bench.ts [--idle-only] [--no-chaos] [--no-baselines]
//   [--flags <set>]… [--rounds N]
//   (hack/bench.ts runs it as `step-executor`). BENCH_EXECUTOR_BUNDLE=<dir>/main.mjs measures a bundle built before
//   (e.g. of an older commit) instead of building this tree's. The executor runs with the environment the chart gives
//   it (values.yaml `stepExecutor`: NODE_OPTIONS, MALLOC_ARENA_MAX) and its bundle's own V8 flags; BENCH_NODE_FLAGS
//   replaces that environment (node flags, and `NAME=value` environment variables, e.g. `AICR_V8_FLAGS=` for none).
//   Side by side: each `--flags <set>` (a BENCH_NODE_FLAGS value, or `shipped`) runs the whole bench once per round,
//   one after the other, each on its own fresh control plane, the order reversed every other round; it prints every
//   run's line, then one line with each set's runs (and the load average around each) and its edges pooled.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { ANNOTATION_EDITED_BY, type Plan, type RolloutStep } from "@aicr/api"
import { ANNOTATION_CHART_DIGEST, isReadyAt } from "@aicr/argocd"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  type AuditEvent,
  componentUser,
  createNamespace,
  eventually,
  expectOk,
  helmApplication,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  readAuditEvents,
  repoRoot,
  startArgoCd,
  startControlPlane,
  writeKubeconfig,
} from "@aicr/testing/harness"
import { buildApp } from "../../../hack/build-apps"
import { memoryEnvOf } from "../../../hack/local-operator"
import { mib, procStatus as readProcStatus, sampleIdle, shippedOrBenchFlags, type Shipped, startShipped } from "@aicr/runtime/bench/idle"
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
  startRecorder,
  writePlan,
} from "@aicr/testing/world"

const N = 13
const NAMES = Array.from({ length: N }, (_, i) => `rel-${String(i + 1).padStart(2, "0")}`)

/** Argo CD health of a child Application = the child's own health (Progressing until it has one). */
const CHILD_HEALTH = `local hs = { status = "Progressing", message = "" }
if obj.status ~= nil and obj.status.health ~= nil and obj.status.health.status ~= nil then
  hs.status = obj.status.health.status
  hs.message = obj.status.health.message or ""
end
return hs
`

/** A chart that holds the given child Applications verbatim (the app-of-apps parent). */
const wavesChart = async (h: IsolatedHelm, apps: ReadonlyArray<unknown>): Promise<string> => {
  const dir = join(h.work, "charts-src", "waves")
  mkdirSync(join(dir, "templates"), { recursive: true })
  writeFileSync(join(dir, "Chart.yaml"), "apiVersion: v2\nname: waves\nversion: 0.1.0\ntype: application\n")
  writeFileSync(join(dir, "templates", "apps.yaml"), apps.map((a) => `---\n${JSON.stringify(a)}\n`).join(""))
  await h.helm("package", dir, "-d", join(h.work, "pkgs"))
  return join(h.work, "pkgs", "waves-0.1.0.tgz")
}
const MIN_KILLS = 20
const IDLE_MINUTES = Number(process.env["BENCH_IDLE_MINUTES"] ?? 5)
/** Suspensions (and resumptions) in a row after the install: medians of these and every round are printed. */
const SUSPEND_ROUNDS = Number(process.env["BENCH_SUSPEND_ROUNDS"] ?? 5)
const AUDITED = "aicr-audited-controller"
/** `--idle-only`: stop after the idle RSS (the install and its idle RSS only, a few minutes instead of ~10). */
class Done extends Error {}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!
const ms = (x: number) => Math.round(x)
const load1 = () => +loadavg()[0]!.toFixed(1)

const flagSets = process.argv.flatMap((a, i) => (a === "--flags" ? [process.argv[i + 1] ?? ""] : []))
if (flagSets.length > 0) {
  const rounds = process.argv.includes("--rounds") ? Number(process.argv[process.argv.indexOf("--rounds") + 1]) : 1
  const rest = process.argv.slice(2).filter((a, i, all) => a !== "--flags" && a !== "--rounds" && all[i - 1] !== "--flags" && all[i - 1] !== "--rounds")
  /** One run of this bench as its own process; its last JSON line. */
  const runOnce = (set: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env }
      if (set === "shipped") delete env["BENCH_NODE_FLAGS"]
      else env["BENCH_NODE_FLAGS"] = set
      const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...rest], { env, stdio: ["ignore", "pipe", "inherit"] })
      let out = ""
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString("utf8")
        process.stdout.write(d)
      })
      child.on("exit", (code) => {
        const line = out
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .at(-1)
        if (code !== 0 || line === undefined) reject(new Error(`the run with flags "${set}" exited ${code}`))
        else resolve(JSON.parse(line) as Record<string, unknown>)
      })
    })
  type Run = { round: number; started: string; loadAverage1m: { before: number; after: number }; result: Record<string, unknown> }
  const runs = new Map<string, Run[]>(flagSets.map((f) => [f, []]))
  for (let round = 1; round <= rounds; round++)
    for (const set of round % 2 === 1 ? flagSets : [...flagSets].reverse()) {
      const before = load1()
      const started = new Date().toISOString()
      const result = await runOnce(set)
      runs.get(set)!.push({ round, started, loadAverage1m: { before, after: load1() }, result })
    }
  const summary = [...runs].map(([set, rs]) => {
    const edges = rs.flatMap((r) => (r.result["install"] as { edgesMs: number[] }).edgesMs)
    const idle = rs.map((r) => r.result["idleAfterInstall"] as { rssMiB: { median: number; first: number; last: number }; peakMiB: number; where?: unknown })
    return {
      flags: set,
      runs: rs.map((r, i) => ({
        round: r.round,
        started: r.started,
        loadAverage1m: r.loadAverage1m,
        edgeOverheadMs: (r.result["install"] as { edgeOverheadMs: unknown }).edgeOverheadMs,
        executorCpuMs: (r.result["install"] as { executorCpuMs?: number }).executorCpuMs,
        idleRssMiB: idle[i]!.rssMiB,
        peakMiB: idle[i]!.peakMiB,
        where: idle[i]!.where,
      })),
      pooledEdges: { edges: edges.length, p50: ms(pct(edges, 50)), p99: ms(pct(edges, 99)), max: ms(Math.max(...edges)) },
    }
  })
  console.log(JSON.stringify({ what: `step-executor side by side: ${flagSets.length} flag sets × ${rounds} rounds`, sideBySide: summary }))
  process.exit(0)
}

const work = mkdtempSync(join(tmpdir(), "step-executor-bench-"))
let keep = false
const plane = await startControlPlane({ fresh: true })
const { info } = plane
const helm = await isolatedHelm("aicr-bench-exec-")

/**
 * Per-edge overhead: for each release but the last, from the first watch event showing it ready at the revision it targets to the first
 * event showing the next release's Application written.
 */
const edgeTimes = (
  r: ReturnType<typeof startRecorder>,
  app: (release: string) => string,
  written: (r: ReturnType<typeof startRecorder>, app: string) => Recorded | undefined,
  names: ReadonlyArray<string> = NAMES,
): number[] =>
  names.slice(0, -1).map((n, i) => {
    const ready = r.apps(app(n)).find((e) => isReadyAt(e.object, e.object.spec?.source.targetRevision ?? ""))
    const next = written(r, app(names[i + 1]!))
    if (ready === undefined || next === undefined) throw new Error(`edge ${app(n)} → ${app(names[i + 1]!)} not seen`)
    return next.t - ready.t
  })

try {
  await applyManifests(info, join(repoRoot(), "crds"))
  const ns = await createNamespace(info, "aicr-bench")
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "admin" } },
      spec: { intent: "training", platform: "kubeflow", validation: { deployment: "Disabled" } },
    },
  ])
  const uid: string = (await get(info, RUNTIME)).metadata.uid
  const names = NAMES
  const charts: Record<string, Chart> = {}
  const argo = await startArgoCd(info)
  for (const v of ["0.1.0", "0.2.0", "0.3.0"]) for (const n of names) charts[`${n}@${v}`] = await pushChart(info, helm, n, v)
  const target = (n: string) => `bench-${n}`
  await installProject(info, names.map(target))
  const plan = (v: string) =>
    writePlan(
      info,
      ns,
      uid,
      names.map((n) => ({ chart: charts[`${n}@${v}`]!, namespace: target(n) })),
    )
  const plans: Record<string, Plan> = { v1: await plan("0.1.0"), v2: await plan("0.2.0"), v3: await plan("0.3.0") }
  const prebuilt = process.env["BENCH_EXECUTOR_BUNDLE"]
  const built = prebuilt !== undefined ? { entry: prebuilt, atStartBytes: 0 } : await buildApp("step-executor", join(work, "dist"))
  const kubeconfig = writeKubeconfig(join(work, "executor.kubeconfig"), info.server, info.caFile, [
    { name: AUDITED, token: componentUser(info.dir, AUDITED).token },
  ])
  const recorder = startRecorder(info)
  await recorder.ready

  let child: ChildProcess | undefined
  const log = openSync(join(work, "step-executor.log"), "a")
  let shipped: Shipped | undefined
  const procStatus = (field: "VmRSS" | "VmHWM") => readProcStatus(child!.pid!, field)
  /** The executor's CPU time so far (user + system, /proc/<pid>/stat), in ms: what a pass costs, whatever the load. */
  const cpuMs = () => {
    const stat = readFileSync(`/proc/${child!.pid!}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  }
  // As the chart runs it: its environment from values.yaml (NODE_OPTIONS, MALLOC_ARENA_MAX), no node flags, the
  // bundle's own V8 flags. BENCH_NODE_FLAGS replaces that, to measure alternatives (e.g. `AICR_V8_FLAGS=` for none).
  const nodeFlags = shippedOrBenchFlags(memoryEnvOf("step-executor"))
  const startExecutor = () => {
    shipped = startShipped(
      built.entry,
      ["--kubeconfig", kubeconfig, "--leader-elect=false", "--log-level=info", "--operator-namespace", ns, "--step-timeout", "180s", "--sync-retries", "1"],
      { workDir: work, nodeFlags, stdio: ["ignore", log, log] },
    )
    child = shipped.child
  }
  const logFile = join(work, "step-executor.log")
  const syncedCount = () => readFileSync(logFile, "utf8").split("Caches synced").length - 1
  /** Starts the executor and waits until it synced its caches and started its workers. */
  const startReady = async () => {
    const before = syncedCount()
    startExecutor()
    await eventually(async () => syncedCount() > before, { timeoutMs: 120_000, intervalMs: 50, what: "the restarted executor's caches synced" })
  }
  const kill = async () => {
    const c = child!
    const exited = new Promise((r) => c.once("exit", r))
    c.kill("SIGKILL")
    await exited
  }
  const steps = (action: RolloutStep["action"]): RolloutStep[] => names.map((release) => ({ release, namespace: target(release), action }))
  const completed = async (name: string) =>
    (await get(info, `${ROLLOUTS}/${name}`)).status?.conditions?.some(
      (c: { type: string; reason: string }) => c.type === "Progressing" && c.reason === "StepsCompleted",
    ) === true
  /** The executor's creates and applies of Applications (audit log), whatever the answer. */
  const attempts = (name?: string) =>
    readAuditEvents(info, { resource: "applications", namespace: ARGOCD_NAMESPACE, ...(name ? { name } : {}) }).filter(
      (e) =>
        (e as unknown as { userAgent?: string }).userAgent?.startsWith("aicr-step-executor") &&
        (e.verb === "create" || (e.verb === "patch" && e.requestURI.includes("force="))),
    )
  /** Application writes the API server took; a refused one (decided on a view that had moved: AlreadyExists, Conflict) changed nothing. */
  const applies = (name?: string) => attempts(name).filter((e) => (e.responseStatus?.code ?? 0) < 300)
  const refused = (name?: string) => attempts(name).filter((e) => e.responseStatus?.code === 409)
  /** Why each refused write was refused: a stale view (AlreadyExists, Conflict) or the create's own Update entry (then sent with force). */
  const refusedWhy = (es: AuditEvent[]) =>
    es.reduce<Record<string, number>>((m, e) => {
      const r = e.responseStatus as unknown as { reason?: string; message?: string } | undefined
      const k =
        r?.message?.startsWith("Apply failed with") === true
          ? "FieldManagerConflict (the create's own Update entry; sent again with force)"
          : r?.reason === "AlreadyExists"
            ? "AlreadyExists (decided on an absent Application)"
            : "Conflict (decided on an older resourceVersion)"
      return { ...m, [k]: (m[k] ?? 0) + 1 }
    }, {})
  /** The executor's API requests from the audit log (its identity's reads are audited): writes, get/list, new watches. */
  const WRITES = new Set(["create", "update", "patch", "delete", "deletecollection"])
  const requests = () => {
    const mine = readAuditEvents(info, { username: `system:${AUDITED}` })
    const done = (e: AuditEvent) => e.stage === "ResponseComplete"
    return {
      writes: mine.filter((e) => done(e) && WRITES.has(e.verb)).length,
      reads: mine.filter((e) => done(e) && (e.verb === "get" || e.verb === "list")).length,
      watches: mine.filter((e) => e.verb === "watch" && e.stage === "ResponseStarted").length,
      writesByResource: mine
        .filter((e) => done(e) && WRITES.has(e.verb))
        .reduce<Record<string, number>>((m, e) => {
          const k = `${e.verb} ${e.objectRef?.resource ?? "?"}${e.objectRef?.subresource !== undefined ? `/${e.objectRef.subresource}` : ""}`
          return { ...m, [k]: (m[k] ?? 0) + 1 }
        }, {}),
      readsByResource: Object.entries(
        mine
          .filter((e) => done(e) && (e.verb === "get" || e.verb === "list"))
          .reduce<Record<string, number>>(
            (m, e) => ({ ...m, [`${e.verb} ${e.objectRef?.resource ?? "?"}`]: (m[`${e.verb} ${e.objectRef?.resource ?? "?"}`] ?? 0) + 1 }),
            {},
          ),
      ),
    }
  }
  const minus = (a: ReturnType<typeof requests>, b: ReturnType<typeof requests>) => ({
    writes: a.writes - b.writes,
    reads: a.reads - b.reads,
    watches: a.watches - b.watches,
    writesByResource: Object.fromEntries(
      Object.entries(a.writesByResource)
        .map(([k, v]) => [k, v - (b.writesByResource[k] ?? 0)])
        .filter(([, v]) => v !== 0),
    ),
  })

  // 1. A clean install (first, the executor idle before any Application exists).
  startExecutor()
  await eventually(async () => (await get(info, RUNTIME)).status?.engine !== undefined, { timeoutMs: 60_000, what: "the executor's first pass" })
  await sleep(5_000)
  const rssBeforeInstall = procStatus("VmRSS")
  const req0 = requests()
  const loadAtInstall = load1()
  const cpu0 = cpuMs()
  const t0 = performance.now()
  await createRollout(info, { name: "bench-1", runtimeUID: uid, to: plans.v1!, steps: steps("Install") })
  await eventually(() => completed("bench-1"), { timeoutMs: 600_000, intervalMs: 200, what: "bench-1 completed" })
  const installSeconds = (performance.now() - t0) / 1000
  const installCpuMs = cpuMs() - cpu0
  await sleep(1_000) // the last pass's status writes
  const reqInstall = minus(requests(), req0)
  const edges = edgeTimes(
    recorder,
    (n) => n,
    (r, a) => r.apps(a).find((e) => e.object.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === charts[`${a}@0.1.0`]!.digest),
  )
  await closeRollout(info, "bench-1", "Succeeded")

  // 1b. Idle as a user runs it: RSS without any forced GC, sampled over IDLE_MINUTES, and the API requests meanwhile;
  // then, apart, what a full GC leaves.
  await sleep(10_000)
  const reqIdle0 = requests()
  const sampled = await sampleIdle(shipped!, { minutes: IDLE_MINUTES })
  const reqIdle = minus(requests(), reqIdle0)
  const idle = {
    ...sampled,
    rssBeforeInstallMiB: mib(rssBeforeInstall),
    atStartKiB: Math.round(built.atStartBytes / 1024),
    requestsPerIdleMinute: {
      writes: +(reqIdle.writes / sampled.minutes).toFixed(2),
      reads: +(reqIdle.reads / sampled.minutes).toFixed(2),
      watches: +(reqIdle.watches / sampled.minutes).toFixed(2),
    },
  }
  const installFigures = {
    seconds: +installSeconds.toFixed(1),
    perStepSeconds: +(installSeconds / N).toFixed(2),
    edges: edges.length,
    edgeOverheadMs: { p50: ms(pct(edges, 50)), p99: ms(pct(edges, 99)), max: ms(Math.max(...edges)) },
    edgesMs: edges.map(ms),
    executorCpuMs: installCpuMs,
    loadAverage1m: { atInstall: loadAtInstall, afterIdle: load1() },
    executorApiWritesPerStep: +(reqInstall.writes / N).toFixed(1),
    executorApiReadsPerStep: +(reqInstall.reads / N).toFixed(1),
    executorWatchesStarted: reqInstall.watches,
    executorApiWritesByResource: reqInstall.writesByResource,
  }
  if (process.argv.includes("--idle-only")) {
    console.log(
      JSON.stringify({
        what: `step-executor bundle after a ${N}-release install (--idle-only)`,
        bundle: built.entry,
        nodeFlags,
        install: installFigures,
        idleAfterInstall: idle,
      }),
    )
    child!.kill("SIGKILL")
    throw new Done()
  }

  // 2. Suspend latency: BENCH_SUSPEND_ROUNDS (default 5) suspensions and resumptions in a row, medians and every round.
  const rounds: Array<{ suspendMs: number; lastSuspendedMs: number; resumeMs: number }> = []
  for (let round = 0; round < SUSPEND_ROUNDS; round++) {
    const s0 = Date.now()
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { suspendEngine: true } } }), "suspend")
    await eventually(
      async () =>
        (await get(info, APPS)).items.every(
          (a: { spec: { syncPolicy?: { automated?: { enabled?: boolean } } } }) => a.spec.syncPolicy?.automated?.enabled === false,
        ),
      { timeoutMs: 60_000, intervalMs: 20, what: "all suspended" },
    )
    const suspendMs = Date.now() - s0
    // The watch may deliver an event after the poll saw it.
    const lastSuspended = await eventually(
      async () => {
        const seen = names.map((n) => recorder.apps(n).find((e) => e.t >= s0 && e.object.spec?.syncPolicy?.automated?.enabled === false)?.t)
        return seen.every((t) => t !== undefined) ? Math.max(...(seen as number[])) : undefined
      },
      { timeoutMs: 10_000, intervalMs: 20, what: "every suspension seen by the watch" },
    )
    const r0 = Date.now()
    expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { suspendEngine: null } } }), "resume")
    await eventually(
      async () =>
        (await get(info, APPS)).items.every(
          (a: { spec: { syncPolicy?: { automated?: { enabled?: boolean } } } }) => a.spec.syncPolicy?.automated?.enabled === undefined,
        ),
      { timeoutMs: 60_000, intervalMs: 20, what: "all resumed" },
    )
    rounds.push({ suspendMs, lastSuspendedMs: lastSuspended - s0, resumeMs: Date.now() - r0 })
    await sleep(1000)
  }
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const suspendFigures = {
    allSuspendedSeenByPollMs: mid(rounds.map((r) => r.suspendMs)),
    lastSuspensionSeenByWatchMs: mid(rounds.map((r) => r.lastSuspendedMs)),
    allResumedSeenByPollMs: mid(rounds.map((r) => r.resumeMs)),
    rounds,
  }

  // What is measured so far, in case a later phase fails.
  console.log(
    JSON.stringify({
      phase: "install, idle, suspend",
      bundle: built.entry,
      nodeFlags,
      install: installFigures,
      idleAfterInstall: idle,
      suspend: suspendFigures,
    }),
  )

  // 3. Chaos: upgrades while the executor is killed at random points.
  const chaosOn = !process.argv.includes("--no-chaos")
  let kills = 0
  const chaos: Array<{ rollout: string; seconds: number; kills: number }> = []
  const sequence = [
    ["v1", "v2"],
    ["v2", "v3"],
    ["v3", "v1"],
    ["v1", "v2"],
    ["v2", "v3"],
  ] as const
  const before = Object.fromEntries(names.map((n) => [n, applies(n).length]))
  const refusedBefore = refused().length
  let rollouts = 0
  for (const [from, to] of sequence) {
    if (kills >= MIN_KILLS || !chaosOn) break
    const name = `bench-chaos-${++rollouts}`
    const c0 = performance.now()
    const k0 = kills
    await createRollout(info, { name, runtimeUID: uid, from: plans[from]!, to: plans[to]!, steps: steps("Upgrade") })
    while (!(await completed(name))) {
      await sleep(100 + Math.random() * 1400)
      if (await completed(name)) break
      await kill()
      kills++
      await startReady()
      if (performance.now() - c0 > 900_000) throw new Error(`${name} did not finish within 15 minutes under chaos`)
    }
    chaos.push({ rollout: name, seconds: +((performance.now() - c0) / 1000).toFixed(1), kills: kills - k0 })
    await closeRollout(info, name, "Succeeded")
  }
  const repeated = names.map((n) => ({ n, writes: applies(n).length - before[n]! })).filter((x) => x.writes !== rollouts)
  await kill()
  const stats = (xs: number[]) => ({ p50: ms(pct(xs, 50)), p99: ms(pct(xs, 99)), max: ms(Math.max(...xs)) })
  const common = {
    what: `step-executor bundle (own process) with Argo CD ${argo.info.version}, ${N} releases on kwok nodes`,
    bundle: built.entry,
    nodeFlags,
    install: installFigures,
    idleAfterInstall: idle,
    suspend: suspendFigures,
    chaos: chaosOn
      ? {
          kills,
          rollouts: chaos,
          everyRolloutFinished: true,
          applicationsWrittenOncePerStep: repeated.length === 0,
          repeated,
          refused: refusedWhy(refused().slice(refusedBefore)),
        }
      : "skipped (--no-chaos)",
  }
  if (repeated.length > 0) {
    // What to look at: each apply of a repeated Application (when, the answer) and the executor's log lines naming it.
    const detail = repeated.map(({ n }) => ({
      application: n,
      applies: attempts(n).map((e) => {
        const t = e as unknown as { requestReceivedTimestamp?: string; stageTimestamp?: string }
        return { received: t.requestReceivedTimestamp, done: t.stageTimestamp, stage: e.stage, code: e.responseStatus?.code }
      }),
      log: readFileSync(logFile, "utf8")
        .split("\n")
        .filter((l) => l.includes(`argocd/${n}"`) || l.includes("Caches synced"))
        .slice(-80),
    }))
    console.log(JSON.stringify({ repeatedDetail: detail }))
    throw new Error(`Applications written more than once per step: ${JSON.stringify(repeated)}`)
  }
  if (process.argv.includes("--no-baselines")) {
    console.log(JSON.stringify({ ...common, syncWaves: "skipped (--no-baselines)", polling30s: "skipped (--no-baselines)" }))
    throw new Done()
  }

  // 4. Argo CD sync waves: an app-of-apps whose chart holds one child Application per release, wave i.
  await recorder.stop()
  await argo.stop()
  const waveArgo = await startArgoCd(info, { syncWaveDelaySeconds: 2 })
  // Argo CD 1.8+ no longer assesses an Application's health inside another; this health check passes the child's on.
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "argocd-cm", namespace: ARGOCD_NAMESPACE, labels: { "app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd" } },
      data: { "resource.customizations.health.argoproj.io_Application": CHILD_HEALTH },
    },
  ])
  const waves = await wavesChart(
    helm,
    names
      .map((n) =>
        helmApplication({
          name: `wave-${n}`,
          repoURL: charts[`${n}@0.1.0`]!.ref.replace(/\/[^/]+$/u, ""),
          chart: n,
          targetRevision: "0.1.0",
          destinationNamespace: `wave-${n}`,
        }),
      )
      .map((a, i) => ({ ...a, metadata: { ...a.metadata, annotations: { "argocd.argoproj.io/sync-wave": String(i + 1) } } })),
  )
  const parent = await pushChart(info, helm, "waves", "0.1.0", waves)
  const recorder2 = startRecorder(info)
  await recorder2.ready
  const w0 = performance.now()
  await applyManifests(info, [
    helmApplication({
      name: "waves",
      repoURL: parent.ref.replace(/\/[^/]+$/u, ""),
      chart: "waves",
      targetRevision: "0.1.0",
      destinationNamespace: ARGOCD_NAMESPACE,
      finalizer: false,
    }),
  ])
  await eventually(
    async () =>
      (await get(info, `${APPS}/wave-${names[N - 1]}`).catch(() => undefined)) !== undefined &&
      isReadyAt(await get(info, `${APPS}/wave-${names[N - 1]}`), "0.1.0"),
    { timeoutMs: 900_000, intervalMs: 500, what: "the last wave ready" },
  )
  const wavesSeconds = (performance.now() - w0) / 1000
  const waveEdges = edgeTimes(
    recorder2,
    (n) => `wave-${n}`,
    (r, a) => r.apps(a)[0],
  )

  // 5. A loop that polls every 30 s: write a release, look again every 30 s until it is ready, then the next.
  const p0 = performance.now()
  for (const n of names) {
    await applyManifests(info, [
      helmApplication({
        name: `poll-${n}`,
        repoURL: charts[`${n}@0.1.0`]!.ref.replace(/\/[^/]+$/u, ""),
        chart: n,
        targetRevision: "0.1.0",
        destinationNamespace: `poll-${n}`,
      }),
    ])
    for (;;) {
      await sleep(30_000)
      if (isReadyAt(await get(info, `${APPS}/poll-${n}`), "0.1.0")) break
    }
  }
  const pollSeconds = (performance.now() - p0) / 1000
  const pollEdges = edgeTimes(
    recorder2,
    (n) => `poll-${n}`,
    (r, a) => r.apps(a)[0],
  )
  await recorder2.stop()
  await waveArgo.stop()
  console.log(
    JSON.stringify({
      ...common,
      syncWaves: { what: "app-of-apps, one wave per release, ARGOCD_SYNC_WAVE_DELAY=2", seconds: +wavesSeconds.toFixed(1), edgeOverheadMs: stats(waveEdges) },
      polling30s: { seconds: +pollSeconds.toFixed(1), edgeOverheadMs: stats(pollEdges) },
    }),
  )
} catch (e) {
  if (!(e instanceof Done)) {
    // The executor's log and the bundle stay for a look (the audit log is in the plane's directory).
    keep = true
    console.error(`kept ${work} (step-executor.log) and the control plane's audit log ${info.auditLog}`)
    throw e
  }
} finally {
  await helm.cleanup()
  await plane.stop()
  if (!keep) rmSync(work, { recursive: true, force: true })
}
process.exit(0)
