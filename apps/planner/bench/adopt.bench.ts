// Re-adoption time on a real control plane: the stack of a real `aicr` v0.11.1 resolution (EKS guide recipe, its
// releases as Argo CD Applications exactly as the step-executor writes them, with the bundle's values), left by a
// runtime that is gone; the operator namespace is empty (no plan, no content). Measured from the planner's start
// (cold: process start, informers, first pass) and, with the planner already running, from the new runtime's
// creation, to the Adopt rollout existing (AwaitingApproval). Argo CD's controller does not run here: the planner
// reads only the Applications' specs, markers and sync status. Not a test: it prints numbers.
// Run: npx tsx apps/planner/bench/adopt.bench.ts [runs=5]
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LABEL_PLAN, LABEL_RELEASE, LABEL_RUNTIME_UID, planKey, sha256 } from "@aicr/api"
import { releaseApplication } from "@aicr/argocd"
import { parseConfig, runApp } from "@aicr/runtime"
import { applyManifests, eventually, expectOk, installArgoCdObjects, kubeRequest, readVersions, repoRoot, startControlPlane } from "@aicr/testing/harness"
import { Effect, Fiber } from "effect"
import { parse } from "yaml"
import { plannerApp } from "../src/app"
import { composePlan, readContent } from "../src/compose"
import { realResolution } from "./resolution"

const runs = Number(process.argv[2] ?? 5)
const version = readVersions().aicr
const work = mkdtempSync(join(tmpdir(), "adopt-bench-"))
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const NS = "aicr-system"
const OLD = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"

const { files, data, mirrorFor } = await realResolution(version, work)
const content = readContent(data)
if (!content.ok) throw new Error(content.why)
const input = sha256("bench")
const mirror = mirrorFor(input)
const composed = composePlan({
  runtimeUID: OLD,
  resolution: { inputDigest: input },
  mirror,
  contentConfigMap: "c",
  content: content.value,
  project: "aicr",
  now: "2026-12-02T00:00:00Z",
})
if (!composed.ok) throw new Error(composed.why)
const plan = composed.value
const applications = plan.releases.map((r) => {
  const a = releaseApplication({
    name: r.name,
    namespace: "argocd",
    project: "aicr",
    release: r.name,
    destinationNamespace: r.namespace,
    chartRef: r.chart.ref,
    chartDigest: r.chart.digest,
    valuesDigest: r.values.digest,
    values: (parse(files[`${r.name}/values.yaml`] ?? "") ?? {}) as Record<string, unknown>,
    labels: { [LABEL_RUNTIME_UID]: OLD, [LABEL_RELEASE]: r.name, [LABEL_PLAN]: planKey(plan.desiredStateDigest) },
    planDigest: plan.desiredStateDigest,
    writtenAt: "2026-12-02T00:00:00Z",
    syncRetries: 2,
    record: { release: r, plan: plan.releases.map((x) => x.name) },
  })
  // The AppProject and destinations do not matter here: Argo CD's controller does not run.
  return a
})

const plane = await startControlPlane({ fresh: true, nodes: false })
const info = plane.info
const cold: number[] = []
const warm: number[] = []
const list = async (path: string) =>
  (expectOk(await kubeRequest(info, { method: "GET", path }), path) as { items: { metadata: { name: string }; spec: { kind: string } }[] }).items
const adoptExists = () =>
  eventually(async () => (await list(ROLLOUTS)).some((r) => r.spec.kind === "Adopt"), { intervalMs: 5, timeoutMs: 60_000, what: "the Adopt rollout" })
const reset = async () => {
  for (const r of await list(ROLLOUTS)) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  for (const cm of await list(`/api/v1/namespaces/${NS}/configmaps?labelSelector=operator.aicr.run/role`))
    await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${NS}/configmaps/${cm.metadata.name}` })
  // The planner's cleanup finalizer would turn the delete into a removal of the stack: it is taken off first.
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "runtime gone" })
}
const newRuntime = () =>
  applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { "operator.aicr.run/edited-by": "alice" } },
      spec: { intent: "training", validation: { deployment: "Disabled" }, adoption: { fromRuntimeUID: OLD } },
    },
  ])
const config = parseConfig(
  "planner",
  [
    "--kubeconfig",
    info.kubeconfig,
    "--leader-elect=false",
    "--metrics-bind-address=0",
    "--health-probe-bind-address=0",
    "--log-level=warn",
    "--operator-namespace",
    NS,
    "--engine-namespace",
    "argocd",
  ],
  {},
)
try {
  await applyManifests(info, join(repoRoot(), "crds"))
  await installArgoCdObjects(info)
  await applyManifests(info, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }])
  await applyManifests(info, applications)
  for (let i = 0; i < runs; i++) {
    await newRuntime()
    const t0 = performance.now()
    const fiber = Effect.runFork(runApp(plannerApp, config))
    await adoptExists()
    cold.push(performance.now() - t0)
    await reset()
    const t1 = performance.now()
    await newRuntime()
    await adoptExists()
    warm.push(performance.now() - t1)
    await Effect.runPromise(Fiber.interrupt(fiber))
    await reset()
  }
} finally {
  await plane.stop()
  rmSync(work, { recursive: true, force: true })
}
const med = (xs: number[]) => +[...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1)
process.stdout.write(
  `${JSON.stringify({
    what: `re-adoption: empty operator namespace → Adopt rollout exists; ${applications.length} Applications of a real aicr ${version} resolution`,
    runs,
    fromPlannerStartMs: cold.map((x) => +x.toFixed(1)),
    fromPlannerStartMedianMs: med(cold),
    fromRuntimeCreatedMs: warm.map((x) => +x.toFixed(1)),
    fromRuntimeCreatedMedianMs: med(warm),
    polling: "the bench polls the API every 5 ms, which adds up to 5 ms",
  })}\n`,
)
