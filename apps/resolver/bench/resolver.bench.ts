// The resolver as it ships (hack/build-apps.ts bundle), on a local control plane with the process kubelet running the
// real AICR. Not a test: it prints numbers (docs/benchmarks.md).
//   1. overhead over the bare CLI: time from an input change to Resolved=True (recipe Job, bundle Job pushing to the
//      registry, read back, content) against `aicr recipe` + `aicr bundle -o <dir>` run by hand for the same inputs;
//   2. with N extra kwok nodes (default 5000): AICR runs per relevant change, AICR runs and resolver CPU per 1,000
//      node events that change no input, RSS after GC.
//   3. with BENCH_RESOLVER_COMPARE=<main.mjs of another build>: restarts with every node present, that build and this
//      one in turn (two rounds each), on the same plane and nodes: before and after side by side in one run.
// The CPU per 1,000 node events is printed two ways: the resolver's CPU over the window of the 1,000 label patches,
// and the same CPU per 1,000 Node writes the audit log shows in that window (kwok and the node lifecycle controller
// write Nodes too; on a loaded machine they are most of the window's events).
// BENCH_RESOLVER_ENTRY=<main.mjs>: run that build instead of bundling this tree. The resolver runs with the
// environment the chart gives it (values.yaml `resolver`); BENCH_NODE_FLAGS replaces it: node flags and
// `NAME=value` environment variables of the resolver's process (packages/runtime/bench/idle.ts); with
// BENCH_RESOLVER_FLAG_SETS="<set>;<set>…" (an empty set: none) the restarts of 3. run this tree's bundle once per set
// instead, two rounds each: flag sets side by side on the same plane and nodes.
// Needs a running local control plane: npx tsx packages/testing/src/harness/cli.ts up --detach --dir DIR
// Run: npx tsx apps/resolver/bench/resolver.bench.ts DIR [nodes=5000]
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { jobRbac } from "@aicr/aicr"
import {
  aicrBinary,
  type AuditEvent,
  applyManifests,
  createNamespace,
  eventually,
  expectOk,
  gpuNode,
  kubeRequest,
  readAuditEvents,
  readVersions,
  repoRoot,
  runningPlane,
} from "@aicr/testing/harness"
import { buildApp } from "../../../hack/build-apps"
import { memoryEnvOf } from "../../../hack/local-operator"
import { rssBreakdown, shippedOrBenchFlags, splitNodeFlags } from "@aicr/runtime/bench/idle"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: resolver.bench.ts <harness dir> [nodes]")
const extraNodes = Number(process.argv[3] ?? 5000)
// The health check answers within seconds; on a loaded machine it is asked again for up to two minutes.
const info = await eventually(async () => await runningPlane(dir), { timeoutMs: 120_000, intervalMs: 2_000, what: `a healthy control plane in ${dir}` })
const MiB = 1024 * 1024
/** This run's value of the ignored label: a node left labelled by an earlier run still changes. */
const RUN = `run-${Date.now()}`
/** This run's driver revision for the relevant change: a node left with an earlier run's driver still changes. */
const DRIVER_REV = String(Date.now() % 1_000_000)
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const { aicr: VERSION } = readVersions()
const work = mkdtempSync(join(tmpdir(), "resolver-bench-"))
// BENCH_RESOLVER_ENTRY=<main.mjs>: a bundle built before (e.g. from an earlier commit), to compare on the same plane.
const entry = process.env["BENCH_RESOLVER_ENTRY"] ?? (await buildApp("resolver", join(work, "dist"))).entry
const probe = join(work, "rss-probe.mjs")
writeFileSync(
  probe,
  [
    "process.on('SIGUSR2', () => { globalThis.gc(); const m = process.memoryUsage(); process.stderr.write(`RSS ${m.rss} HEAP ${m.heapUsed} ${m.heapTotal} EXT ${m.external} AB ${m.arrayBuffers}\\n`) })",
    // BENCH_HEAP_SNAPSHOT=<prefix>: SIGPWR writes a heap snapshot (<prefix>-<n>.heapsnapshot), to see what the heap holds.
    "let snapshots = 0",
    "process.on('SIGPWR', async () => { const p = process.env.BENCH_HEAP_SNAPSHOT; if (p !== undefined) (await import('node:v8')).writeHeapSnapshot(`${p}-${++snapshots}.heapsnapshot`) })",
    // BENCH_CPU_PROFILE=<file>: the first SIGURG starts V8's CPU profiler, the second writes the profile (.cpuprofile).
    "let session",
    "process.on('SIGURG', async () => {",
    "  const file = process.env.BENCH_CPU_PROFILE",
    "  if (file === undefined) return",
    "  const [{ Session }, { writeFileSync }] = await Promise.all([import('node:inspector'), import('node:fs')])",
    "  if (session === undefined) { session = new Session(); session.connect(); session.post('Profiler.enable', () => session.post('Profiler.start')); return }",
    "  session.post('Profiler.stop', (err, r) => { if (!err) writeFileSync(file, JSON.stringify(r.profile)); session.disconnect(); session = undefined })",
    "})",
    "",
  ].join("\n"),
)
await applyManifests(info, join(repoRoot(), "crds"))
const ns = await createNamespace(info, "aicr-bench")
await applyManifests(info, [...jobRbac({ namespace: ns, discoveryNamespace: ns, serviceAccount: "aicr-jobs", agentServiceAccount: "aicr-agent" })])
await kubeRequest(info, { method: "DELETE", path: RUNTIME })
await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404)
const SPEC = {
  intent: "training",
  platform: "kubeflow",
  criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
  placement: {
    system: { nodeSelector: { "eks.amazonaws.com/nodegroup": "system" } },
    accelerated: { nodeSelector: { "eks.amazonaws.com/nodegroup": "gpu" }, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] },
  },
}
await applyManifests(info, [{ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: SPEC }])

/** The resolver from a bundle, as its own process with the probe; `child` is the one running. */
/** The environment the chart gives the resolver (values.yaml `resolver`), unless BENCH_NODE_FLAGS replaces it. */
const shippedFlags = (): string[] => shippedOrBenchFlags(memoryEnvOf("resolver"))
const startResolver = (main: string, flags: ReadonlyArray<string> = shippedFlags()) => {
  const { nodeFlags, env } = splitNodeFlags(flags)
  const c = spawn(
    process.execPath,
    [
      ...nodeFlags,
      "--expose-gc",
      "--import",
      probe,
      main,
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
      "--log-level=warn",
      "--aicr-version",
      VERSION,
      "--allow-unsupported-aicr=true",
      "--registry",
      `oci://${info.registry}/aicr/bench`,
      "--operator-namespace",
      ns,
      "--component-namespaces",
      "cert-manager,gpu-operator,kai-scheduler,kube-system,kubeflow,monitoring,nvidia-dra-driver,nvsentinel,skyhook",
    ],
    { stdio: ["ignore", "inherit", "pipe"], env: { ...process.env, ...env } },
  )
  c.stderr!.on("data", (d: Buffer) => void (stderr += d.toString()))
  return c
}
let stderr = ""
let child = startResolver(entry)
/** RSS as the process holds it (VmRSS, no forced GC), then after a forced GC (the probe's SIGUSR2), in MiB. */
const rss = async (): Promise<{
  noGc: number
  afterGc: number
  heapUsedAfterGc: number
  heapTotalAfterGc: number
  externalAfterGc: number
  arrayBuffersAfterGc: number
}> => {
  const vm = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))
  const noGc = +(Number(vm?.[1] ?? 0) / 1024).toFixed(1)
  const before = stderr.length
  child.kill("SIGUSR2")
  const m = await eventually(async () => /RSS (\d+) HEAP (\d+) (\d+) EXT (\d+) AB (\d+)/.exec(stderr.slice(before)) ?? undefined, {
    timeoutMs: 10_000,
    intervalMs: 50,
  })
  const mib = (x: string | undefined) => +(Number(x) / MiB).toFixed(1)
  return { noGc, afterGc: mib(m[1]), heapUsedAfterGc: mib(m[2]), heapTotalAfterGc: mib(m[3]), externalAfterGc: mib(m[4]), arrayBuffersAfterGc: mib(m[5]) }
}
/** utime + stime of the resolver process, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (): number => {
  const f = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(f[11]) + Number(f[12])) * 10
}
interface Cond {
  type: string
  status: string
  reason: string
  observedGeneration?: number
}
const runtime = async () =>
  expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "runtime") as {
    metadata: { generation: number }
    status?: { conditions?: Cond[]; resolution?: { inputDigest?: string } }
  }
const resolvedAt = async (notDigest?: string) =>
  eventually(
    async () => {
      const r = await runtime()
      const c = r.status?.conditions?.find((x) => x.type === "Resolved")
      return c?.status === "True" && c.observedGeneration === r.metadata.generation && r.status?.resolution?.inputDigest !== notDigest ? r : undefined
    },
    { timeoutMs: 300_000, intervalMs: 50, what: "Resolved=True" },
  )
const jobs = async () =>
  (
    expectOk(
      await kubeRequest(info, { method: "GET", path: `/apis/batch/v1/namespaces/${ns}/jobs?labelSelector=operator.aicr.run%2Frole%3Daicr-job` }),
      "jobs",
    ) as { items: unknown[] }
  ).items.length
const setOverride = async (value: string) =>
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: RUNTIME,
      contentType: "application/merge-patch+json",
      body: { spec: { overrides: [{ path: "gpuoperator:driver.version", value }] } },
    }),
    "override",
  )

/**
 * 1,000 node events that change no input: an irrelevant label (this value) on 1,000 nodes; the resolver's CPU until
 * 5 s after. Other Node updates land in the same window (kwok's status, the node lifecycle controller's taints and
 * conditions when kwok's heartbeats lag on a loaded machine), none of which changes an input either: the audit log
 * counts every write to a Node the API server accepted in the window (each one a watch event for the resolver; a
 * write that changed nothing sends none, so this may count a few too many and the CPU per event is then lower than
 * what is printed).
 */
const churn = async (value: string): Promise<{ cpuMs: number; seconds: number; nodeEvents: number; cpuMsPer1000NodeEvents: number }> => {
  const since = new Date().toISOString()
  const cpu0 = cpuMs()
  const t0 = performance.now()
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map((name) =>
        kubeRequest(info, {
          method: "PATCH",
          path: `/api/v1/nodes/${name}`,
          contentType: "application/merge-patch+json",
          body: { metadata: { labels: { "bench.aicr.run/touched": value } } },
        }),
      ),
    )
  }
  await sleep(5000)
  const cpu = cpuMs() - cpu0
  const until = new Date().toISOString()
  const events = (readAuditEvents(info, { resource: "nodes" }) as Array<AuditEvent & { requestReceivedTimestamp?: string }>).filter(
    (e) =>
      e.stage === "ResponseComplete" &&
      ["create", "update", "patch", "delete"].includes(e.verb) &&
      (e.responseStatus?.code ?? 0) < 300 &&
      (e.requestReceivedTimestamp ?? "") >= since &&
      (e.requestReceivedTimestamp ?? "") <= until,
  ).length
  return { cpuMs: cpu, seconds: +((performance.now() - t0) / 1000).toFixed(1), nodeEvents: events, cpuMsPer1000NodeEvents: Math.round((cpu / events) * 1000) }
}
/** Every extra node's name; they sort after kwok-gpu-0, so the snapshot agent keeps running on a node with a fake host. */
const names = Array.from({ length: extraNodes }, (_, i) => `zz-bench-gpu-${i}`)
/** VmRSS now, no GC, in MiB. */
const vmRss = () => +(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) / 1024).toFixed(1)
/** VmHWM now: the process's peak RSS so far, in MiB. */
const vmHwm = () => +(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) / 1024).toFixed(1)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/**
 * A restart with every node present, from the bundle at `main`: the first list of 5,006 Nodes, then (once its CPU is
 * quiet) VmRSS over 20 s, idle CPU over 10 s, 1,000 ignored-label events, VmRSS over 20 s after them; then after a GC.
 */
const restartRound = async (label: string, main: string, round: number, flags?: ReadonlyArray<string>) => {
  const exited = new Promise((r) => child.once("exit", r))
  child.kill("SIGTERM")
  await exited
  child = startResolver(main, flags)
  const t0 = performance.now()
  await sleep(15_000)
  for (let last = cpuMs(); performance.now() - t0 < 180_000;) {
    await sleep(3000)
    const now = cpuMs()
    if (now - last < 100) break
    last = now
  }
  const samples = async () => {
    const xs: number[] = []
    for (let i = 0; i < 20; i++, await sleep(1000)) xs.push(vmRss())
    return { median: median(xs), max: Math.max(...xs) }
  }
  const settledSeconds = +((performance.now() - t0) / 1000).toFixed(1)
  const rssIdle = { ...(await samples()), peak: vmHwm(), where: rssBreakdown(child.pid!) }
  const idle0 = cpuMs()
  await sleep(10_000)
  const idleCpuMsPer10s = cpuMs() - idle0
  const events = await churn(`${RUN}-${label}-${round}`)
  const rssAfterEvents = await samples()
  const gc = await rss()
  return { bundle: label, round, settledSeconds, idleCpuMsPer10s, churn: events, rssIdle, rssAfterEvents, afterGc: gc }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

try {
  const first = await resolvedAt()
  const idleRss = await rss()

  // 1. Overhead: five input changes (a different override each time), resolver against the bare CLI.
  const resolverMs: number[] = []
  let digest = first.status?.resolution?.inputDigest
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now()
    await setOverride(`580.105.${10 + i}`)
    digest = (await resolvedAt(digest)).status?.resolution?.inputDigest
    resolverMs.push(performance.now() - t0)
  }
  const cliMs: number[] = []
  const bin = aicrBinary(VERSION)
  for (let i = 0; i < 5; i++) {
    const d = mkdtempSync(join(work, "cli-"))
    const t0 = performance.now()
    execFileSync(
      bin,
      [
        "recipe",
        "--service",
        "eks",
        "--accelerator",
        "h100",
        "--os",
        "ubuntu",
        "--intent",
        "training",
        "--platform",
        "kubeflow",
        "--format",
        "json",
        "--output",
        join(d, "r.json"),
      ],
      { cwd: d, stdio: "ignore" },
    )
    execFileSync(
      bin,
      [
        "bundle",
        "--recipe",
        join(d, "r.json"),
        "--output",
        join(d, "b"),
        "--system-node-selector",
        "eks.amazonaws.com/nodegroup=system",
        "--accelerated-node-selector",
        "eks.amazonaws.com/nodegroup=gpu",
        "--accelerated-node-toleration",
        "nvidia.com/gpu:NoSchedule",
        "--set",
        `gpuoperator:driver.version=580.105.${20 + i}`,
      ],
      { cwd: d, stdio: "ignore" },
    )
    cliMs.push(performance.now() - t0)
  }

  // 2. Scale: extra GPU nodes of the same profile (kwok), created in parallel.
  const tCreate = performance.now()
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map((name, j) => {
        const n = gpuNode(1000 + i + j)
        return kubeRequest(info, {
          method: "POST",
          path: "/api/v1/nodes",
          body: {
            apiVersion: "v1",
            kind: "Node",
            metadata: { name, labels: { ...n.labels, "kubernetes.io/hostname": name }, annotations: { "kwok.x-k8s.io/node": "fake" } },
            spec: { taints: [{ key: "nvidia.com/gpu", effect: "NoSchedule" }] },
          },
        })
      }),
    )
  }
  const createSeconds = +((performance.now() - tCreate) / 1000).toFixed(1)
  console.log(
    JSON.stringify({
      overhead: {
        resolverMedianMs: Math.round(median(resolverMs)),
        bareCliMedianMs: Math.round(median(cliMs)),
        ratio: +(median(resolverMs) / median(cliMs)).toFixed(1),
      },
      idleRssMiB: idleRss,
      createSeconds,
    }),
  )
  await eventually(
    async () =>
      ((await runtime()) as { status?: { discovery?: { accelerated?: { nodeCount: number } } } }).status?.discovery?.accelerated?.nodeCount === extraNodes + 4
        ? true
        : undefined,
    { timeoutMs: 300_000, intervalMs: 500, what: "all nodes discovered" },
  )
  const jobsBefore = await jobs()
  // The resolver's CPU while nothing happens, over 10 s: what the churn window's figure includes besides the events.
  const idle0 = cpuMs()
  await new Promise((r) => setTimeout(r, 10_000))
  const idleCpuMsPer10s = cpuMs() - idle0
  child.kill("SIGURG")
  const { cpuMs: cpuPer1000Events, seconds: eventsSeconds, nodeEvents, cpuMsPer1000NodeEvents } = await churn(RUN)
  child.kill("SIGURG")
  const jobsAfterChurn = await jobs()
  const scaleRss = await rss()
  if (process.env["BENCH_HEAP_SNAPSHOT"] !== undefined) {
    child.kill("SIGPWR")
    await new Promise((r) => setTimeout(r, 30_000))
  }
  console.log(
    JSON.stringify({
      aicrJobsPer1000IrrelevantEvents: jobsAfterChurn - jobsBefore,
      resolverCpuMsPer1000NodeEvents: cpuPer1000Events,
      nodeEventsInWindow: nodeEvents,
      resolverCpuMsPer1000NodeEventsSeen: cpuMsPer1000NodeEvents,
      idleCpuMsPer10s,
      eventsSeconds,
      rssWithAllNodesMiB: scaleRss,
    }),
  )
  // BENCH_RESOLVER_COMPARE=<main.mjs>: restarts with every node present, alternating that bundle ("before") and this
  // one ("after"), two rounds each, on the same plane and nodes: before and after side by side in one run.
  const other = process.env["BENCH_RESOLVER_COMPARE"]
  const flagSets = process.env["BENCH_RESOLVER_FLAG_SETS"]?.split(";").map((set) => set.split(" ").filter(Boolean))
  if (flagSets !== undefined) {
    const rounds = []
    for (let round = 1; round <= 2; round++) {
      for (const flags of round % 2 === 1 ? flagSets : [...flagSets].reverse()) {
        const r = { flags: flags.join(" ") || "none", ...(await restartRound("this tree", entry, round, flags)) }
        console.log(JSON.stringify(r))
        rounds.push(r)
      }
    }
    console.log(JSON.stringify({ restartsWithAllNodesByFlags: rounds }, null, 2))
  } else if (other !== undefined) {
    const rounds = []
    for (let round = 1; round <= 2; round++) {
      for (const [label, main] of [
        ["before", other],
        ["after", entry],
      ] as const) {
        const r = await restartRound(label, main, round)
        console.log(JSON.stringify(r))
        rounds.push(r)
      }
    }
    console.log(JSON.stringify({ restartsWithAllNodes: rounds }, null, 2))
  }
  // One relevant change: a new driver on one node (its GPU feature discovery labels).
  const tRelevant = performance.now()
  await kubeRequest(info, {
    method: "PATCH",
    path: "/api/v1/nodes/kwok-gpu-1",
    contentType: "application/merge-patch+json",
    body: { metadata: { labels: { "nvidia.com/cuda.driver.major": "580", "nvidia.com/cuda.driver.minor": "95", "nvidia.com/cuda.driver.rev": DRIVER_REV } } },
  })
  await resolvedAt(digest).catch(async (e: unknown) => {
    // What the resolver reports when the change did not resolve in time (to stderr, which the bench runner shows).
    const r = await runtime()
    const js = expectOk(await kubeRequest(info, { method: "GET", path: `/apis/batch/v1/namespaces/${ns}/jobs` }), "jobs") as {
      items: Array<{ metadata: { name: string }; status?: unknown }>
    }
    process.stderr.write(`${JSON.stringify({ conditions: r.status?.conditions, jobs: js.items.map((j) => [j.metadata.name, j.status]) })}\n`)
    throw e
  })
  const relevantSeconds = +((performance.now() - tRelevant) / 1000).toFixed(1)
  await new Promise((r) => setTimeout(r, 3000))
  const jobsAfterRelevant = await jobs()
  const busyWhere = rssBreakdown(child.pid!)
  const busyPeak = vmHwm()
  const busyRss = await rss()
  console.log(
    JSON.stringify(
      {
        aicr: VERSION,
        overhead: {
          resolverMedianMs: Math.round(median(resolverMs)),
          bareCliMedianMs: Math.round(median(cliMs)),
          ratio: +(median(resolverMs) / median(cliMs)).toFixed(1),
          resolverMs: resolverMs.map(Math.round),
          cliMs: cliMs.map(Math.round),
        },
        scale: {
          nodes: extraNodes + 6,
          createSeconds,
          aicrJobsPer1000IrrelevantEvents: jobsAfterChurn - jobsBefore,
          resolverCpuMsPer1000NodeEvents: cpuPer1000Events,
          nodeEventsInWindow: nodeEvents,
          resolverCpuMsPer1000NodeEventsSeen: cpuMsPer1000NodeEvents,
          idleCpuMsPer10s,
          eventsSeconds,
          aicrJobsPerRelevantChange: jobsAfterRelevant - jobsAfterChurn,
          resolutionsPerRelevantChange: (jobsAfterRelevant - jobsAfterChurn) / 3,
          relevantChangeToResolvedSeconds: relevantSeconds,
        },
        rssMiB: { idleAfterFirstResolution: idleRss, idleWithAllNodes: scaleRss, afterRelevantChange: busyRss, peak: busyPeak },
        afterRelevantChangeWhere: busyWhere,
      },
      null,
      2,
    ),
  )
} finally {
  child.kill("SIGTERM")
  for (let i = 0; i < extraNodes; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, extraNodes - i) }, (_, j) => kubeRequest(info, { method: "DELETE", path: `/api/v1/nodes/zz-bench-gpu-${i + j}` })),
    )
  }
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
}
process.exit(0)
