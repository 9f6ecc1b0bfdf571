// The validation gate (runApp: informers, work queue, driver, SSA) on the real kube-apiserver, with the real AICR
// v0.11.1: its snapshot agent and `aicr validate` run as Jobs from the pinned image through the process kubelet, and
// `aicr validate` runs AICR's real deployment validator as its own Jobs. The test plays the planner (plan and content
// ConfigMaps, rollouts, outcome labels), the approval-guard (Approved), the step-executor (Progressing=StepsCompleted)
// and the chart (the launcher's ServiceAccount and its binding, the GPU Operator workload). The evidence is pulled back
// with the real `oras` CLI.
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { ANNOTATION_EDITED_BY, contentConfigMapName, desiredStateDigest, type Plan, sha256 } from "@aicr/api"
import { digestOf, EMPTY_JSON, MediaType, OciClient } from "@aicr/oras"
import { CreateAliasCommand, CreateKeyCommand, GetPublicKeyCommand, KMSClient } from "@aws-sdk/client-kms"
import { createPublicKey } from "node:crypto"
import {
  aicrBinary,
  applyManifests,
  type AwsEmulator,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  readVersions,
  recordedProcess,
  startAws,
  expectCondition,
} from "@aicr/testing/harness"
import { applyPlan, applyStatusAs, closeRollout, get, ROLLOUTS, RUNTIME, setApproved, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { validationGateApp } from "../src/app"

const run = promisify(execFile)
const info: HarnessInfo = inject("harness")
const { aicr: AICR } = readVersions()
const IMAGE = `ghcr.io/nvidia/aicr:${AICR}`
const suffix = Math.random().toString(36).slice(2, 6)
const PREFIX = `aicr/val-${suffix}`
const LAUNCHER = "aicr-validation"
const work = mkdtempSync(join(tmpdir(), "aicr-valgate-"))
let ns: string
let vns: string
let uid: string
let bundleRef: string
let bundleDigest: string
let gate: { readonly stop: () => Promise<void> } | undefined
let recipeText: string

/** A tool hack/build-tools.sh builds by name (oras, cosign), from its cache; throws how to build it when missing. */
const toolBinary = (tool: "oras" | "cosign"): string => {
  const v = new RegExp(`^${tool.toUpperCase()}_VERSION=(\\S+)`, "mu").exec(readFileSync(join(process.cwd(), "hack", "tools", "versions.env"), "utf8"))?.[1]
  const dir = join(
    process.env.AICR_TOOLS_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? "/root", ".cache"), "aicr-operator", "bin"),
    `${tool}-${v}`,
  )
  if (v === undefined || !existsSync(join(dir, ".complete")))
    throw new Error(`${tool} ${v} is not built (no ${dir}/.complete): run 'bash hack/build-tools.sh ${tool}'`)
  return join(dir, tool)
}
const orasBinary = () => toolBinary("oras")

const startGate = (extra: string[] = [], evidenceProcess?: string) => {
  gate = startController(info, validationGateApp({ evidenceProcess }), [
    "--registry",
    `oci://${info.registry}/${PREFIX}`,
    "--operator-namespace",
    ns,
    "--validation-namespace",
    vns,
    "--launcher-service-account",
    LAUNCHER,
    ...extra,
  ])
}
const stopGate = async () => {
  await gate?.stop()
  gate = undefined
}

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
const condition = async (name: string, type: string): Promise<Cond | undefined> =>
  (await get(info, `${ROLLOUTS}/${name}`)).status?.conditions?.find((c: Cond) => c.type === type)
const waitCondition = (name: string, type: string, status: string, reasons: string[], timeoutMs = 110_000) =>
  eventually(
    async () => {
      const c = await condition(name, type)
      return c !== undefined && c.status === status && reasons.includes(c.reason) && c
    },
    { timeoutMs, intervalMs: 250, what: `rollout ${name} ${type}=${status}/${reasons.join("|")}` },
  )
/** The pid of a running AICR validator process (the process kubelet's containerID ends in it). */
const validatorPid = (check: string) =>
  eventually(
    async () => {
      const pods = await get(info, `/api/v1/namespaces/${vns}/pods?labelSelector=aicr.nvidia.com%2Fvalidator%3D${check}`)
      const running = pods.items.find(
        (p: { status?: { containerStatuses?: Array<{ state?: { running?: unknown } }> } }) => p.status?.containerStatuses?.[0]?.state?.running !== undefined,
      )
      return running !== undefined && Number(running.status.containerStatuses[0].containerID.split("/").at(-1))
    },
    { timeoutMs: 90_000, intervalMs: 50, what: `the running ${check} validator` },
  )
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/u, "Z")

/** The plan and content ConfigMaps the planner writes, with the real recipe (restricted to `checks`) and the pinned AICR. */
const writePlan = async (label: string, checks: string[]): Promise<Plan> => {
  const recipe = JSON.parse(recipeText)
  recipe.validation.deployment.checks = checks
  const recipeJson = JSON.stringify(recipe)
  const engine = { kind: "argocd" as const, project: "aicr" }
  const releases = [
    {
      name: `gpu-operator-${label}`,
      namespace: "gpu-operator",
      order: 0,
      dependsOn: [],
      chart: { ref: `${info.registry}/${PREFIX}/charts/gpu-operator:v25.10.1`, digest: sha256(label) },
      values: { digest: sha256(`values ${label}`) },
    },
  ]
  const digest = desiredStateDigest({ engine, releases })
  const content = contentConfigMapName(digest)
  const plan: Plan = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Plan",
    runtimeUID: uid,
    createdAt: iso(Date.now()),
    source: "Resolution",
    desiredStateDigest: digest,
    inputDigest: sha256(`input ${label}`),
    aicr: { version: AICR, image: IMAGE },
    flags: ["--deployer", "helm"],
    bundle: { ref: bundleRef },
    engine,
    releases,
    content: [{ key: "recipe.json", configMap: content, digest: sha256(recipeJson) }],
  }
  await applyPlan(info, ns, plan, recipeJson)
  return plan
}

/** An approved Install rollout to `plan` (Approved as the guard reports it); `stepsDone` reports every step ready as the executor would. */
const createRollout = async (name: string, plan: Plan, o: { stepsDone?: boolean; kind?: "Install" | "Remove" } = {}) => {
  const now = Date.now()
  const kind = o.kind ?? "Install"
  expectOk(
    await kubeRequest(info, {
      method: "POST",
      path: ROLLOUTS,
      body: {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "RuntimeRollout",
        metadata: { name },
        spec: {
          runtimeUID: uid,
          ...(kind === "Remove" ? { fromDigest: plan.desiredStateDigest } : {}),
          toDigest: plan.desiredStateDigest,
          kind,
          deadline: iso(now + 3_600_000),
          requiresApproval: true,
          steps: [{ release: plan.releases[0]!.name, namespace: "gpu-operator", action: kind === "Remove" ? "Remove" : "Install" }],
          approval: {
            approvedBy: "bob",
            groups: ["aicr-approvers"],
            reason: "validation-gate int test",
            approvedAt: iso(now),
            expiresAt: iso(now + 3_000_000),
            toDigest: plan.desiredStateDigest,
          },
        },
      },
    }),
    `create rollout ${name}`,
  )
  await setApproved(info, name, "True", "ApprovedByUser", "Approved by bob")
  if (o.stepsDone) await stepsDone(name)
}
const stepsDone = async (name: string) => {
  const r = await get(info, `${ROLLOUTS}/${name}`)
  await applyStatusAs(
    info,
    "aicr-step-executor",
    {
      conditions: [
        {
          type: "Progressing",
          status: "True",
          reason: "StepsCompleted",
          message: "Every step is ready",
          observedGeneration: r.metadata.generation,
          lastTransitionTime: iso(Date.now()),
        },
      ],
    },
    { kind: "RuntimeRollout", name },
  )
}
const setValidation = async (mode: "Required" | "Disabled") =>
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: RUNTIME,
      body: { metadata: { annotations: { [ANNOTATION_EDITED_BY]: "alice" } }, spec: { validation: { deployment: mode } } },
    }),
    `validation ${mode}`,
  )

/** The chart's `validation.enabled` for AICR < 1.1: the launcher's ServiceAccount, bound to cluster-admin. */
const installLauncher = (o: { binding?: boolean } = {}) =>
  applyManifests(info, [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: LAUNCHER, namespace: vns } },
    ...(o.binding === false
      ? []
      : [
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: `${vns}-launcher` },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "ServiceAccount", name: LAUNCHER, namespace: vns }],
          },
        ]),
  ])

/** The GPU Operator workload the checks read: pods labelled app=gpu-operator, the Deployment labelled with its version. */
const installGpuOperator = async () => {
  const created = await kubeRequest(info, { method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: "gpu-operator" } } })
  if (created.status !== 409) expectOk(created, "namespace gpu-operator")
  await applyManifests(info, [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "gpu-operator", namespace: "gpu-operator", labels: { app: "gpu-operator", "app.kubernetes.io/version": "v25.10.1" } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "gpu-operator" } },
        template: {
          metadata: { labels: { app: "gpu-operator" } },
          spec: {
            nodeName: "kwok-system-0",
            tolerations: [{ operator: "Exists" }],
            containers: [{ name: "gpu-operator", image: "nvcr.io/nvidia/gpu-operator:v25.10.1" }],
          },
        },
      },
    },
  ])
  await eventually(
    async () => {
      const pods = await get(info, "/api/v1/namespaces/gpu-operator/pods?labelSelector=app%3Dgpu-operator")
      return pods.items.some((p: { status?: { phase?: string } }) => p.status?.phase === "Running")
    },
    { timeoutMs: 60_000, what: "a Running gpu-operator pod" },
  )
}

beforeAll(async () => {
  ns = await createNamespace(info, "aicr-val")
  vns = await createNamespace(info, "aicr-validation")
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  for (const r of (await eventually(() => get(info, ROLLOUTS), { what: "RuntimeRollouts served" })).items)
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await kubeRequest(info, { method: "DELETE", path: "/apis/apps/v1/namespaces/gpu-operator/deployments/gpu-operator" })
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: {
        intent: "training",
        platform: "kubeflow",
        criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
        validation: { deployment: "Required" },
      },
    },
  ])
  uid = (await get(info, RUNTIME)).metadata.uid
  // The resolver's discovery: the accelerated nodes the fresh snapshot runs on.
  await applyStatusAs(info, "aicr-resolver", {
    discovery: {
      accelerated: { nodeCount: 4, nodes: ["kwok-gpu-0", "kwok-gpu-1", "kwok-gpu-2", "kwok-gpu-3"] },
      system: { nodeCount: 2, nodes: ["kwok-system-0", "kwok-system-1"] },
    },
  })
  // The real recipe for the sample runtime (AICR v0.11.1, run here as a user would).
  const out = join(work, "recipe.json")
  await run(
    aicrBinary(AICR),
    [
      "recipe",
      "--service",
      "eks",
      "--accelerator",
      "h100",
      "--intent",
      "training",
      "--os",
      "ubuntu",
      "--platform",
      "kubeflow",
      "--format",
      "json",
      "--output",
      out,
    ],
    { env: { PATH: process.env.PATH, HOME: work } },
  )
  recipeText = readFileSync(out, "utf8")
  expect(JSON.parse(recipeText).validation.deployment.checks).toEqual(
    expect.arrayContaining(["operator-health", "expected-resources", "gpu-operator-version", "check-nvidia-smi"]),
  )
  // The bundle the mirror pushed (the evidence's subject): a small artifact under <prefix>/bundles/cluster.
  const client = new OciClient()
  const repo = `${info.registry}/${PREFIX}/bundles/cluster`
  const layer = Buffer.from("bundle files\n")
  await client.pushBlob(repo, layer, { digest: digestOf(layer), size: layer.length })
  await client.pushBlob(repo, EMPTY_JSON.bytes, { digest: EMPTY_JSON.descriptor.digest, size: 2 })
  const pushed = await client.pushManifest(`${repo}:input-${suffix}`, {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    artifactType: "application/vnd.aicr.bundle.v1",
    config: { mediaType: MediaType.OciEmpty, digest: EMPTY_JSON.descriptor.digest, size: 2 },
    layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: digestOf(layer), size: layer.length }],
  })
  await client.close()
  bundleRef = `${repo}:input-${suffix}`
  bundleDigest = pushed.digest
  startGate()
}, 300_000)

afterAll(async () => {
  await stopGate()
  await kubeRequest(info, { method: "DELETE", path: "/apis/apps/v1/namespaces/gpu-operator/deployments/gpu-operator" })
  await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${vns}-launcher` })
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  rmSync(work, { recursive: true, force: true })
})

describe("validation-gate: before any step", () => {
  it("Required without the validation launcher, then without its binding: ValidationUnavailable naming what is missing and both ways out; the binding makes it ready", async () => {
    const plan = await writePlan("unavailable", ["operator-health"])
    await createRollout(`val-${suffix}-unavailable`, plan)
    const ready = await waitCondition(`val-${suffix}-unavailable`, "ValidationReady", "False", ["ValidationUnavailable"])
    expect(ready.message).toContain(`ServiceAccount ${vns}/${LAUNCHER}`)
    expect(ready.message).toContain("validation.enabled: true")
    expect(ready.message).toContain("spec.validation.deployment: Disabled")
    expectCondition(await condition(`val-${suffix}-unavailable`, "Validated"), "Validated", "False", "ValidationUnavailable")
    // The ServiceAccount alone is not an install: the API server's authorizer (access reviews) says what it lacks.
    await installLauncher({ binding: false })
    const unbound = await eventually(
      async () => {
        const c = await condition(`val-${suffix}-unavailable`, "ValidationReady")
        return c?.reason === "ValidationUnavailable" && c.message.includes("may not create Jobs") && c
      },
      { timeoutMs: 60_000, intervalMs: 250, what: "ValidationUnavailable naming the launcher's missing rights" },
    )
    expect(unbound.message).toContain(`ServiceAccount ${vns}/${LAUNCHER} may not create Jobs in namespace ${vns}`)
    expect(unbound.message).toContain(
      `ServiceAccount ${vns}/aicr-validator is not bound (AICR ≥ 1.1), and ${vns}/${LAUNCHER} may not bind cluster-admin per run (AICR < 1.1)`,
    )
    // The ClusterRoleBinding (the layout for AICR < 1.1, as the chart renders it for v0.11.1): seen by its watch.
    await installLauncher()
    await waitCondition(`val-${suffix}-unavailable`, "ValidationReady", "True", ["ValidationAvailable"])
    // Its steps have not run: nothing to validate yet.
    expectCondition(await condition(`val-${suffix}-unavailable`, "Validated"), "Validated", "False", "AwaitingSteps")
    await closeRollout(info, `val-${suffix}-unavailable`, "Superseded")
  })

  it("Disabled: ready and validated, saying validation is off; a Remove rollout is left alone", async () => {
    await setValidation("Disabled")
    const plan = await writePlan("disabled", ["operator-health"])
    await createRollout(`val-${suffix}-disabled`, plan)
    const ready = await waitCondition(`val-${suffix}-disabled`, "ValidationReady", "True", ["ValidationDisabled"])
    expect(ready.message).toContain("validation is off")
    await waitCondition(`val-${suffix}-disabled`, "Validated", "True", ["ValidationDisabled"])
    await closeRollout(info, `val-${suffix}-disabled`, "Succeeded")
    await setValidation("Required")
    await createRollout(`val-${suffix}-remove`, plan, { kind: "Remove" })
    await new Promise((r) => setTimeout(r, 3000))
    expect(await condition(`val-${suffix}-remove`, "ValidationReady")).toBeUndefined()
    await closeRollout(info, `val-${suffix}-remove`, "Succeeded")
  })
})

describe("validation-gate: after the last step, the real aicr validate", () => {
  it("fails the rollout with operator-health's own message while no GPU Operator pod runs, with evidence of the failure", async () => {
    const plan = await writePlan("nogpuop", ["operator-health", "expected-resources", "gpu-operator-version"])
    const name = `val-${suffix}-nogpuop`
    await createRollout(name, plan, { stepsDone: true })
    const validated = await waitCondition(
      name,
      "Validated",
      "False",
      ["ValidationFailed", "ValidationIncomplete", "ValidationEmpty", "ValidationUnverified"],
      115_000,
    )
    expect(validated.reason).toBe("ValidationFailed")
    expect(validated.message).toContain("operator-health: [NOT_FOUND] no gpu-operator pods found")
    const room = (await get(info, `${ROLLOUTS}/${name}`)).status.validation
    expect(room).toMatchObject({
      result: "Failed",
      runID: expect.stringMatching(/^aicr-validate-[0-9a-f]{12}$/u),
      evidenceRef: expect.stringContaining(`${info.registry}/${PREFIX}/evidence/cluster@sha256:`),
    })
    expect(room.checks.failed).toBeGreaterThanOrEqual(1)
  })

  it("passes once the GPU Operator runs with the labels and version the checks read; the evidence, pulled with oras, is the report bound to plan and approval", async () => {
    await installGpuOperator()
    const plan = await writePlan("pass", ["operator-health", "expected-resources", "gpu-operator-version", "check-nvidia-smi"])
    const name = `val-${suffix}-pass`
    await createRollout(name, plan, { stepsDone: true })
    const validated = await waitCondition(name, "Validated", "True", ["ValidationPassed"], 115_000)
    expect(validated.message).toMatch(/^Deployment validation passed operator-health, expected-resources, gpu-operator-version, check-nvidia-smi/u)
    const room = (await get(info, `${ROLLOUTS}/${name}`)).status.validation
    expect(room).toMatchObject({ result: "Passed", checks: { passed: 4, failed: 0, skipped: 0, other: 0 } })
    expect(Date.parse(room.completedAt)).toBeGreaterThanOrEqual(Date.parse(room.startedAt))

    // The user's way: oras pulls the evidence by its reference; the files are the report and the binding.
    const dir = join(work, "evidence")
    await run(orasBinary(), ["pull", "--plain-http", "-o", dir, room.evidenceRef])
    const binding = JSON.parse(readFileSync(join(dir, "binding.json"), "utf8"))
    const ctrfBytes = readFileSync(join(dir, "ctrf.json"))
    expect(binding).toMatchObject({
      kind: "ValidationEvidence",
      rollout: { name, toDigest: plan.desiredStateDigest, kind: "Install" },
      plan: { desiredStateDigest: plan.desiredStateDigest, inputDigest: plan.inputDigest },
      bundle: { ref: bundleRef, digest: bundleDigest },
      approval: { approvedBy: "bob", groups: ["aicr-approvers"], reason: "validation-gate int test" },
      aicr: { version: AICR, image: IMAGE, reportedVersion: AICR.replace(/^v/u, "") },
      validators: [`ghcr.io/nvidia/aicr-validators/deployment:${AICR}`],
      run: { id: room.runID, result: "Passed", reason: "ValidationPassed" },
      report: { digest: sha256(ctrfBytes), size: ctrfBytes.length },
    })
    const ctrf = JSON.parse(ctrfBytes.toString("utf8"))
    expect(ctrf.results.tests.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual([
      ["operator-health", "passed"],
      ["expected-resources", "passed"],
      ["gpu-operator-version", "passed"],
      ["check-nvidia-smi", "passed"],
    ])
    // The validator really ran: its own output names the pod it found and the version it read.
    expect(ctrf.results.tests[0].stdout.join("\n")).toMatch(/gpu-operator-\S+: Running/u)
    expect(ctrf.results.tests[2].stdout.join("\n")).toContain("v25.10.1")
    // check-nvidia-smi ran nvidia-smi in a CUDA pod on each GPU node (the fake hosts' H100s).
    expect(ctrf.results.tests[3].stdout.join("\n")).toMatch(/Successfully verified GPU on all \d+ nodes/u)

    // The evidence is a referrer of the bundle in the evidence repository: oras discover finds it from the bundle.
    const discovered = await run(orasBinary(), ["discover", "--plain-http", "--format", "json", `${info.registry}/${PREFIX}/evidence/cluster@${bundleDigest}`])
    expect(discovered.stdout).toContain(room.evidenceRef.split("@")[1])
  })

  it("a validator that is killed is not validated, never a pass: AICR reports it 'other' and exits 0", async () => {
    const plan = await writePlan("killed", ["check-nvidia-smi"])
    const name = `val-${suffix}-killed`
    await createRollout(name, plan, { stepsDone: true })
    const pid = await validatorPid("check-nvidia-smi")
    process.kill(pid, "SIGKILL")
    const validated = await waitCondition(name, "Validated", "False", ["ValidationIncomplete", "ValidationFailed", "ValidationEmpty", "ValidationUnverified"])
    expect(validated.reason).toBe("ValidationIncomplete")
    expect(validated.message).toMatch(/did not complete \(timeout, crash or never ran\): check-nvidia-smi/u)
    expect((await get(info, `${ROLLOUTS}/${name}`)).status.validation).toMatchObject({ result: "Failed", checks: { other: 1, passed: 0 } })
  })
})

describe("validation-gate: a validator that hangs", () => {
  it("the run passes the gate's deadline and is not validated", async () => {
    await installLauncher()
    await stopGate()
    startGate(["--validation-deadline", "1m"])
    const plan = await writePlan("timeout", ["check-nvidia-smi"])
    const name = `val-${suffix}-timeout`
    await createRollout(name, plan, { stepsDone: true })
    // The validator hangs (stopped), as one waiting forever on a GPU that never answers would.
    const pid = await validatorPid("check-nvidia-smi")
    process.kill(pid, "SIGSTOP")
    try {
      // The Job controller marks it Failed once its pod has terminated: the 1 m deadline, then AICR's own cleanup
      // on SIGTERM within the pod's 30 s grace period.
      const validated = await waitCondition(
        name,
        "Validated",
        "False",
        ["ValidationIncomplete", "ValidationFailed", "ValidationEmpty", "ValidationUnverified"],
        200_000,
      ).catch(async (e: unknown) => {
        const jobs = (await get(info, `/apis/batch/v1/namespaces/${vns}/jobs`)).items.map(
          (j: { metadata: { name: string }; spec: { activeDeadlineSeconds?: number }; status: unknown }) => [
            j.metadata.name,
            j.spec.activeDeadlineSeconds,
            j.status,
          ],
        )
        const pods = (await get(info, `/api/v1/namespaces/${vns}/pods`)).items.map(
          (p: { metadata: { name: string; deletionTimestamp?: string }; status: { phase: string } }) => [
            p.metadata.name,
            p.status.phase,
            p.metadata.deletionTimestamp,
          ],
        )
        process.stderr.write(`[gate int] ${JSON.stringify(await condition(name, "Validated"))}\njobs ${JSON.stringify(jobs)}\npods ${JSON.stringify(pods)}\n`)
        throw e
      })
      expect(validated.reason).toBe("ValidationIncomplete")
      expect(validated.message).toContain("ran past its deadline")
    } finally {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
      await stopGate()
      startGate()
    }
  }, 280_000)
})

// As shipped: the registry and KMS calls run in the bundle's evidence process (a child process per call, with the
// environment of the moment: the credentials below are set after the gate started).
describe("validation-gate: evidence signed with AWS KMS (moto as the local KMS), through the bundle's evidence process", () => {
  let aws: AwsEmulator | undefined
  let evidenceProcess: ReturnType<typeof recordedProcess>
  const saved: Record<string, string | undefined> = {}
  const ALIAS = `alias/aicr-evidence-${suffix}`
  let publicKeyPem: string

  beforeAll(async () => {
    // The bundle's evidence process behind a wrapper that records each call's start, to show where the calls ran.
    evidenceProcess = recordedProcess(work, join((await buildApp("validation-gate", join(work, "bundle"))).outdir, "evidence-process.mjs"))
    aws = await startAws({
      policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "kms:*", Resource: "*" }] }),
      enforceIam: false,
    })
    // The standard credential chain, as the evidence process inherits it at each call: keys, region, the local endpoint.
    const env = { ...aws.env, AWS_ACCESS_KEY_ID: "AKIAVALIDATIONGATE01", AWS_SECRET_ACCESS_KEY: "local-secret", AWS_REGION: "us-east-1" }
    for (const [k, v] of Object.entries(env)) {
      saved[k] = process.env[k]
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    const kms = new KMSClient({
      endpoint: aws.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "AKIAVALIDATIONGATE01", secretAccessKey: "local-secret" },
    })
    const key = await kms.send(new CreateKeyCommand({ KeySpec: "ECC_NIST_P256", KeyUsage: "SIGN_VERIFY", Description: "aicr evidence" }))
    await kms.send(new CreateAliasCommand({ AliasName: ALIAS, TargetKeyId: key.KeyMetadata!.KeyId! }))
    const pub = await kms.send(new GetPublicKeyCommand({ KeyId: ALIAS }))
    publicKeyPem = createPublicKey({ key: Buffer.from(pub.PublicKey!), format: "der", type: "spki" })
      .export({ format: "pem", type: "spki" })
      .toString()
    writeFileSync(join(work, "kms.pub"), publicKeyPem)
    kms.destroy()
  }, 120_000)

  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    await aws?.stop()
    await stopGate()
    startGate()
  })

  it("signs the evidence; cosign verify-blob verifies it against the KMS public key, and refuses a tampered binding", async () => {
    await installLauncher()
    await installGpuOperator()
    await stopGate()
    startGate(["--signing-key", `awskms:///${ALIAS}`], evidenceProcess.entry)
    const plan = await writePlan("signed", ["operator-health", "gpu-operator-version"])
    const name = `val-${suffix}-signed`
    await createRollout(name, plan, { stepsDone: true })
    await waitCondition(name, "Validated", "True", ["ValidationPassed"], 115_000)
    // The bundle resolved, the binding signed and the evidence pushed: at least three child processes, none of them the gate.
    const pids = evidenceProcess.pids()
    expect(pids.length).toBeGreaterThanOrEqual(3)
    expect(new Set(pids).size).toBe(pids.length)
    expect(pids).not.toContain(process.pid)
    const room = (await get(info, `${ROLLOUTS}/${name}`)).status.validation
    const dir = join(work, "signed")
    await run(orasBinary(), ["pull", "--plain-http", "-o", dir, room.evidenceRef])
    const cosign = toolBinary("cosign")
    const verifyBlob = (blob: string) =>
      run(cosign, ["verify-blob", "--key", join(work, "kms.pub"), "--signature", join(dir, "binding.json.sig"), "--insecure-ignore-tlog=true", blob], {
        env: { PATH: process.env.PATH, HOME: work },
      })
    const ok = await verifyBlob(join(dir, "binding.json"))
    expect(`${ok.stdout}${ok.stderr}`).toContain("Verified OK")
    const tampered = join(work, "binding-tampered.json")
    writeFileSync(tampered, readFileSync(join(dir, "binding.json"), "utf8").replace('"approvedBy":"bob"', '"approvedBy":"mallory"'))
    await expect(verifyBlob(tampered)).rejects.toMatchObject({ code: 1 })
  })

  it("with a key configured, evidence without a valid signature fails the rollout", async () => {
    await stopGate()
    startGate(["--signing-key", `awskms:///alias/no-such-key-${suffix}`], evidenceProcess.entry)
    const plan = await writePlan("unsigned", ["operator-health", "gpu-operator-version"])
    const name = `val-${suffix}-unsigned`
    await createRollout(name, plan, { stepsDone: true })
    const validated = await waitCondition(name, "Validated", "False", ["EvidenceUnsigned", "ValidationFailed", "ValidationIncomplete"], 115_000)
    expect(validated.reason).toBe("EvidenceUnsigned")
    expect(validated.message).toContain(`A signing key (awskms:///alias/no-such-key-${suffix}) is configured but evidence`)
    expect(validated.message).toMatch(/NotFoundException/u)
  })
})
