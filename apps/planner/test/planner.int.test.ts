// The planner (runApp: informers, work queue, driver, SSA) on the real kube-apiserver, fed with real resolutions:
// the recipe and helm bundle of the real `aicr` v0.10.16 and v0.11.1 for the EKS guide's runtime. The test plays the
// resolver and the registry-mirror (it writes their rooms with their field managers, as they would) and the
// step-executor (Progressing), so the planner's own behaviour is what is measured: plans, window, assessment,
// rollouts, supersede, close, active plan, Ready.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import {
  ANNOTATION_EDITED_BY,
  type ClusterRuntime,
  contentConfigMapName,
  FINALIZER_CLEANUP,
  inputDigest as inputDigestOf,
  LABEL_OUTCOME,
  sha256,
} from "@aicr/api"
import { eventRecorderLayer, Kube, makeKube } from "@aicr/kube"
import {
  aicrBinary,
  applyManifests,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  readAuditEvents,
  readVersions,
  expectCondition,
  untilCondition,
} from "@aicr/testing/harness"
import { Effect, Layer } from "effect"
import { applyStatusAs, removeRuntime, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { removeFinalizer } from "../src/act"
import { plannerApp } from "../src/app"
import { classOf } from "../src/errors"
import { finalizerPatch } from "../src/teardown"

const run = promisify(execFile)
const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const versions = readVersions()
const work = mkdtempSync(join(tmpdir(), "planner-it-"))
let ns: string
let planner: { readonly stop: () => Promise<void> } | undefined

/** The content ConfigMap data the resolver publishes: the real CLI's recipe (JSON) and helm bundle (file tree). */
const realResolution = async (version: string) => {
  const dir = join(work, version)
  const env = { PATH: process.env.PATH, HOME: work }
  await run(
    aicrBinary(version),
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
      "-t",
      "json",
      "-o",
      join(work, `${version}.json`),
    ],
    { env },
  )
  await run(aicrBinary(version), ["bundle", "-r", join(work, `${version}.json`), "-o", dir, "--deployer", "helm"], { env, cwd: work })
  const files: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e)
      if (statSync(p).isDirectory()) walk(p)
      else files[relative(dir, p)] = readFileSync(p, "utf8")
    }
  }
  walk(dir)
  const recipe = readFileSync(join(work, `${version}.json`), "utf8")
  const components = JSON.parse(recipe).componentRefs as { name: string; version?: string; chart?: string; source?: string; manifestFiles?: string[] }[]
  return { recipe, files, components }
}

interface Cond {
  type: string
  status: string
  reason: string
  message: string
  observedGeneration?: number
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)
const condition = async (type: string): Promise<Cond | undefined> => (await get(RUNTIME)).status?.conditions?.find((c: Cond) => c.type === type)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rollouts = async (): Promise<any[]> => (await get(ROLLOUTS)).items

/** Publishes a resolution of one AICR version as the resolver and the registry-mirror would (their rooms). */
const publish = async (version: string) => {
  const r = await realResolution(version)
  const input = inputDigestOf({ aicr: { version, image: `ghcr.io/nvidia/aicr:${version}` }, intent: "training", platform: "kubeflow", discovered: {} })
  const cm = contentConfigMapName(input)
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: cm, namespace: ns, labels: { "operator.aicr.run/role": "content" } },
      data: {
        "recipe.json": r.recipe,
        "values.json": JSON.stringify({ apiVersion: "operator.aicr.run/v1alpha1", kind: "Bundle", deployer: "helm", files: r.files }),
      },
    },
  ])
  const generation = (await get(RUNTIME)).metadata.generation
  const at = { observedGeneration: generation, lastTransitionTime: new Date().toISOString(), message: "" }
  await applyStatusAs(info, "aicr-resolver", {
    conditions: [{ type: "Resolved", status: "True", reason: "InputsResolved", ...at }],
    resolution: { inputDigest: input, contentConfigMap: cm, aicr: { version, image: `ghcr.io/nvidia/aicr:${version}` }, releases: r.components.length },
  })
  const prefix = "127.0.0.1:5000/aicr/cluster"
  const charts = r.components
    .filter((c) => Object.keys(r.files).some((f) => f.startsWith(`${c.name}/`)))
    .map((c) => ({
      release: c.name,
      ref: c.chart
        ? `${prefix}/charts/${c.chart}:${c.version}@${sha256(`${c.chart}@${c.version}`)}`
        : `${prefix}/wrappers/${c.name}:0.0.0-aicr-1@${sha256(c.name)}`,
    }))
  await applyStatusAs(info, "aicr-registry-mirror", {
    conditions: [{ type: "Mirrored", status: "True", reason: "ContentMirrored", ...at }],
    mirror: { inputDigest: input, bundle: `${prefix}/bundles/cluster:input-${input.slice(7, 39)}@${sha256(input)}`, charts },
  })
  return { input, components: r.components }
}

/** As the step-executor would: Progressing True/StepsCompleted for the rollout's generation. */
const complete = async (name: string) => {
  const r = await get(`${ROLLOUTS}/${name}`)
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
          observedGeneration: r.metadata.generation,
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    },
    { kind: "RuntimeRollout", name: name },
  )
}

const approve = async (name: string) => {
  const r = await get(`${ROLLOUTS}/${name}`)
  const now = new Date()
  const approval = {
    approvedBy: "bob",
    reason: "planner int test",
    approvedAt: now.toISOString(),
    expiresAt: new Date(Math.min(now.getTime() + 3_600_000, Date.parse(r.spec.deadline))).toISOString(),
    toDigest: r.spec.toDigest,
  }
  expectOk(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, body: { spec: { approval } } }), "approve")
}

// This file plays the step executor and writes no Application: a grace period longer than the file keeps the stack
// watch (a release whose Application is missing is NotReady; watch.int.test.ts) out of its Ready assertions.
const startPlanner = (window: string) => {
  planner = startController(info, plannerApp, ["--operator-namespace", ns, "--stabilization-window", window, "--not-ready-grace", "1h"])
}

beforeAll(async () => {
  ns = await createNamespace(info, "aicr-planner")
  await removeRuntime(info)
  // Right after the CRDs were applied the rollout storage may still be initialising (HTTP 429).
  for (const r of await eventually(() => rollouts(), { what: "RuntimeRollouts served" }))
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: {
        intent: "training",
        platform: "kubeflow",
        criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
        validation: { deployment: "Disabled" },
      },
    },
  ])
  startPlanner("2s")
}, 300_000)

afterAll(async () => {
  await planner?.stop()
  // The planner's cleanup finalizer would hold the runtime with no planner left to remove it.
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  for (const r of await rollouts()) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  rmSync(work, { recursive: true, force: true })
})

describe("planner on the local control plane, with real resolutions from AICR v0.10.16 and v0.11.1", () => {
  let install: string

  it("waits for the resolution, then writes the immutable plan and holds the rollout for the stabilization window", async () => {
    await eventually(async () => (await condition("Planned"))?.reason === "AwaitingResolution", { what: "Planned=False/AwaitingResolution" })
    await publish(versions.aicrPrevious)
    const stabilizing = await eventually(
      async () => {
        const c = await condition("Planned")
        return c?.reason === "Stabilizing" && c
      },
      { what: "Planned=False/Stabilizing" },
    )
    expect(stabilizing.message).toMatch(/must hold still until .* \(\ds left\)/)
    const plans = (await get(`/api/v1/namespaces/${ns}/configmaps?labelSelector=operator.aicr.run%2Frole%3Dplan`)).items
    expect(plans).toHaveLength(1)
    expect(plans[0].immutable).toBe(true)
    const plan = JSON.parse(plans[0].data["plan.json"])
    expect(plan.releases.map((r: { name: string }) => r.name)).toContain("kai-scheduler")
    expect(plan.releases.find((r: { name: string }) => r.name === "kai-scheduler").upstream.version).toBe("v0.12.17")
    expect((await rollouts()).length).toBe(0)
  })

  it("after the window, creates the Install rollout awaiting approval, requested by the runtime's last editor", async () => {
    const [r] = await eventually(
      async () => {
        const rs = await rollouts()
        return rs.length === 1 && rs
      },
      { what: "the Install rollout", timeoutMs: 30_000 },
    )
    install = r.metadata.name
    expect(r.spec).toMatchObject({ kind: "Install", requiresApproval: true, requestedBy: "alice" })
    expect(r.spec.steps.length).toBe(13)
    expect(r.spec.steps.every((s: { action: string }) => s.action === "Install")).toBe(true)
    expect(r.spec.steps.map((s: { release: string }) => s.release).slice(0, 3)).toEqual(["aws-ebs-csi-driver", "aws-efa", "cert-manager"])
    // The rollout is created before the runtime's status is written in the same pass: wait for that write.
    const want = `rollout ${install} awaiting approval (kubectl aicr approve ${install} --reason "…")`
    await eventually(async () => (await condition("Ready"))?.message === want, { what: "Ready names the rollout" })
    expect((await condition("Ready"))?.message).toBe(want)
    const assessment = JSON.parse((await get(`/api/v1/namespaces/${ns}/configmaps/aicr-assessment-${install}`)).data["assessment.json"])
    expect(assessment.components.every((c: { change: string }) => c.change === "added")).toBe(true)
  })

  it("closes the rollout Succeeded once every step is ready (validation Disabled): the plan becomes active, Ready=True", async () => {
    await approve(install)
    await complete(install)
    await eventually(async () => (await get(`${ROLLOUTS}/${install}`)).metadata.labels?.[LABEL_OUTCOME] === "Succeeded", { what: "outcome Succeeded" })
    const ready = await eventually(
      async () => {
        const c = await condition("Ready")
        return c?.status === "True" && c
      },
      { what: "Ready=True" },
    )
    expect(ready.reason).toBe("ValidationDisabled")
    const rt = await get(RUNTIME)
    expect(rt.status.plans.active).toBe(rt.status.plans.target)
  })

  it("the AICR upgrade (v0.10.16 → v0.11.1) plans kai-scheduler v0.12.17 → v0.13.0 and nvsentinel v0.10.0 → v1.1.0 as breaking, unknown, needing approval", async () => {
    const writesBefore = readAuditEvents(info, { resource: "configmaps", namespace: ns, verb: "create" }).length
    await publish(versions.aicr)
    const upgrade = await eventually(async () => (await rollouts()).find((r) => r.spec.kind === "Upgrade"), { what: "the Upgrade rollout", timeoutMs: 30_000 })
    expect(upgrade.spec.steps).toEqual([
      { release: "kai-scheduler", namespace: "kai-scheduler", action: "Upgrade", verdict: "unknown", from: "v0.12.17", to: "v0.13.0" },
      { release: "nvsentinel", namespace: "nvsentinel", action: "Upgrade", verdict: "unknown", from: "v0.10.0", to: "v1.1.0" },
    ])
    expect(upgrade.spec.requiresApproval).toBe(true)
    const assessment = JSON.parse((await get(`/api/v1/namespaces/${ns}/configmaps/aicr-assessment-${upgrade.metadata.name}`)).data["assessment.json"])
    expect(assessment.assessedBy).toBe("aicr-operator")
    expect(assessment.components).toEqual([
      expect.objectContaining({
        component: "kai-scheduler",
        change: "version",
        from: "v0.12.17",
        to: "v0.13.0",
        verdict: "unknown",
        jump: "1 minor",
        breaking: true,
      }),
      expect.objectContaining({
        component: "nvsentinel",
        change: "version",
        from: "v0.10.0",
        to: "v1.1.0",
        verdict: "unknown",
        jump: "1 major",
        breaking: true,
      }),
    ])
    expect(assessment.components[0].explanation).toContain(`AICR ${versions.aicr} has no upgrade-check`)
    // The real v0.11.1 has no upgrade-check command (its capabilities say so): the planner starts no Job for it.
    expect((await get(`/apis/batch/v1/namespaces/${ns}/jobs?labelSelector=operator.aicr.run%2Faicr-job%3Dupgrade-check`)).items).toHaveLength(0)
    expect(readAuditEvents(info, { resource: "jobs", namespace: ns, verb: "create" })).toHaveLength(0)
    await eventually(async () => (await get(`${ROLLOUTS}/${upgrade.metadata.name}`)).status?.assessment?.verdicts?.unknown === 2, { what: "status.assessment" })
    // One plan and one assessment ConfigMap per change; nothing is rewritten.
    expect(readAuditEvents(info, { resource: "configmaps", namespace: ns, verb: "create" }).length - writesBefore).toBe(2)
    expect(readAuditEvents(info, { resource: "configmaps", namespace: ns, verb: "update" })).toHaveLength(0)
  })

  it("a newer target supersedes the rollout nobody approved yet", async () => {
    const before = (await rollouts()).find((r) => r.spec.kind === "Upgrade")
    // Going back to the v0.10.16 resolution is a new target for an upgrade that was never approved.
    await publish(versions.aicrPrevious)
    await eventually(async () => (await get(`${ROLLOUTS}/${before.metadata.name}`)).metadata.labels?.[LABEL_OUTCOME] === "Superseded", {
      what: "the upgrade superseded",
    })
    // The outcome label and the Succeeded condition are two writes: wait for the condition too, then both hold.
    await untilCondition(() => get(`${ROLLOUTS}/${before.metadata.name}`), "Succeeded", "False", "RolloutSuperseded")
    const closed = await get(`${ROLLOUTS}/${before.metadata.name}`)
    expect(closed.metadata.labels?.[LABEL_OUTCOME]).toBe("Superseded")
    expectCondition(closed, "Succeeded", "False", "RolloutSuperseded")
    // The v0.10.16 plan is the active one again: nothing to roll out, no new rollout.
    await eventually(async () => (await condition("Ready"))?.status === "True", { what: "Ready=True again" })
    expect((await rollouts()).filter((r) => !r.metadata.labels?.[LABEL_OUTCOME])).toHaveLength(0)
  })

  it("a finalizer patch decided on a view that moved is refused by the API server's test (422) and fails FinalizerMovedError, a transient failure", async () => {
    await eventually(async () => ((await get(RUNTIME)).metadata.finalizers ?? []).includes(FINALIZER_CLEANUP), { what: "the cleanup finalizer" })
    const stale = (await get(RUNTIME)) as ClusterRuntime
    // Another writer puts its finalizer first: the planner's Remove patch tests index 0, which now holds another one.
    const hold = "example.com/hold"
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: RUNTIME,
        contentType: "application/json-patch+json",
        body: [{ op: "add", path: "/metadata/finalizers/0", value: hold }],
      }),
      "add a finalizer first",
    )
    try {
      const kube = Layer.succeed(Kube)(makeKube({ kubeconfigPath: info.kubeconfig }))
      const events = eventRecorderLayer({ controller: "operator.aicr.run/planner", instance: "test" }).pipe(Layer.provide(kube))
      const error = await Effect.runPromise(
        removeFinalizer(stale, finalizerPatch(stale, "Remove")!, "test").pipe(Effect.provide(Layer.mergeAll(kube, events)), Effect.flip),
      )
      expect(error._tag).toBe("FinalizerMovedError")
      expect(classOf(error)).toBe("transient")
      expect((await get(RUNTIME)).metadata.finalizers).toEqual([hold, FINALIZER_CLEANUP])
    } finally {
      const now = (await get(RUNTIME)).metadata.finalizers as string[]
      await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: now.filter((f) => f !== hold) } } })
    }
  })
})
