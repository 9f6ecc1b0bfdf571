// Idle RSS of the bundled registry-mirror controller as a user pays for it (packages/runtime/bench/idle.ts: started as
// the image starts it, NODE_ENV=production, metrics and health on, the chart's environment), before and after it
// mirrored the fixture recipe, and after a restart with the mirror recorded (its first pass checks the recorded tags):
// VmRSS every 5 s over BENCH_IDLE_MINUTES (default 2) with no forced GC, then what a full GC leaves
// (architecture.md §7: budget ≤ 80 MiB per idle controller). Also the start cost of one call to the bundle's mirror
// process (an empty tag check), when the bundle has one. Not a test: it prints one JSON line.
// Needs a running local control plane: npx tsx packages/testing/src/harness/cli.ts up --detach --dir DIR
// Run: npx tsx apps/registry-mirror/bench/rss.bench.ts DIR. BENCH_MIRROR_BUNDLE=<dir>/main.mjs measures a bundle built
// before (e.g. of an older commit) instead of building this tree's; BENCH_NODE_FLAGS replaces the chart's environment
// (node flags, and `NAME=value` variables, e.g. `MALLOC_ARENA_MAX=2`).
import { once } from "node:events"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { contentConfigMapName } from "@aicr/api"
import { startChartUpstream } from "@aicr/chart-upstream"
import { callProcess } from "@aicr/runtime"
import { mib, procStatus, sampleIdle, shippedOrBenchFlags, startShipped } from "@aicr/runtime/bench/idle"
import { applyManifests, createNamespace, eventually, expectOk, kubeRequest, repoRoot, runningPlane } from "@aicr/testing/harness"
import { buildApp, summary } from "../../../hack/build-apps"
import { memoryEnvOf } from "../../../hack/local-operator"
import { contentConfigMap, contentData, INPUT_DIGEST } from "../test/support/fixtures"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: rss.bench.ts <harness dir>")
const info = await runningPlane(dir)
if (info === undefined) throw new Error(`no healthy control plane in ${dir}`)
const IDLE_MINUTES = Number(process.env["BENCH_IDLE_MINUTES"] ?? 2)
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const work = await mkdtemp(join(tmpdir(), "mirror-rss-"))
// The bundle as it ships (hack/build-apps.ts: esbuild, ESM, --splitting, and mirror-process.mjs beside main.mjs), or
// one built before.
const given = process.env["BENCH_MIRROR_BUNDLE"]
const built = given === undefined ? await buildApp("registry-mirror", join(work, "dist")) : undefined
if (built !== undefined) console.error(summary(built).join("\n"))
const bundle = given ?? built!.entry
// A prefix of its own per run: a second run must mirror again, not find every tag present.
const prefix = `aicr/rss-${Date.now().toString(36)}`
const upstream = await startChartUpstream()
await applyManifests(info, join(repoRoot(), "crds"))
const ns = await createNamespace(info, "aicr-rss")
await kubeRequest(info, { method: "DELETE", path: RUNTIME })
await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404)
await applyManifests(info, [
  { apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: { intent: "training", platform: "kubeflow" } },
  { ...contentConfigMap(INPUT_DIGEST, contentData()), metadata: { ...contentConfigMap(INPUT_DIGEST).metadata, namespace: ns } },
])
const resolve = async () =>
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: `${RUNTIME}/status?fieldManager=aicr-resolver&force=true`,
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "ClusterRuntime",
        metadata: { name: "cluster" },
        status: {
          conditions: [
            { type: "Resolved", status: "True", observedGeneration: 1, lastTransitionTime: "2026-12-02T10:00:00Z", reason: "InputsResolved", message: "" },
          ],
          resolution: { inputDigest: INPUT_DIGEST, contentConfigMap: contentConfigMapName(INPUT_DIGEST) },
        },
      },
    }),
    "resolve",
  )
const nodeFlags = shippedOrBenchFlags(memoryEnvOf("registry-mirror"))
/** The bundled controller in its own process, as the image starts it, with the memory probe. */
const startController = () =>
  startShipped(
    bundle,
    [
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      "--log-level=warn",
      "--registry",
      `oci://${info.registry}/${prefix}`,
      "--operator-namespace",
      ns,
      ...Object.entries(upstream.rewrites).flatMap(([a, b]) => ["--upstream-rewrite", `${a}=${b}`]),
    ],
    { workDir: work, nodeFlags, stdio: ["ignore", "ignore", "inherit"] },
  )
const mirrored = async (reason: string) =>
  eventually(
    async () => {
      const rt = expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get") as {
        status?: { conditions?: Array<{ type: string; status: string; reason: string }> }
      }
      return rt.status?.conditions?.some((c) => c.type === "Mirrored" && c.reason === reason)
    },
    { timeoutMs: 120_000, intervalMs: 100, what: `Mirrored ${reason}` },
  )
/** One call to the bundle's mirror process, an empty tag check: what a call costs before it does anything. */
const callCost = async (): Promise<number | undefined> => {
  const entry = join(dirname(bundle), "mirror-process.mjs")
  if (!existsSync(entry)) return undefined
  const runs: number[] = []
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    await callProcess(entry, { op: "resolveTags", settings: { plainHttp: [], rewrites: [], concurrency: 1 }, userAgent: "bench", references: [] })
    runs.push(performance.now() - t)
  }
  return +(runs.sort((a, b) => a - b)[2]! / 1000).toFixed(2)
}
let controller = startController()
try {
  await mirrored("AwaitingResolution")
  await sleep(10_000)
  const rssBeforeMirror = procStatus(controller.child.pid!, "VmRSS")
  await resolve()
  const t0 = performance.now()
  let peakDuringMirror = 0
  const sampler = setInterval(() => (peakDuringMirror = Math.max(peakDuringMirror, procStatus(controller.child.pid!, "VmRSS"))), 100)
  await mirrored("ContentMirrored")
  clearInterval(sampler)
  const mirrorSeconds = +((performance.now() - t0) / 1000).toFixed(2)
  await sleep(10_000)
  const afterMirror = await sampleIdle(controller, { minutes: IDLE_MINUTES })
  // A restart with the mirror recorded: the first pass checks the recorded tags (one HEAD each).
  controller.child.kill("SIGTERM")
  await once(controller.child, "exit")
  controller = startController()
  await mirrored("ContentMirrored")
  await sleep(10_000)
  const afterRestart = await sampleIdle(controller, { minutes: IDLE_MINUTES })
  console.log(
    JSON.stringify({
      what: "registry-mirror bundle: idle after mirroring the fixture recipe, and after a restart with the mirror recorded",
      bundle,
      nodeFlags,
      mirrorProcessCallSeconds: await callCost(),
      mirror: { seconds: mirrorSeconds },
      rssBeforeMirrorMiB: mib(rssBeforeMirror),
      rssPeakDuringMirrorMiB: mib(peakDuringMirror),
      idleAfterMirror: afterMirror,
      idleAfterRestart: afterRestart,
    }),
  )
} finally {
  controller.child.kill("SIGTERM")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await upstream.stop()
  await rm(work, { recursive: true, force: true })
}
process.exit(0)
