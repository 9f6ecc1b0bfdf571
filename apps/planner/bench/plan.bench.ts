// The planner's latency on a real control plane with the window set to 0: from the moment Mirrored=True is written
// for a resolution of the real `aicr` v0.11.1 (EKS guide recipe, 13 releases) to the RuntimeRollout existing, over
// several runs; plus the pure cost of composing, assessing and planning the steps. Not a test: it prints numbers.
// With --shipped: the planner runs as it ships (its bundle in its own process, the chart's environment unless
// BENCH_NODE_FLAGS replaces it), and after the runs its RSS is sampled over BENCH_IDLE_MINUTES (default 5) idle
// minutes, no forced GC (packages/runtime/bench/idle.ts): the planner's memory after its work.
// Run: npx tsx apps/planner/bench/plan.bench.ts [runs=5] [--shipped]
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { contentConfigMapName, sha256 } from "@aicr/api"
import { sampleIdle, shippedOrBenchFlags, startShipped } from "@aicr/runtime/bench/idle"
import { applyManifests, eventually, expectOk, kubeRequest, readVersions, repoRoot, startControlPlane } from "@aicr/testing/harness"
import { controllerRunFlags, startController } from "@aicr/testing/world"
import { assessWithoutUpgradeCheck } from "../src/assess"
import { composePlan, readContent } from "../src/compose"
import { planSteps } from "../src/steps"
import { plannerApp } from "../src/app"
import { realResolution } from "./resolution"
import { buildApp } from "../../../hack/build-apps"
import { memoryEnvOf } from "../../../hack/local-operator"

const runs = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 5)
const shipped = process.argv.includes("--shipped")
const IDLE_MINUTES = Number(process.env["BENCH_IDLE_MINUTES"] ?? 5)
const version = readVersions().aicr
const work = mkdtempSync(join(tmpdir(), "planner-bench-"))
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const NS = "aicr-system"

const { components, data, mirrorFor } = await realResolution(version, work)

// Pure cost: compose + assess + steps, 200 times.
const content = readContent(data)
if (!content.ok) throw new Error(content.why)
const t0 = performance.now()
for (let i = 0; i < 200; i++) {
  const p = composePlan({
    runtimeUID: "u",
    resolution: { inputDigest: sha256("in") },
    mirror: mirrorFor(sha256("in")),
    contentConfigMap: "c",
    content: content.value,
    project: "aicr",
    now: "t",
  })
  if (!p.ok) throw new Error(p.why)
  planSteps(undefined, p.value, assessWithoutUpgradeCheck(undefined, p.value, version))
}
const pureMs = (performance.now() - t0) / 200

const plane = await startControlPlane({ fresh: true })
const info = plane.info
const latencies: number[] = []
let idle: unknown
try {
  await applyManifests(info, join(repoRoot(), "crds"))
  await applyManifests(info, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }])
  const args = ["--operator-namespace", NS, "--stabilization-window", "0"]
  const planner = shipped
    ? startShipped((await buildApp("planner", join(work, "dist"))).entry, [...controllerRunFlags(info.kubeconfig), ...args], {
        workDir: work,
        nodeFlags: shippedOrBenchFlags(memoryEnvOf("planner")),
      })
    : undefined
  const inProcess = shipped ? undefined : startController(info, plannerApp, args)
  for (let i = 0; i < runs; i++) {
    await applyManifests(info, [
      {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "ClusterRuntime",
        metadata: { name: "cluster", annotations: { "operator.aicr.run/edited-by": "alice" } },
        spec: { intent: "training", validation: { deployment: "Disabled" } },
      },
    ])
    const input = sha256(`run-${i}`)
    const cm = contentConfigMapName(input)
    await applyManifests(info, [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: cm, namespace: NS, labels: { "operator.aicr.run/role": "content" } }, data },
    ])
    const generation = (expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "runtime") as { metadata: { generation: number } }).metadata
      .generation
    const at = { observedGeneration: generation, lastTransitionTime: new Date().toISOString(), message: "" }
    const status = (manager: string, s: unknown) =>
      kubeRequest(info, {
        method: "PATCH",
        path: `${RUNTIME}/status?fieldManager=${manager}&force=true`,
        body: { apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, status: s },
        contentType: "application/apply-patch+yaml",
      })
    await status("aicr-resolver", {
      conditions: [{ type: "Resolved", status: "True", reason: "InputsResolved", ...at }],
      resolution: { inputDigest: input, contentConfigMap: cm, aicr: { version, image: `ghcr.io/nvidia/aicr:${version}` } },
    })
    const start = performance.now()
    await status("aicr-registry-mirror", { conditions: [{ type: "Mirrored", status: "True", reason: "ContentMirrored", ...at }], mirror: mirrorFor(input) })
    await eventually(async () => ((await kubeRequest(info, { method: "GET", path: ROLLOUTS })).body.items as unknown[]).length > 0, {
      intervalMs: 5,
      timeoutMs: 30_000,
      what: "the rollout",
    })
    latencies.push(performance.now() - start)
    await kubeRequest(info, { method: "DELETE", path: RUNTIME })
    for (const r of (await kubeRequest(info, { method: "GET", path: ROLLOUTS })).body.items as { metadata: { name: string } }[])
      await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
    await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "runtime gone" })
  }
  await inProcess?.stop()
  if (planner !== undefined) {
    idle = await sampleIdle(planner, { minutes: IDLE_MINUTES })
    planner.child.kill("SIGTERM")
  }
} finally {
  await plane.stop()
  rmSync(work, { recursive: true, force: true })
}
const sorted = [...latencies].sort((a, b) => a - b)
process.stdout.write(
  `${JSON.stringify({
    what: `Mirrored=True written → RuntimeRollout exists (window 0), real aicr ${version} resolution, ${components.length} releases`,
    runs,
    latencyMs: latencies.map((x) => +x.toFixed(1)),
    medianMs: +sorted[Math.floor(sorted.length / 2)]!.toFixed(1),
    composeAssessStepsMs: +pureMs.toFixed(3),
    polling: "the bench polls the API every 5 ms, which adds up to 5 ms",
    ...(shipped ? { shipped: true, idleAfterRuns: idle } : {}),
  })}\n`,
)
