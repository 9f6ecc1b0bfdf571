// reconcile() against FakeKube, a fake evidence registry and a fake signer: every write of every path, the Jobs as
// objects (their completion is played here, as the Job controller and the process kubelet would report it; the int
// test runs them for real), the evidence as bytes.
import {
  type ClusterRuntime,
  ClusterRuntimeKind,
  Core,
  desiredStateDigest,
  encodePlan,
  type KubeObject,
  type Plan,
  planConfigMapName,
  type RuntimeRollout,
  RuntimeRolloutKind,
  sha256,
} from "@aicr/api"
import { eventRecorderLayer } from "@aicr/kube"
import { makeFakeKube } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { EvidenceRegistry, type EvidenceRegistryShape, Signer, type SignerShape } from "../src/act"
import { GateConfig, type GateSettings } from "../src/config"
import { EvidenceError } from "../src/errors"
import type { EvidencePush } from "../src/evidence"
import { Authorizer, type ResourceAttributes } from "../src/installation"
import { reconcile } from "../src/reconcile"

const NS = "aicr-system"
const VNS = "aicr-validation"
const UID = "0b5c7a52-3f0e-4a8e-9d0a-3c8e5b1f2a90"
const T0 = Date.parse("2026-12-03T07:00:00Z")
const settings: GateSettings = {
  registry: "oci://registry.example/aicr/cluster",
  prefix: { registry: "registry.example", prefix: "aicr/cluster" },
  plainHttp: [],
  dockerConfig: undefined,
  namespace: NS,
  validationNamespace: VNS,
  launcher: "aicr-validation",
  deadlineSeconds: 1500,
  signingKey: undefined,
}
const RECIPE = JSON.stringify({ kind: "RecipeResult", validation: { deployment: { checks: ["operator-health"] } } })
const BUNDLE = "registry.example/aicr/cluster/bundles/cluster:input-1"
const engine = { kind: "argocd" as const, project: "aicr" }
const releases = [
  {
    name: "gpu-operator",
    namespace: "gpu-operator",
    order: 0,
    dependsOn: [],
    chart: { ref: "registry.example/aicr/cluster/charts/gpu-operator:v25.10.1", digest: sha256("c") },
    values: { digest: sha256("v") },
  },
]
const DIGEST = desiredStateDigest({ engine, releases })
const plan: Plan = {
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "Plan",
  runtimeUID: UID,
  createdAt: "2026-12-03T06:00:00Z",
  source: "Resolution",
  desiredStateDigest: DIGEST,
  inputDigest: sha256("in"),
  aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" },
  flags: [],
  bundle: { ref: BUNDLE },
  engine,
  releases,
  content: [{ key: "recipe.json", configMap: "aicr-content-1", digest: sha256(RECIPE) }],
}
const cond = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: `${type} ${reason}`,
  observedGeneration: 1,
  lastTransitionTime: "2026-12-03T06:59:00Z",
})
const ctrf = (tests: unknown[]) =>
  JSON.stringify({
    reportFormat: "CTRF",
    specVersion: "0.0.1",
    results: { tool: { name: "aicr", version: "0.11.1" }, summary: { tests: tests.length, passed: 0, failed: 0, skipped: 0, other: 0 }, tests },
  })
const PASSED = ctrf([{ name: "operator-health", status: "passed", duration: 412, stdout: ["gpu-operator-7c9d: Running"] }])
const FAILED = ctrf([{ name: "operator-health", status: "failed", duration: 118, message: "[NOT_FOUND] no gpu-operator pods found", stdout: ["listing pods"] }])

/** The API server's authorizer as the harness's install leaves it: the launcher is bound to cluster-admin. */
const launcherIsAdmin = (sa: string) => sa === `${VNS}/aicr-validation`

const setup = (
  o: {
    mode?: "Required" | "Disabled"
    launcher?: boolean
    validator?: boolean
    allow?: (sa: string, a: ResourceAttributes) => boolean
    stepsDone?: boolean
    kind?: "Install" | "Remove" | "Adopt"
    /** The target plan (default: a plan composed from a resolution). */
    target?: Plan
    signer?: SignerShape
    signingKey?: string
    registryFails?: EvidenceError
  } = {},
) => {
  const fake = makeFakeKube({ listMapKeys: { "RuntimeRollout.operator.aicr.run": { "status.conditions": "type" } } })
  const [seeded] = fake.seed(ClusterRuntimeKind, {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster", generation: 1 },
    spec: { intent: "training", validation: { deployment: o.mode ?? "Required" } },
    status: { discovery: { accelerated: { nodeCount: 1, nodes: ["kwok-gpu-0"] } } },
  } as unknown as ClusterRuntime)
  const uid = seeded!.metadata.uid!
  fake.seed(RuntimeRolloutKind, {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "RuntimeRollout",
    metadata: { name: "cluster-aaaaaaaaaaaa-1", uid: "r-1", generation: 1 },
    spec: {
      runtimeUID: uid,
      toDigest: DIGEST,
      kind: o.kind ?? "Install",
      ...(o.kind === "Remove" || o.kind === "Adopt" ? { fromDigest: DIGEST } : {}),
      deadline: "2026-12-04T00:00:00Z",
      requiresApproval: true,
      approval: {
        approvedBy: "bob",
        groups: ["aicr-approvers"],
        reason: "first install",
        approvedAt: "2026-12-03T06:50:00Z",
        expiresAt: "2026-12-03T12:00:00Z",
        toDigest: DIGEST,
      },
    },
    status: {
      conditions: [
        cond("Approved", "True", "ApprovedByUser"),
        ...(o.stepsDone ? [cond("Progressing", "True", "StepsCompleted")] : [cond("Progressing", "True", "StepInProgress")]),
      ],
    },
  } as unknown as RuntimeRollout)
  if (o.launcher !== false)
    fake.seed(Core.ServiceAccount, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "aicr-validation", namespace: VNS } } as KubeObject)
  if (o.validator === true)
    fake.seed(Core.ServiceAccount, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "aicr-validator", namespace: VNS } } as KubeObject)
  const reviews: Array<{ sa: string; attributes: ResourceAttributes }> = []
  const allow = o.allow ?? launcherIsAdmin
  const authorizer = { allowed: (sa: string, attributes: ResourceAttributes) => Effect.sync(() => (reviews.push({ sa, attributes }), allow(sa, attributes))) }
  fake.seed(Core.ConfigMap, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: planConfigMapName(DIGEST), namespace: NS },
    data: { "plan.json": encodePlan(o.target ?? plan) },
  } as KubeObject)
  fake.seed(Core.ConfigMap, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "aicr-content-1", namespace: NS },
    data: { "recipe.json": RECIPE },
  } as KubeObject)
  const pushes: EvidencePush[] = []
  const registry: EvidenceRegistryShape = {
    resolve: () => Effect.succeed(sha256("bundle manifest")),
    push: (p) => (o.registryFails ? Effect.fail(o.registryFails) : Effect.sync(() => (pushes.push(p), `${p.repository}@${sha256("evidence")}`))),
  }
  const events = eventRecorderLayer({ controller: "operator.aicr.run/validation-gate", instance: "test" }).pipe(Layer.provide(fake.layer))
  const run = reconcile("cluster-aaaaaaaaaaaa-1").pipe(
    Effect.provide(Layer.mergeAll(fake.layer, events)),
    Effect.provideService(GateConfig, { ...settings, signingKey: o.signingKey }),
    Effect.provideService(EvidenceRegistry, registry),
    Effect.provideService(Signer, o.signer),
    Effect.provideService(Authorizer, authorizer),
    Effect.exit,
  )
  const rollout = () => fake.peek<RuntimeRollout>(RuntimeRolloutKind, "cluster-aaaaaaaaaaaa-1")!
  const condition = (type: string) => rollout().status?.conditions?.find((c) => c.type === type)
  const statusWrites = () => fake.writesTo(RuntimeRolloutKind, "cluster-aaaaaaaaaaaa-1").filter((w) => w.subresource === "status")
  const jobs = () =>
    fake
      .writesTo(Core.Job)
      .filter((w) => w.verb === "create")
      .map((w) => w.key)
  /** The Job controller and the process kubelet: the Job completes (or fails) and AICR's writer filled its output ConfigMap. */
  const finish = (key: string, result: { output?: string; failed?: "DeadlineExceeded" | "BackoffLimitExceeded" }) => {
    const job = fake.peek<KubeObject & { status?: unknown }>(Core.Job, key)!
    const done = result.failed
      ? { failed: 1, conditions: [{ type: "Failed", status: "True", reason: result.failed }] }
      : { succeeded: 1, startTime: "2026-12-03T07:00:05Z", completionTime: "2026-12-03T07:00:45Z", conditions: [{ type: "Complete", status: "True" }] }
    fake.seed(Core.Job, { ...job, status: done })
    if (result.output !== undefined)
      fake.seed(Core.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: key.split("/")[1]!, namespace: VNS },
        data: { "snapshot.json": result.output },
      } as KubeObject)
  }
  return { reviews, fake, run, rollout, condition, statusWrites, jobs, finish, pushes }
}
const at = <A, E, R>(body: Effect.Effect<A, E, R>) => TestClock.setTime(T0).pipe(Effect.andThen(body))

/** Runs the gate through the snapshot and the validate Job, each completing with the given outputs. */
const throughTheRun = (t: ReturnType<typeof setup>, report: { output?: string; failed?: "DeadlineExceeded" }) =>
  Effect.gen(function* () {
    yield* t.run
    const [snap] = t.jobs()
    expect(snap).toMatch(new RegExp(`^${VNS}/aicr-snapshot-[0-9a-f]{12}$`, "u"))
    expect(t.condition("Validated")).toMatchObject({
      status: "False",
      reason: "Validating",
      message: expect.stringContaining(`Snapshot Job ${snap} on node kwok-gpu-0`),
    })
    t.finish(snap!, { output: "kind: Snapshot\nmeasurements: []\n" })
    yield* t.run
    const validate = t.jobs()[1]!
    expect(validate).toMatch(new RegExp(`^${VNS}/aicr-validate-[0-9a-f]{12}$`, "u"))
    const input = t.fake.peek<KubeObject & { data: Record<string, string> }>(Core.ConfigMap, `${validate}-input`)!
    expect(input.data).toEqual({ "recipe.json": RECIPE, "snapshot.yaml": "kind: Snapshot\nmeasurements: []\n" })
    expect(t.condition("Validated")).toMatchObject({
      status: "False",
      reason: "Validating",
      message: expect.stringContaining(`Deployment validation run ${validate.split("/")[1]}`),
    })
    t.finish(validate, report)
    const exit = yield* t.run
    return { exit, validate: validate.split("/")[1]! }
  })

describe("validation-gate reconcile", () => {
  it.effect("Required without the launcher: ValidationUnavailable on both conditions, one Warning, and a second pass writes nothing", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ launcher: false })
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.condition("ValidationReady")).toMatchObject({
          status: "False",
          reason: "ValidationUnavailable",
          message: expect.stringContaining("validation.enabled: true, or set spec.validation.deployment: Disabled"),
        })
        expect(t.condition("Validated")).toMatchObject({ status: "False", reason: "ValidationUnavailable" })
        expect(t.fake.writes.filter((w) => w.kind === "Event").map((w) => (w.body as { reason: string }).reason)).toEqual(["ValidationUnavailable"])
        const version = t.rollout().metadata.resourceVersion
        yield* t.run
        expect(t.rollout().metadata.resourceVersion).toBe(version)
        expect(t.fake.writes.filter((w) => w.kind === "Event")).toHaveLength(1)
        expect(t.jobs()).toEqual([])
      }),
    ),
  )

  it.effect(
    "Required with the launcher but without its rights: ValidationUnavailable names each missing right; a bound aicr-validator and a launcher that may run Jobs make it ready",
    () =>
      at(
        Effect.gen(function* () {
          const none = setup({ allow: () => false })
          yield* none.run
          const message = none.condition("ValidationReady")?.message ?? ""
          expect(none.condition("ValidationReady")).toMatchObject({ status: "False", reason: "ValidationUnavailable" })
          expect(message).toContain(`ServiceAccount ${VNS}/aicr-validation may not create Jobs in namespace ${VNS}`)
          expect(message).toContain(
            `ServiceAccount ${VNS}/aicr-validator is not bound (AICR ≥ 1.1), and ${VNS}/aicr-validation may not bind cluster-admin per run (AICR < 1.1)`,
          )
          expect(message).toContain("validation.enabled: true, or set spec.validation.deployment: Disabled")
          // The chart's layout for AICR ≥ 1.1: the launcher has namespaced rights, aicr-validator is bound cluster-wide.
          const chart = setup({
            validator: true,
            allow: (sa, a) =>
              (sa === `${VNS}/aicr-validation` && a.namespace === VNS && a.resource === "jobs") ||
              (sa === `${VNS}/aicr-validator` && a.namespace === undefined),
          })
          yield* chart.run
          expect(chart.condition("ValidationReady")).toMatchObject({ status: "True", reason: "ValidationAvailable" })
          expect(chart.reviews.map((r) => `${r.sa} ${r.attributes.verb} ${r.attributes.resource}`)).toEqual([
            `${VNS}/aicr-validation create jobs`,
            `${VNS}/aicr-validator list pods`,
          ])
          // The validator's ServiceAccount missing counts as unbound whatever the authorizer says of its name.
          const noValidator = setup({ allow: (sa, a) => sa === `${VNS}/aicr-validator` || a.resource === "jobs" })
          yield* noValidator.run
          expect(noValidator.condition("ValidationReady")).toMatchObject({
            status: "False",
            reason: "ValidationUnavailable",
            message: expect.stringContaining("validators have no cluster-wide rights"),
          })
        }),
      ),
  )

  it.effect("Disabled: ready and validated with ValidationDisabled; a Remove rollout gets no write at all", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ mode: "Disabled", launcher: false, stepsDone: true })
        yield* t.run
        expect(t.condition("ValidationReady")).toMatchObject({
          status: "True",
          reason: "ValidationDisabled",
          message: expect.stringContaining("validation is off"),
        })
        expect(t.condition("Validated")).toMatchObject({ status: "True", reason: "ValidationDisabled" })
        expect(t.jobs()).toEqual([])
        const r = setup({ kind: "Remove", launcher: false, stepsDone: true })
        yield* r.run
        expect(r.statusWrites()).toEqual([])
      }),
    ),
  )

  it.effect("waits for the steps before running anything", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        expect(t.condition("ValidationReady")).toMatchObject({ status: "True", reason: "ValidationAvailable" })
        expect(t.condition("Validated")).toMatchObject({ status: "False", reason: "AwaitingSteps" })
        expect(t.jobs()).toEqual([])
      }),
    ),
  )

  it.effect("after the last step: snapshot, aicr validate, a passing report → Validated=True, the room, and evidence bound to plan and approval", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ stepsDone: true })
        const { exit, validate } = yield* throughTheRun(t, { output: PASSED })
        expect(exit).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.condition("Validated")).toMatchObject({
          status: "True",
          reason: "ValidationPassed",
          message: expect.stringMatching(
            new RegExp(
              `^Deployment validation passed operator-health \\(run ${validate}; evidence registry\\.example/aicr/cluster/evidence/cluster@sha256:`,
              "u",
            ),
          ),
        })
        expect(t.rollout().status?.validation).toEqual({
          runID: validate,
          result: "Passed",
          startedAt: "2026-12-03T07:00:05Z",
          completedAt: "2026-12-03T07:00:45Z",
          checks: { passed: 1, failed: 0, skipped: 0, other: 0 },
          evidenceRef: `registry.example/aicr/cluster/evidence/cluster@${sha256("evidence")}`,
        })
        expect(t.pushes).toHaveLength(1)
        const push = t.pushes[0]!
        expect(push).toMatchObject({
          repository: "registry.example/aicr/cluster/evidence/cluster",
          // The rollout's name and its uid's first 8 characters: a name recurs once rollouts were lost (re-adoption).
          tag: `cluster-aaaaaaaaaaaa-1-${t.rollout().metadata.uid!.slice(0, 8)}`,
          subject: `registry.example/aicr/cluster/bundles/cluster@${sha256("bundle manifest")}`,
        })
        expect(push.files.map((f) => f.name)).toEqual(["binding.json", "ctrf.json"])
        expect(Buffer.from(push.files[1]!.bytes).toString("utf8")).toBe(PASSED)
        const binding = JSON.parse(Buffer.from(push.files[0]!.bytes).toString("utf8"))
        expect(binding).toMatchObject({
          plan: { desiredStateDigest: DIGEST, inputDigest: sha256("in") },
          bundle: { ref: BUNDLE, digest: sha256("bundle manifest") },
          approval: {
            approvedBy: "bob",
            groups: ["aicr-approvers"],
            reason: "first install",
            approvedAt: "2026-12-03T06:50:00Z",
            expiresAt: "2026-12-03T12:00:00Z",
          },
          aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1", reportedVersion: "0.11.1" },
          validators: ["ghcr.io/nvidia/aicr-validators/deployment:v0.11.1"],
          run: { id: validate, result: "Passed", reason: "ValidationPassed" },
          report: { digest: sha256(PASSED), size: PASSED.length },
        })
        // A verdict is kept: a later pass runs nothing again and pushes nothing.
        yield* t.run
        expect(t.jobs()).toHaveLength(2)
        expect(t.pushes).toHaveLength(1)
      }),
    ),
  )

  it.effect(
    "an Adopt rollout of a plan rebuilt from live Applications that records its resolution's AICR and recipe: validated like any other, the evidence bound to that plan and its approver",
    () =>
      at(
        Effect.gen(function* () {
          const t = setup({ stepsDone: true, kind: "Adopt", target: { ...plan, source: "Adoption", createdAt: "2026-12-03T06:55:00Z" } })
          const { validate } = yield* throughTheRun(t, { output: PASSED })
          expect(t.condition("Validated")).toMatchObject({ status: "True", reason: "ValidationPassed" })
          const binding = JSON.parse(Buffer.from(t.pushes[0]!.files[0]!.bytes).toString("utf8"))
          expect(binding).toMatchObject({
            plan: { desiredStateDigest: DIGEST, inputDigest: sha256("in") },
            approval: { approvedBy: "bob", reason: "first install" },
            aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" },
            run: { id: validate, result: "Passed" },
          })
        }),
      ),
  )

  it.effect("a plan rebuilt from live Applications that records no AICR or no recipe: ValidationIncomplete saying why, no Job, no evidence", () =>
    at(
      Effect.gen(function* () {
        const { aicr: _, ...bare } = plan
        const t = setup({ stepsDone: true, kind: "Adopt", target: { ...bare, source: "Adoption", content: [] } })
        yield* t.run
        expect(t.condition("Validated")).toMatchObject({
          status: "False",
          reason: "ValidationIncomplete",
          message: `Deployment validation cannot run: the target plan ${DIGEST.slice(7, 19)} records no AICR image to validate with, as it was rebuilt from live Applications without a resolution that renders them (the planner adopts with validation Required only once one does)`,
        })
        const r = setup({ stepsDone: true, kind: "Adopt", target: { ...plan, source: "Adoption", content: [] } })
        yield* r.run
        expect(r.condition("Validated")?.message).toBe(
          `Deployment validation cannot run: the target plan ${DIGEST.slice(7, 19)} records no recipe to validate against, as it was rebuilt from live Applications without a resolution that renders them (the planner adopts with validation Required only once one does)`,
        )
        expect([...t.jobs(), ...r.jobs()]).toEqual([])
        expect([...t.pushes, ...r.pushes]).toEqual([])
      }),
    ),
  )

  it.effect("a failing report → ValidationFailed with the validator's own message, and evidence of the failure", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ stepsDone: true })
        yield* throughTheRun(t, { output: FAILED })
        expect(t.condition("Validated")).toMatchObject({
          status: "False",
          reason: "ValidationFailed",
          message: expect.stringContaining("operator-health: [NOT_FOUND] no gpu-operator pods found"),
        })
        expect(t.rollout().status?.validation).toMatchObject({ result: "Failed", checks: { failed: 1 } })
        expect(t.pushes).toHaveLength(1)
      }),
    ),
  )

  it.effect("a validate Job past its deadline wrote no report → ValidationIncomplete, no evidence", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ stepsDone: true })
        yield* throughTheRun(t, { failed: "DeadlineExceeded" })
        expect(t.condition("Validated")).toMatchObject({
          status: "False",
          reason: "ValidationIncomplete",
          message: expect.stringContaining("wrote no report: aicr validate ran past its deadline"),
        })
        expect(t.pushes).toEqual([])
      }),
    ),
  )

  it.effect("an unavailable registry: Validating, retrying after a transient failure (the driver's backoff)", () =>
    at(
      Effect.gen(function* () {
        const t = setup({
          stepsDone: true,
          registryFails: new EvidenceError({ transient: true, reason: "RegistryUnavailable", message: "registry.example is unavailable (HTTP 503)" }),
        })
        const { exit } = yield* throughTheRun(t, { output: PASSED })
        expect(Exit.isFailure(exit)).toBe(true)
        expect(t.condition("Validated")).toMatchObject({
          status: "False",
          reason: "Validating",
          message: expect.stringContaining("retrying after a transient failure: registry.example is unavailable (HTTP 503)"),
        })
      }),
    ),
  )

  it.effect("with a signing key: the signature is a third file; a refused signature leaves the evidence unsigned and fails EvidenceUnsigned", () =>
    at(
      Effect.gen(function* () {
        const signed: Uint8Array[] = []
        const t = setup({
          stepsDone: true,
          signingKey: "awskms:///alias/aicr-evidence",
          signer: { sign: (p) => Effect.sync(() => (signed.push(p), "MEUCIQ==")) },
        })
        yield* throughTheRun(t, { output: PASSED })
        expect(t.condition("Validated")).toMatchObject({ status: "True", reason: "ValidationPassed" })
        expect(t.pushes[0]!.files.map((f) => f.name)).toEqual(["binding.json", "ctrf.json", "binding.json.sig"])
        expect(Buffer.from(signed[0]!)).toEqual(Buffer.from(t.pushes[0]!.files[0]!.bytes))
        const u = setup({
          stepsDone: true,
          signingKey: "awskms:///alias/gone",
          signer: {
            sign: () =>
              Effect.fail(new EvidenceError({ transient: false, reason: "SigningFailed", message: "NotFoundException: Alias alias/gone is not found." })),
          },
        })
        yield* throughTheRun(u, { output: PASSED })
        expect(u.condition("Validated")).toMatchObject({
          status: "False",
          reason: "EvidenceUnsigned",
          message: expect.stringContaining("carries no valid signature: NotFoundException: Alias alias/gone is not found"),
        })
        expect(u.pushes[0]!.files.map((f) => f.name)).toEqual(["binding.json", "ctrf.json"])
      }),
    ),
  )
})
