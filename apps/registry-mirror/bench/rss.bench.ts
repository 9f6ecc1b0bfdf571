// Idle RSS of the bundled registry-mirror controller, before and after it mirrored the fixture recipe, and after a
// restart with the mirror recorded (its first pass checks the recorded tags)
// (architecture.md §7: budget ≤ 80 MiB per idle controller). Not a test: it prints numbers.
// Needs a running local control plane: npx tsx packages/testing/src/harness/cli.ts up --detach --dir DIR
// Run: npx tsx apps/registry-mirror/bench/rss.bench.ts DIR
import { spawn } from "node:child_process"
import { once } from "node:events"
import { readFileSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { contentConfigMapName } from "@aicr/api"
import { startChartUpstream } from "@aicr/chart-upstream"
import { applyManifests, createNamespace, eventually, expectOk, kubeRequest, repoRoot, runningPlane } from "@aicr/testing/harness"
import { buildApp, summary } from "../../../hack/build-apps"
import { contentConfigMap, contentData, INPUT_DIGEST } from "../test/support/fixtures"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: rss.bench.ts <harness dir>")
const info = await runningPlane(dir)
if (info === undefined) throw new Error(`no healthy control plane in ${dir}`)
const MiB = 1024 * 1024
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const work = await mkdtemp(join(tmpdir(), "mirror-rss-"))
// The bundle as it ships: hack/build-apps.ts (esbuild, ESM, --splitting: code behind a dynamic import() stays in a
// chunk loaded on demand).
const built = await buildApp("registry-mirror", join(work, "dist"))
const bundle = built.entry
console.log(summary(built).join("\n"))
// On SIGUSR2 the controller collects garbage and reports its RSS on stderr (RSS after GC, as docs/benchmarks.md measures).
const probe = join(work, "rss-probe.mjs")
writeFileSync(
  probe,
  "process.on('SIGUSR2', () => { globalThis.gc(); const m = process.memoryUsage(); process.stderr.write(`RSS ${m.rss} ${JSON.stringify(m)}\\n`) })\n",
)
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
/** The bundled controller in its own process, with the RSS probe. */
const startController = () => {
  const child = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      probe,
      bundle,
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
      "--log-level=warn",
      "--registry",
      `oci://${info.registry}/aicr/rss`,
      "--operator-namespace",
      ns,
      ...Object.entries(upstream.rewrites).flatMap(([a, b]) => ["--upstream-rewrite", `${a}=${b}`]),
    ],
    {
      stdio: ["ignore", "inherit", "pipe"],
      env: { ...process.env, ...(process.env.BENCH_MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.BENCH_MALLOC_ARENA_MAX } : {}) },
    },
  )
  const c = { child, reported: 0, detail: "" }
  child.stderr.on("data", (d: Buffer) => {
    const m = /RSS (\d+) (.*)/u.exec(d.toString())
    if (m) {
      c.reported = Number(m[1])
      const u = JSON.parse(m[2]!) as Record<string, number>
      c.detail = Object.entries(u)
        .filter(([k]) => k !== "rss")
        .map(([k, v]) => `${k} ${(v / MiB).toFixed(1)}`)
        .join(", ")
    } else process.stderr.write(d)
  })
  return c
}
let controller = startController()
const rssAfterGc = async () => {
  controller.reported = 0
  controller.child.kill("SIGUSR2")
  return eventually(async () => controller.reported || undefined, { timeoutMs: 5_000, what: "RSS report" })
}
const status = (what: string) => readFileSync(`/proc/${controller.child.pid}/status`, "utf8").match(new RegExp(`${what}:\\s+(\\d+) kB`, "u"))![1]
const rss = () => Number(status("VmRSS")) * 1024
const hwm = () => Number(status("VmHWM")) * 1024
const detail = () => controller.detail
try {
  await eventually(
    async () => {
      const rt = expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get") as {
        status?: { conditions?: Array<{ type: string; reason: string }> }
      }
      return rt.status?.conditions?.some((c) => c.type === "Mirrored" && c.reason === "AwaitingResolution")
    },
    { timeoutMs: 60_000, what: "Mirrored=False/AwaitingResolution" },
  )
  await new Promise((r) => setTimeout(r, 5_000))
  console.log(
    `idle before any mirror (caches synced, first pass done): RSS ${(rss() / MiB).toFixed(1)} MiB, after GC ${((await rssAfterGc()) / MiB).toFixed(1)} MiB (${detail()})`,
  )
  await resolve()
  const t0 = Date.now()
  await eventually(
    async () => {
      const rt = expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get") as {
        status?: { conditions?: Array<{ type: string; status: string }> }
      }
      return rt.status?.conditions?.some((c) => c.type === "Mirrored" && c.status === "True")
    },
    { timeoutMs: 60_000, what: "Mirrored=True" },
  )
  console.log(`Mirrored=True ${((Date.now() - t0) / 1000).toFixed(1)} s after the resolution`)
  await new Promise((r) => setTimeout(r, 10_000))
  console.log(
    `idle 10 s after mirroring: RSS ${(rss() / MiB).toFixed(1)} MiB, after GC ${((await rssAfterGc()) / MiB).toFixed(1)} MiB (${detail()}; peak ${(hwm() / MiB).toFixed(1)} MiB)`,
  )
  // A restart with the mirror recorded: the first pass checks the recorded tags (one HEAD each), which loads the OCI client.
  controller.child.kill("SIGTERM")
  await once(controller.child, "exit")
  controller = startController()
  await new Promise((r) => setTimeout(r, 10_000))
  console.log(
    `idle 10 s after a restart with the mirror recorded (first check of the recorded tags done): RSS ${(rss() / MiB).toFixed(1)} MiB, after GC ${((await rssAfterGc()) / MiB).toFixed(1)} MiB (${detail()}; peak ${(hwm() / MiB).toFixed(1)} MiB)`,
  )
} finally {
  controller.child.kill("SIGTERM")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await upstream.stop()
  await rm(work, { recursive: true, force: true })
}
