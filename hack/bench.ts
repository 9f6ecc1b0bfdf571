/**
 * `npm run bench` (`hack/aicr-dev.mjs bench [name…]`): speed and memory, measured, never asserted.
 *
 *   control-plane   start, reuse and stop times of the local control plane (3 fresh starts)
 *   workqueue       keys/s through the de-duplicating work queue, and how many reconciles a burst collapses into
 *   controller-rss  RSS after GC of a bundled controller process: one informer, then a whole app, then each app
 *                   with an apps/<name>/bench/rss.bench.ts (bundled by hack/build-apps.ts) on a local control
 *                   plane, idle before and after its work (budget 80 MiB; validation-gate's starts its own plane
 *                   with the process kubelet: one signed validation run, then five idle minutes;
 *                   ecr-credential-refresher's: static, and aws after a mint from moto, five idle minutes each)
 *   oras-copy       throughput and peak RSS of copying a 256 MiB blob between two real registries
 *   mirror          registry-mirror against a helm pull + push loop (when apps/registry-mirror/bench exists)
 *   planner         Mirrored=True → RuntimeRollout exists (window 0) on a real resolution, and the pure planning cost
 *   adoption        empty operator namespace → Adopt rollout exists, for the Applications of a real resolution
 *   argocd          Argo CD start (3 starts), create → synced and healthy (first and warm), an upgrade, a
 *                   prune, and the RSS of redis, repo-server and application-controller idle with one Application
 *   real-charts     the reference recipe's first install (up, approve, Ready) with the stand-in and the real upstream
 *                   charts in one run: wall time, Argo CD's API writes and sync operations per release, largest object
 *   validation      the validation gate on `up` (validation Required): its RSS idle and after the first install's
 *                   run, and the overhead of the gate's run beyond the validator's own (apps/validation-gate/bench)
 *   resolver        resolver overhead over the bare AICR CLI; AICR runs and CPU per node events with 5,000 kwok
 *                   nodes; RSS (on a local control plane with the process kubelet)
 *   idle-rss        every controller's RSS as shipped (no node flags, no forced GC) over five idle minutes, all seven
 *                   at once, nothing to do; and what a full GC leaves (packages/runtime/bench/idle-rss.bench.ts)
 *   idle-requests   API requests per idle minute of every controller at once (audit log: reads, writes, watches
 *                   started, Lease requests), leader election on, nothing to do
 *
 * Every result is printed and written to .aicr/bench/<name>.json.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { makeWorkQueue } from "@aicr/runtime"
import {
  applyManifests,
  deleteApplication,
  helmApplication,
  isolatedHelm,
  kubeRequest,
  packageDemoChart,
  repoRoot,
  runtimeRepositories,
  startArgoCd,
  startControlPlane,
  waitForApplication,
} from "@aicr/testing/harness"
import { Effect, Option } from "effect"

const root = repoRoot()
const out = join(root, ".aicr", "bench")
mkdirSync(out, { recursive: true })

const record = (name: string, result: unknown) => {
  writeFileSync(join(out, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`)
  process.stdout.write(`\n## ${name}\n${JSON.stringify(result, null, 2)}\n`)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const controlPlane = async () => {
  const starts: number[] = []
  const stops: number[] = []
  let reuse = 0
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now()
    const plane = await startControlPlane({ fresh: true })
    starts.push(performance.now() - t0)
    if (i === 0) {
      const t1 = performance.now()
      const again = await startControlPlane({ dir: plane.info.dir })
      reuse = performance.now() - t1
      if (!again.reused) throw new Error("bench: second start in the same dir did not reuse the plane")
    }
    const t2 = performance.now()
    await plane.stop()
    stops.push(performance.now() - t2)
  }
  const s = (ms: number) => +(ms / 1000).toFixed(2)
  record("control-plane", {
    what: "etcd, registry, kube-apiserver, KCM, scheduler, kwok, 6 nodes Ready",
    startSeconds: starts.map(s),
    medianStartSeconds: s(median(starts)),
    reuseSeconds: s(reuse),
    stopSeconds: stops.map(s),
  })
}

const workqueue = async () => {
  const keys = 1000
  const addsPerKey = 20
  const result = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const q = yield* makeWorkQueue({ name: "bench" })
        // A burst: every key added many times before any worker runs; the queue must hold each once.
        const t0 = performance.now()
        for (let r = 0; r < addsPerKey; r++) for (let k = 0; k < keys; k++) yield* q.add(`key-${k}`)
        const addMs = performance.now() - t0
        const depthAfterBurst = q.len()
        let processed = 0
        const t1 = performance.now()
        while (q.len() > 0) {
          const key = yield* q.take
          if (Option.isNone(key)) break
          processed++
          yield* q.done(key.value)
        }
        const drainMs = performance.now() - t1
        return {
          adds: keys * addsPerKey,
          addsPerSecond: Math.round((keys * addsPerKey) / (addMs / 1000)),
          depthAfterBurst,
          reconcilesAfterBurst: processed,
          takeDonePerSecond: Math.round(processed / (drainMs / 1000)),
        }
      }),
    ),
  )
  record("workqueue", result)
}

/** Runs a bench script with tsx; its stdout lines. */
const lines = (name: string, args: string[]): string[] => {
  const r = spawnSync(join(root, "node_modules", ".bin", "tsx"), args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  if (r.status !== 0) throw new Error(`bench ${name} failed (exit ${r.status})`)
  return r.stdout.trim().split("\n")
}

const run = (name: string, args: string[]) => {
  const t0 = performance.now()
  const output = lines(name, args)
  record(name, { seconds: +((performance.now() - t0) / 1000).toFixed(1), output })
}

/** The minimal controller of packages/runtime, then every app that has a bench/rss.bench.ts, on one control plane. */
const controllerRss = async () => {
  const t0 = performance.now()
  const result: Record<string, unknown> = { fixture: lines("controller-rss", ["packages/runtime/test/fixtures/rss-measure.ts"]) }
  const apps = readdirSync(join(root, "apps"))
    .filter((a) => existsSync(join(root, "apps", a, "bench", "rss.bench.ts")))
    .sort()
  if (apps.length > 0) {
    const plane = await startControlPlane({ nodes: false })
    try {
      for (const app of apps) result[app] = lines(`controller-rss ${app}`, [`apps/${app}/bench/rss.bench.ts`, plane.info.dir])
    } finally {
      await plane.stop()
    }
  }
  record("controller-rss", { seconds: +((performance.now() - t0) / 1000).toFixed(1), ...result })
}

const rssMiB = (pid: number): number => {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  return +(Number(kb) / 1024).toFixed(1)
}

/** Argo CD on a local control plane with kwok nodes: start, sync, upgrade, prune, idle RSS. */
const argocd = async () => {
  const plane = await startControlPlane({ fresh: true })
  const helm = await isolatedHelm("aicr-bench-argocd-")
  const s = (ms: number) => +(ms / 1000).toFixed(2)
  try {
    const { info } = plane
    const repo = runtimeRepositories(info)[0]!
    for (const [v, app] of [
      ["0.1.0", "1.0.0"],
      ["0.2.0", "1.1.0"],
    ] as const) {
      await helm.helm("push", await packageDemoChart(helm, "bench", v, app), `oci://${repo}`, "--plain-http")
    }
    // The first start also installs the CRDs; the later ones find them.
    let argo = await startArgoCd(info)
    const starts = [argo.startMs]
    for (let i = 0; i < 2; i++) {
      await argo.stop()
      argo = await startArgoCd(info)
      starts.push(argo.startMs)
    }
    const app = (name: string, rev: string) =>
      helmApplication({ name, repoURL: repo, chart: "bench", targetRevision: rev, destinationNamespace: `bench-${name}`, values: { replicas: 2 } })
    const timed = async (fn: () => Promise<unknown>) => {
      const t0 = performance.now()
      await fn()
      return performance.now() - t0
    }
    const createReady = async (name: string) =>
      timed(async () => {
        await applyManifests(info, [app(name, "0.1.0")])
        await waitForApplication(info, name, "0.1.0")
      })
    const first = await createReady("first")
    const warm = await createReady("warm")
    const upgrade = await timed(async () => {
      await kubeRequest(info, {
        method: "PATCH",
        path: "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/warm",
        body: { spec: { source: { targetRevision: "0.2.0" } } },
      })
      await waitForApplication(info, "warm", "0.2.0")
    })
    const prune = await timed(() => deleteApplication(info, "first"))
    await sleep(30_000)
    const rss = Object.fromEntries(Object.entries(argo.info.pids).map(([name, pid]) => [name, rssMiB(pid)]))
    const stop = await timed(() => argo.stop())
    record("argocd", {
      what: `Argo CD ${argo.info.version} (redis, repo-server, application-controller) on the local control plane; a 2-replica chart from the runtime registry`,
      startSeconds: starts.map(s),
      createToReadySeconds: { first: s(first), warm: s(warm) },
      upgradeToReadySeconds: s(upgrade),
      deleteWithPruneSeconds: s(prune),
      rssMiBIdleOneApp: rss,
      stopSeconds: s(stop),
    })
  } finally {
    await helm.cleanup()
    await plane.stop()
  }
}

/** The resolver on a fresh local control plane (nodes, process kubelet): see apps/resolver/bench/resolver.bench.ts. */
const resolver = async () => {
  const t0 = performance.now()
  const plane = await startControlPlane({})
  try {
    record("resolver", {
      seconds: 0,
      output: lines("resolver", ["apps/resolver/bench/resolver.bench.ts", plane.info.dir, process.env.BENCH_RESOLVER_NODES ?? "5000"]),
    })
  } finally {
    await plane.stop()
  }
  process.stdout.write(`(resolver bench: ${((performance.now() - t0) / 1000).toFixed(1)}s)\n`)
}

/** `up --detach` in a state dir of its own, the gate's bench on it, then `down`. */
const validation = () => {
  const dir = mkdtempSync(join(tmpdir(), "aicr-bench-validation-"))
  // The stand-in charts, as the gate's figures were measured: the gate's overhead does not depend on the charts, and
  // the real charts' install takes 15 minutes and more here (hack/real-charts.bench.ts measures it).
  const env = { ...process.env, AICR_LOCAL_DIR: dir, AICR_UPSTREAM_CHARTS: "stand-in" }
  const dev = (cmd: string) => {
    const r = spawnSync(process.execPath, [join(root, "hack", "aicr-dev.mjs"), cmd, ...(cmd === "up" ? ["--detach"] : [])], {
      cwd: root,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    })
    if (r.status !== 0) throw new Error(`bench validation: aicr-dev ${cmd} failed (exit ${r.status})`)
  }
  const t0 = performance.now()
  dev("up")
  const upSeconds = +((performance.now() - t0) / 1000).toFixed(1)
  try {
    record("validation", { upSeconds, output: lines("validation", ["apps/validation-gate/bench/validation.bench.ts", dir]) })
  } finally {
    dev("down")
    rmSync(dir, { recursive: true, force: true })
  }
}

const benches: Record<string, () => Promise<void> | void> = {
  "control-plane": controlPlane,
  workqueue,
  "controller-rss": controllerRss,
  resolver,
  "oras-copy": () => run("oras-copy", ["packages/oras/bench/copy.bench.ts", "256", "8"]),
  planner: () => run("planner", ["apps/planner/bench/plan.bench.ts", "5"]),
  adoption: () => run("adoption", ["apps/planner/bench/adopt.bench.ts", "5"]),
  mirror: () => {
    const script = "apps/registry-mirror/bench/mirror.bench.ts"
    if (!existsSync(join(root, script))) return record("mirror", { skipped: "apps/registry-mirror has no benchmark yet" })
    run("mirror", [script])
  },
  argocd,
  "step-executor": () => run("step-executor", ["apps/step-executor/bench/rollout.bench.ts"]),
  "real-charts": () => run("real-charts", ["hack/real-charts.bench.ts"]),
  validation,
  "idle-rss": () => run("idle-rss", ["packages/runtime/bench/idle-rss.bench.ts"]),
  "idle-requests": () => run("idle-requests", ["packages/runtime/bench/idle-requests.bench.ts"]),
}

const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(benches)
for (const name of wanted) {
  const bench = benches[name]
  if (!bench) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(", ")}`)
  await bench()
}
process.exit(0)
