// Rollback by pinning against a real registry (operator.md §4.11): the planner (runApp on the real kube-apiserver)
// HEADs every chart of the pinned plan by digest in a real OCI registry (the harness's docker-registry, started here
// with manifest deletes allowed). A chart manifest deleted from the registry refuses the pin with PlanUnreadable and
// no rollout; the registry down is a transient Assessing, retried; the chart pushed back lets the Rollback through.
// The test plays the resolver, the registry-mirror (their rooms, with real charts pushed to the registry) and the
// step-executor (Progressing), as planner.int.test.ts does.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ANNOTATION_EDITED_BY, contentConfigMapName, inputDigest as inputDigestOf, LABEL_OUTCOME } from "@aicr/api"
import { FIXED_CREATED, FIXTURE_CHARTS, packageChart } from "@aicr/chart-upstream"
import { OciClient } from "@aicr/oras"
import {
  applyManifests,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  type Registry,
  startRegistry,
  expectCondition,
} from "@aicr/testing/harness"
import { applyStatusAs, removeRuntime, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { plannerApp } from "../src/app"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const VERSION = "v0.11.1"
let ns: string
let registry: Registry
let registryDir: string
let port: number
let client: OciClient
let planner: { readonly stop: () => Promise<void> } | undefined

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)
const condition = async (type: string): Promise<Cond | undefined> => (await get(RUNTIME)).status?.conditions?.find((c: Cond) => c.type === type)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rollouts = async (): Promise<any[]> => (await get(ROLLOUTS)).items
const patchRuntime = async (body: unknown) => expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body }), "patch the runtime")

// Three real charts of the local upstream's fixtures; the second plan moves the third one to another version.
const base = FIXTURE_CHARTS.slice(0, 3).map((c) => ({ ...c, dependencyRefs: [] as string[] }))
const bumped = base.map((c, i) => (i === 2 ? { ...c, version: `${c.version.replace(/^v/u, "")}-next` } : c))
const repoOf = (chart: string) => `${registry.address}/aicr/pin-it/charts/${chart}`

/** Pushes the charts of one resolution and publishes it as the resolver and the registry-mirror would. */
const publish = async (comps: typeof base, n: number) => {
  const pushed = await Promise.all(comps.map(async (c) => ({ c, p: await client.pushChart(repoOf(c.chart), packageChart(c).tgz, { created: FIXED_CREATED }) })))
  const recipe = {
    componentRefs: comps.map((c) => ({ name: c.name, namespace: c.namespace, chart: c.chart, version: c.version, source: c.source, dependencyRefs: [] })),
    deploymentOrder: comps.map((c) => c.name),
  }
  const files = Object.fromEntries(comps.map((c) => [`${c.name}/values.yaml`, `# ${c.name}\n`]))
  const input = inputDigestOf({ aicr: { version: VERSION, image: `ghcr.io/nvidia/aicr:${VERSION}` }, intent: "training", discovered: { acceleratedNodes: n } })
  const cm = contentConfigMapName(input)
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: cm, namespace: ns, labels: { "operator.aicr.run/role": "content" } },
      data: { "recipe.json": JSON.stringify(recipe), "values.json": JSON.stringify({ kind: "Bundle", deployer: "helm", files }) },
    },
  ])
  const generation = (await get(RUNTIME)).metadata.generation
  const at = { observedGeneration: generation, lastTransitionTime: new Date().toISOString(), message: "" }
  await applyStatusAs(info, "aicr-resolver", {
    conditions: [{ type: "Resolved", status: "True", reason: "InputsResolved", ...at }],
    resolution: { inputDigest: input, contentConfigMap: cm, aicr: { version: VERSION, image: `ghcr.io/nvidia/aicr:${VERSION}` }, releases: comps.length },
  })
  const charts = pushed.map(({ c, p }) => ({ release: c.name, ref: `${repoOf(c.chart)}:${c.version}@${p.manifest.digest}` }))
  await applyStatusAs(info, "aicr-registry-mirror", {
    conditions: [{ type: "Mirrored", status: "True", reason: "ContentMirrored", ...at }],
    mirror: { inputDigest: input, charts },
  })
  return charts
}

/** Approves the open rollout and completes it as the step-executor would; returns its target. */
const rollOut = async (kind: string): Promise<string> => {
  const r = await eventually(async () => (await rollouts()).find((x) => x.spec.kind === kind && !x.metadata.labels?.[LABEL_OUTCOME]), {
    what: `the ${kind} rollout`,
    timeoutMs: 30_000,
  })
  const now = new Date()
  const approval = {
    approvedBy: "bob",
    reason: "pin int test",
    approvedAt: now.toISOString(),
    expiresAt: new Date(Math.min(now.getTime() + 3_600_000, Date.parse(r.spec.deadline))).toISOString(),
    toDigest: r.spec.toDigest,
  }
  expectOk(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${r.metadata.name}`, body: { spec: { approval } } }), "approve")
  const fresh = await get(`${ROLLOUTS}/${r.metadata.name}`)
  await applyStatusAs(
    info,
    "aicr-step-executor",
    {
      conditions: [
        {
          type: "Progressing",
          status: "True",
          reason: "StepsCompleted",
          message: "all steps ready",
          observedGeneration: fresh.metadata.generation,
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    },
    { kind: "RuntimeRollout", name: r.metadata.name },
  )
  await eventually(async () => (await get(`${ROLLOUTS}/${r.metadata.name}`)).metadata.labels?.[LABEL_OUTCOME] === "Succeeded", { what: `${kind} Succeeded` })
  return r.spec.toDigest
}

beforeAll(async () => {
  ns = await createNamespace(info, "aicr-planner-pin")
  registryDir = await mkdtemp(join(tmpdir(), "planner-pin-registry-"))
  registry = await startRegistry({ name: "planner-pin", dir: registryDir, deletes: true })
  port = Number(registry.address.split(":")[1])
  client = new OciClient({ userAgent: "planner-pin-it" })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  for (const r of await eventually(() => rollouts(), { what: "RuntimeRollouts served" }))
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: { intent: "training", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" }, validation: { deployment: "Disabled" } },
    },
  ])
  planner = startController(info, plannerApp, ["--operator-namespace", ns, "--stabilization-window", "1s"])
}, 300_000)

afterAll(async () => {
  await planner?.stop()
  await removeRuntime(info)
  for (const r of await rollouts()) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await client?.close()
  await registry?.stop()
  await rm(registryDir, { recursive: true, force: true })
})

describe("planner: a pin whose charts are gone from the real registry", () => {
  let first: string
  let gone: { release: string; ref: string }

  it("rolls out two plans (their charts pushed to the registry), so the first one can be pinned", async () => {
    const charts = await publish(base, 1)
    first = await rollOut("Install")
    await publish(bumped, 2)
    const second = await rollOut("Upgrade")
    expect(second).not.toBe(first)
    const c = charts[2]!
    gone = { release: c.release, ref: `${c.ref.replace(/:[^:/@]+@/u, "@")}` }
  })

  it("a chart manifest of the pinned plan deleted from the registry → Planned=False/PlanUnreadable naming it, Stalled, no Rollback", async () => {
    const digest = gone.ref.split("@")[1]!
    const repo = gone.ref.split("@")[0]!.slice(registry.address.length + 1)
    const del = await fetch(`http://${registry.address}/v2/${repo}/manifests/${digest}`, { method: "DELETE" })
    expect(del.status).toBe(202)
    expect((await fetch(`http://${registry.address}/v2/${repo}/manifests/${digest}`, { method: "HEAD" })).status).toBe(404)
    await patchRuntime({ spec: { pin: { desiredStateDigest: first } } })
    const refused = await eventually(
      async () => {
        const c = await condition("Planned")
        return c?.reason === "PlanUnreadable" && c
      },
      { what: "Planned=False/PlanUnreadable", timeoutMs: 30_000 },
    )
    expect(refused.status).toBe("False")
    expect(refused.message).toContain(`release ${gone.release} (${gone.ref}) is no longer in the registry`)
    expect(refused.message).toContain("push that chart back by digest or pin another plan")
    expectCondition(await condition("Stalled"), "Stalled", "True", "PlanUnreadable")
    expectCondition(await condition("Ready"), "Ready", "False", "PlanUnreadable")
    expect((await rollouts()).filter((r) => r.spec.kind === "Rollback")).toHaveLength(0)
  })

  it("the registry down → Planned=False/Assessing (retrying), not stalled; no Rollback", async () => {
    await registry.stop()
    await patchRuntime({ metadata: { annotations: { "pin-it/touch": "1" } } })
    const waiting = await eventually(
      async () => {
        const c = await condition("Planned")
        return c?.reason === "Assessing" && c
      },
      { what: "Planned=False/Assessing", timeoutMs: 60_000 },
    )
    expect(waiting.message).toContain("the registry did not answer (retrying)")
    expect(waiting.message).toContain(registry.address)
    expect((await condition("Stalled"))?.status).toBe("False")
    expect((await rollouts()).filter((r) => r.spec.kind === "Rollback")).toHaveLength(0)
  })

  it("the registry back and the chart pushed back (same digest) → the Rollback rollout awaits approval", async () => {
    registry = await startRegistry({ name: "planner-pin", dir: registryDir, deletes: true, port })
    const again = await client.pushChart(repoOf(base[2]!.chart), packageChart(base[2]!).tgz, { created: FIXED_CREATED })
    expect(again.manifest.digest).toBe(gone.ref.split("@")[1])
    const rollback = await eventually(async () => (await rollouts()).find((r) => r.spec.kind === "Rollback"), {
      what: "the Rollback rollout",
      timeoutMs: 90_000,
    })
    expect(rollback.spec).toMatchObject({ toDigest: first, requiresApproval: true })
    // Planned is written after the rollout is created, in the same pass: wait for that write.
    await eventually(async () => (await condition("Planned"))?.status === "True", { what: "Planned True after the Rollback rollout" })
    expectCondition(await condition("Planned"), "Planned", "True", "PlanComputed")
  })
})
