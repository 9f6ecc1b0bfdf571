/**
 * `npm run bench` (`hack/aicr-dev.mjs bench [name…]`): speed and memory, measured, never asserted.
 *
 *   control-plane   start, reuse and stop times of the local control plane (3 fresh starts)
 *   workqueue       keys/s through the de-duplicating work queue, and how many reconciles a burst collapses into
 *   controller-rss  RSS after GC of a bundled controller process: one informer, then a whole app, then each app
 *                   with an apps/<name>/bench/rss.bench.ts (bundled by hack/build-apps.ts) on a local control
 *                   plane, idle before and after its work (budget 80 MiB)
 *   oras-copy       throughput and peak RSS of copying a 256 MiB blob between two real registries
 *   mirror          registry-mirror against a helm pull + push loop (when apps/registry-mirror/bench exists)
 *   resolver        resolver overhead over the bare AICR CLI; AICR runs and CPU per node events with 5,000 kwok
 *                   nodes; RSS (on a local control plane with the process kubelet)
 *
 * Every result is printed and written to .aicr/bench/<name>.json.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { makeWorkQueue } from "@aicr/runtime"
import { repoRoot, startControlPlane } from "@aicr/testing/harness"
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
  const apps = readdirSync(join(root, "apps")).filter((a) => existsSync(join(root, "apps", a, "bench", "rss.bench.ts"))).sort()
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

/** The resolver on a fresh local control plane (nodes, process kubelet): see apps/resolver/bench/resolver.bench.ts. */
const resolver = async () => {
  const t0 = performance.now()
  const plane = await startControlPlane({})
  try {
    record("resolver", { seconds: 0, output: lines("resolver", ["apps/resolver/bench/resolver.bench.ts", plane.info.dir, process.env.BENCH_RESOLVER_NODES ?? "5000"]) })
  } finally {
    await plane.stop()
  }
  process.stdout.write(`(resolver bench: ${((performance.now() - t0) / 1000).toFixed(1)}s)\n`)
}

const benches: Record<string, () => Promise<void> | void> = {
  "control-plane": controlPlane,
  workqueue,
  "controller-rss": controllerRss,
  resolver,
  "oras-copy": () => run("oras-copy", ["packages/oras/bench/copy.bench.ts", "256", "8"]),
  mirror: () => {
    const script = "apps/registry-mirror/bench/mirror.bench.ts"
    if (!existsSync(join(root, script))) return record("mirror", { skipped: "apps/registry-mirror has no benchmark yet" })
    run("mirror", [script])
  },
}

const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(benches)
for (const name of wanted) {
  const bench = benches[name]
  if (!bench) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(", ")}`)
  await bench()
}
process.exit(0)
