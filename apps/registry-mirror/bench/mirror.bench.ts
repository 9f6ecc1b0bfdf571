// Mirroring the fixture recipe with the registry-mirror vs a `helm pull` + `helm push` loop, bytes uploaded by a
// second mirror, and peak RSS while copying the largest chart. Not a test: it prints numbers.
// Run: npx tsx apps/registry-mirror/bench/mirror.bench.ts [largestChartMiB=16]
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { startChartUpstream } from "@aicr/chart-upstream"
import { OciClient } from "@aicr/oras"
import { startRegistry, toolPath } from "@aicr/testing/harness"
import { readResolution } from "../src/content"
import { runMirror } from "../src/mirror"
import { type MirrorPlan, planMirror } from "../src/plan"
import { parseRewrites } from "../src/source"
import { contentData, INPUT_DIGEST } from "../test/support/fixtures"

const run = promisify(execFile)
const MiB = 1024 * 1024
const LARGEST = "kube-prometheus-stack"

// Child mode: copy only the largest chart in a fresh process, so its RSS is the mirror's alone.
if (process.env.MIRROR_BENCH_CHILD !== undefined) {
  const { registry, prefix, rewrites } = JSON.parse(process.env.MIRROR_BENCH_CHILD) as { registry: string; prefix: string; rewrites: string[] }
  const r = readResolution(contentData())
  if (!r.ok) throw new Error(r.why)
  const p = planMirror(r.resolution, INPUT_DIGEST, { registry, prefix }, parseRewrites(rewrites))
  if (!p.ok) throw new Error("unplannable")
  const plan: MirrorPlan = { ...p.plan, items: p.plan.items.filter((i) => i.key === LARGEST) }
  const client = new OciClient()
  const base = process.memoryUsage().rss
  let peak = base
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5)
  const t0 = performance.now()
  const result = await runMirror(client, plan, { rewrites: parseRewrites(rewrites) })
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage().rss)
  await client.close()
  process.stdout.write(JSON.stringify({ base, peak, seconds: (performance.now() - t0) / 1000, bytes: result.bytesUploaded }))
  process.exit(0)
}

const largestMiB = Number(process.argv[2] ?? 16) // helm v4.2.4 push refuses a 32 MiB chart ("invalid descriptor size")

const upstream = await startChartUpstream({ fillerBytes: { [LARGEST]: largestMiB * MiB } })
const registry = await startRegistry({ name: "bench-mirror" })
const work = await mkdtemp(join(tmpdir(), "mirror-bench-"))
const rewrites = parseRewrites(Object.entries(upstream.rewrites).map(([a, b]) => `${a}=${b}`))
const client = new OciClient()

const planAt = (prefix: string): MirrorPlan => {
  const r = readResolution(contentData())
  if (!r.ok) throw new Error(r.why)
  const p = planMirror(r.resolution, INPUT_DIGEST, { registry: registry.address, prefix }, rewrites)
  if (!p.ok) throw new Error(JSON.stringify(p.unsupported))
  return p.plan
}

const timed = async <A>(f: () => Promise<A>): Promise<{ result: A; seconds: number }> => {
  const t0 = performance.now()
  const result = await f()
  return { result, seconds: (performance.now() - t0) / 1000 }
}

try {
  const totalBytes = upstream.charts.reduce((n, c) => n + c.size, 0)
  console.log(`fixture: ${upstream.charts.length} charts, ${(totalBytes / MiB).toFixed(1)} MiB of archives (largest ${LARGEST}, ${largestMiB} MiB filler)`)

  // 1. The mirror, first and second run.
  const first = await timed(() => runMirror(client, planAt("bench/mirror"), { rewrites }))
  console.log(
    `mirror, first run:   ${first.seconds.toFixed(2).padStart(6)} s  ${first.result.pushed} artifacts pushed, ${(first.result.bytesUploaded / MiB).toFixed(1)} MiB uploaded`,
  )
  const second = await timed(() => runMirror(client, planAt("bench/mirror"), { rewrites }))
  console.log(
    `mirror, second run:  ${second.seconds.toFixed(2).padStart(6)} s  ${second.result.pushed} pushed, ${second.result.present} present, ${second.result.bytesUploaded} bytes uploaded`,
  )

  // 2. What a shell script would do: helm pull + helm push, chart by chart (charts only: no wrappers, no bundle).
  const helmEnv = {
    PATH: process.env.PATH,
    HOME: work,
    HELM_CONFIG_HOME: join(work, "config"),
    HELM_CACHE_HOME: join(work, "cache"),
    HELM_DATA_HOME: join(work, "data"),
  }
  const helm = (...args: string[]) => run(toolPath("helm"), args, { env: helmEnv, cwd: work, maxBuffer: 16 * MiB })
  const loop = await timed(async () => {
    for (const c of upstream.charts) {
      const dir = join(work, "pull", c.name)
      await mkdir(dir, { recursive: true })
      if (c.ref !== undefined) await helm("pull", `${c.url}/${c.name}`, "--version", c.version, "--plain-http", "--destination", dir)
      else await helm("pull", c.name, "--repo", c.url, "--version", c.version, "--destination", dir)
      await helm("push", join(dir, `${c.name}-${c.version}.tgz`), `oci://${registry.address}/bench/helm/charts`, "--plain-http")
    }
  })
  console.log(`helm pull+push loop: ${loop.seconds.toFixed(2).padStart(6)} s  ${upstream.charts.length} charts`)
  console.log(
    `ratio helm loop / mirror first run: ${(loop.seconds / first.seconds).toFixed(1)}x (the mirror also pushes ${first.result.pushed - upstream.charts.length} wrappers and the bundle)`,
  )

  // 3. Peak RSS while copying the largest chart alone (HTTP source: download, verify, push), in a fresh process.
  const child = await run(process.execPath, [...process.execArgv, process.argv[1]!], {
    env: {
      ...process.env,
      MIRROR_BENCH_CHILD: JSON.stringify({
        registry: registry.address,
        prefix: "bench/largest",
        rewrites: Object.entries(upstream.rewrites).map(([a, b]) => `${a}=${b}`),
      }),
    },
    maxBuffer: MiB,
  })
  const m = JSON.parse(child.stdout) as { base: number; peak: number; seconds: number; bytes: number }
  const size = upstream.charts.find((c) => c.name === LARGEST)!.size
  console.log(
    `largest chart (${(size / MiB).toFixed(1)} MiB), own process: ${m.seconds.toFixed(2)} s, ${(m.bytes / MiB).toFixed(1)} MiB uploaded, peak RSS ${(m.peak / MiB).toFixed(0)} MiB (+${((m.peak - m.base) / MiB).toFixed(0)} MiB over ${(m.base / MiB).toFixed(0)} MiB at start)`,
  )
} finally {
  await client.close()
  await upstream.stop()
  await registry.stop()
  await rm(work, { recursive: true, force: true })
}
