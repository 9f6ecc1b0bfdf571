// reconcile() against FakeKube: the writes the planner makes on a first visit, after the window, on an idle pass
// (none), and when a rollout ends — every condition of its room set, every write confined to its room; the cleanup
// finalizer, and a deletion from Deleting through the Remove rollout to the runtime gone. Then the
// AICR 1.x upgrade-check flow and a pin whose charts are gone. FakeKube runs no Job and no 1.x AICR is built here, so
// those tests play the Job controller and kubelet with fixture reports shaped after the documented upgrade-check JSON
// (fixture-based), and a fake ChartRegistry stands in for the registry (the int test uses the real one).
import { DEFAULT_JOB_SETTINGS } from "@aicr/aicr"
import {
  ArgoCD,
  ClusterRuntimeKind,
  Core,
  type ClusterRuntime,
  FINALIZER_CLEANUP,
  type KubeObject,
  LABEL_OUTCOME,
  type ResourceKind,
  type RuntimeRollout,
  RuntimeRolloutKind,
  sha256,
} from "@aicr/api"
import { eventRecorderLayer } from "@aicr/kube"
import { makeStatusPacer, Requeue, StatusPacer } from "@aicr/runtime"
import { makeFakeKube, writesDuring, writesOutsideContract } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { afterEach, describe, expect } from "vitest"
import { addFinalizer } from "../src/act"
import { type ChartCheck, ChartRegistry, type ChartRef } from "../src/charts"
import { PlannerConfig, type PlannerSettings } from "../src/config"
import { contract } from "../src/contract"
import { classOf } from "../src/errors"
import { makeNotReadySince, NotReadySince } from "../src/readiness"
import { reconcile } from "../src/reconcile"
import { finalizerPatch } from "../src/teardown"

const NS = "aicr-system"
const T0 = Date.parse("2026-12-02T10:00:00Z")
const UID = "6a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
const INPUT = sha256("input")
const settings: PlannerSettings = {
  namespace: NS,
  windowMs: 60_000,
  deadlineMs: 86_400_000,
  project: "aicr",
  engineNamespace: "argocd",
  jobs: { ...DEFAULT_JOB_SETTINGS, namespace: "aicr-jobs" },
  plainHttp: [],
  dockerConfig: undefined,
  notReadyGraceMs: 30_000,
}

const comps = [
  { name: "cert-manager", namespace: "cert-manager", chart: "cert-manager", version: "v1.17.2", source: "https://charts.jetstack.io" },
  {
    name: "gpu-operator",
    namespace: "gpu-operator",
    chart: "gpu-operator",
    version: "v25.10.1",
    source: "https://helm.ngc.nvidia.com/nvidia",
    dependencyRefs: ["cert-manager"],
  },
]
const cond = (type: string, reason: string) => ({
  type,
  status: "True" as const,
  reason,
  message: "",
  observedGeneration: 1,
  lastTransitionTime: "2026-12-02T09:00:00Z",
})
const aRuntime = (aicr = "v0.11.1"): ClusterRuntime => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "ClusterRuntime",
  metadata: { name: "cluster", uid: UID, generation: 1, annotations: { "operator.aicr.run/edited-by": "alice" } },
  spec: { intent: "training", validation: { deployment: "Disabled" } },
  status: {
    conditions: [cond("Resolved", "InputsResolved"), cond("Mirrored", "ContentMirrored")],
    resolution: { inputDigest: INPUT, contentConfigMap: "aicr-content-1", aicr: { version: aicr, image: `ghcr.io/nvidia/aicr:${aicr}` } },
    mirror: {
      inputDigest: INPUT,
      bundle: `r/aicr/cluster/bundles/cluster:input-1@${sha256("b")}`,
      charts: comps.map((c) => ({ release: c.name, ref: `r/aicr/cluster/charts/${c.chart}:${c.version}@${sha256(c.name)}` })),
    },
  },
})
const content = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "aicr-content-1", namespace: NS, labels: { "operator.aicr.run/role": "content" } },
  data: {
    "recipe.json": JSON.stringify({ componentRefs: comps, deploymentOrder: comps.map((c) => c.name) }),
    "values.json": JSON.stringify({
      kind: "Bundle",
      deployer: "helm",
      files: Object.fromEntries(comps.map((c) => [`${c.name}/values.yaml`, `# ${c.name}\n`])),
    }),
  },
}

/** The registry as the chart check sees it: refs it lacks, or down. */
const fakeRegistry = () => {
  const state = { missing: new Set<string>(), down: false, checked: [] as string[] }
  const registry = {
    check: (charts: ReadonlyArray<ChartRef>) =>
      Effect.sync((): ChartCheck => {
        state.checked.push(...charts.map((c) => c.ref))
        if (state.down) return { _tag: "Unavailable", message: "127.0.0.1:5000: connect ECONNREFUSED" }
        const missing = charts.filter((c) => state.missing.has(c.ref))
        return missing.length === 0 ? { _tag: "Present", checked: charts.length } : { _tag: "Missing", missing, checked: charts.length }
      }),
  }
  return { state, registry }
}

/** The planner's own writes in each test (not the test's), checked against its contract after the test. */
const passes: Array<ReturnType<typeof writesDuring>> = []
afterEach(() => {
  for (const p of passes.splice(0)) expect(writesOutsideContract(contract, p.writes())).toEqual([])
})

const setup = (aicr = "v0.11.1") => {
  const fake = makeFakeKube({
    listMapKeys: {
      "ClusterRuntime.operator.aicr.run": { "status.conditions": "type", "status.mirror.charts": "release" },
      "RuntimeRollout.operator.aicr.run": { "status.conditions": "type" },
    },
  })
  fake.seed(ClusterRuntimeKind, aRuntime(aicr))
  fake.seed(Core.ConfigMap, content as never)
  const events = eventRecorderLayer({ controller: "operator.aicr.run/planner", instance: "test" }).pipe(Layer.provide(fake.layer))
  const registry = fakeRegistry()
  const notReadySince = makeNotReadySince()
  const pacer = makeStatusPacer()
  const mine = writesDuring(fake)
  passes.push(mine)
  const run = mine
    .during(reconcile("cluster"))
    .pipe(
      Effect.provide(Layer.mergeAll(fake.layer, events)),
      Effect.provideService(PlannerConfig, settings),
      Effect.provideService(ChartRegistry, registry.registry),
      Effect.provideService(NotReadySince, notReadySince),
      Effect.provideService(StatusPacer, pacer),
      Effect.exit,
    )
  const runtime = () => fake.peek<ClusterRuntime>(ClusterRuntimeKind, "cluster")!
  const condition = (type: string) => runtime().status?.conditions?.find((c) => c.type === type)
  const list = <T extends KubeObject>(kind: ResourceKind) => Effect.runSync(fake.kube.list<T>(kind)).items
  const rollouts = () => list<RuntimeRollout>(RuntimeRolloutKind)
  /** Closes the open rollout Succeeded, as the step-executor's report would let the planner do. */
  const complete = Effect.fnUntraced(function* (ms: number) {
    const r = rollouts().find((x) => !x.metadata.labels?.[LABEL_OUTCOME])!
    fake.seed(RuntimeRolloutKind, {
      ...r,
      status: { conditions: [{ ...cond("Progressing", "StepsCompleted"), observedGeneration: r.metadata.generation }] },
    } as never)
    yield* at(ms, run)
    return r
  })
  return { fake, run, runtime, condition, rollouts, registry: registry.state, complete, list }
}

/** As the approver and then the step executor would: approved (a new generation), and every step done at it. */
const approveAndComplete = (fake: ReturnType<typeof setup>["fake"], r: RuntimeRollout) => {
  const approval = { approvedBy: "bob", reason: "ok", approvedAt: "2026-12-02T10:01:00Z", expiresAt: "2026-12-02T12:00:00Z", toDigest: r.spec.toDigest }
  const [approved] = fake.seed<RuntimeRollout>(RuntimeRolloutKind, { ...r, spec: { ...r.spec, approval } })
  fake.seed<RuntimeRollout>(RuntimeRolloutKind, {
    ...approved!,
    status: { conditions: [{ ...cond("Progressing", "StepsCompleted"), observedGeneration: approved!.metadata.generation }] },
  })
}

const at = <A, E, R>(ms: number, body: Effect.Effect<A, E, R>) => TestClock.setTime(ms).pipe(Effect.andThen(body))

describe("planner reconcile", () => {
  it.effect("first visit: writes the plan, sets Planned/Ready/Stalled, and requeues at the window's end", () =>
    at(
      T0,
      Effect.gen(function* () {
        const t = setup()
        const exit = yield* t.run
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("After")
        expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "Stabilizing" })
        expect(t.condition("Ready")).toMatchObject({ status: "False", reason: "NoActivePlan" })
        expect(t.condition("Stalled")).toMatchObject({ status: "False", reason: "NotStalled" })
        const plans = Effect.runSync(t.fake.kube.list(Core.ConfigMap, { labelSelector: "operator.aicr.run/role=plan" })).items
        expect(plans).toHaveLength(1)
        expect(t.rollouts()).toHaveLength(0)
        // Every status write is the planner's room, with its field manager.
        const status = t.fake.writes.filter((w) => w.subresource === "status")
        expect(status.length).toBeGreaterThan(0)
        expect(status.every((w) => w.manager === "aicr-planner" && !w.force)).toBe(true)
      }),
    ),
  )

  it.effect(
    "the open rollout's stall on the runtime: Stalled InventoryDrift naming the rollout and step, then AwaitingApproval once Progressing moves on; an engine reason on Ready and Stalled; one write per change",
    () =>
      Effect.gen(function* () {
        const t = setup()
        yield* at(T0, t.run)
        yield* at(T0 + 61_000, t.run)
        const r = t.rollouts()[0]!
        const name = r.metadata.name
        const progressing = {
          type: "Progressing",
          status: "False" as const,
          reason: "InventoryDrift",
          message: "step 1/2 cert-manager (Install): its Application no longer carries the revision written",
          observedGeneration: r.metadata.generation,
          lastTransitionTime: "2026-12-02T10:01:00Z",
        }
        const approved = {
          type: "Approved",
          status: "False" as const,
          reason: "AwaitingApproval",
          message: "no approval yet",
          observedGeneration: r.metadata.generation,
          lastTransitionTime: "2026-12-02T10:01:00Z",
        }
        t.fake.seed(RuntimeRolloutKind, { ...r, status: { conditions: [approved, progressing] } } as never)
        yield* at(T0 + 62_000, t.run)
        expect(t.condition("Stalled")).toMatchObject({
          status: "True",
          reason: "InventoryDrift",
          message: `rollout ${name} step 1/2 cert-manager (Install): its Application no longer carries the revision written`,
        })
        const before = t.fake.writes.length
        yield* at(T0 + 63_000, t.run)
        expect(t.fake.writes.length).toBe(before)
        t.fake.seed(RuntimeRolloutKind, {
          ...t.rollouts()[0]!,
          status: {
            conditions: [approved, { ...progressing, reason: "AwaitingApproval", message: "step 1/2 cert-manager (Install) not started: Approved is False" }],
          },
        } as never)
        yield* at(T0 + 64_000, t.run)
        expect(t.condition("Stalled")).toMatchObject({
          status: "True",
          reason: "AwaitingApproval",
          message: `rollout ${name} awaiting approval (kubectl aicr approve ${name} --reason "…"): no approval yet`,
        })
        const rt = t.runtime()
        const engine = {
          type: "EngineAvailable",
          status: "False" as const,
          reason: "EngineMissing",
          message: "Argo CD's Application CRD is not installed",
          observedGeneration: 1,
          lastTransitionTime: "2026-12-02T10:02:00Z",
        }
        t.fake.seed(ClusterRuntimeKind, { ...rt, status: { ...rt.status, conditions: [...(rt.status?.conditions ?? []), engine] } } as never)
        yield* at(T0 + 65_000, t.run)
        expect(t.condition("Ready")).toMatchObject({ status: "False", reason: "EngineMissing", message: engine.message })
        expect(t.condition("Stalled")).toMatchObject({ status: "True", reason: "EngineMissing", message: engine.message })
      }),
  )

  it.effect("after the window: creates the rollout; an idle pass writes nothing", () =>
    Effect.gen(function* () {
      const t = setup()
      yield* at(T0, t.run)
      yield* at(T0 + 61_000, t.run)
      expect(t.rollouts()).toHaveLength(1)
      expect(t.rollouts()[0]!.spec).toMatchObject({ kind: "Install", requestedBy: "alice", requiresApproval: true })
      expect(t.condition("Planned")).toMatchObject({ status: "True", reason: "PlanComputed" })
      const before = t.fake.writes.length
      yield* at(T0 + 62_000, t.run)
      expect(t.fake.writes.length).toBe(before)
    }),
  )

  it.effect("closes a rollout whose steps completed: outcome label, Succeeded, active plan, Ready True", () =>
    Effect.gen(function* () {
      const t = setup()
      yield* at(T0, t.run)
      yield* at(T0 + 61_000, t.run)
      const r = t.rollouts()[0]!
      t.fake.seed(RuntimeRolloutKind, {
        ...r,
        status: { conditions: [{ ...cond("Progressing", "StepsCompleted"), observedGeneration: r.metadata.generation }] },
      } as never)
      yield* at(T0 + 70_000, t.run)
      const closed = t.rollouts()[0]!
      expect(closed.metadata.labels?.[LABEL_OUTCOME]).toBe("Succeeded")
      expect(closed.status?.conditions?.find((c) => c.type === "Succeeded")).toMatchObject({ status: "True", reason: "RolloutSucceeded" })
      expect(t.runtime().status?.plans?.active).toBe(r.spec.toDigest)
      expect(t.condition("Ready")).toMatchObject({ status: "True", reason: "ValidationDisabled" })
    }),
  )

  it.effect("orphaned Applications: Planned False and Stalled, no rollout, and the runtime is looked at again in 5 s", () =>
    at(
      T0,
      Effect.gen(function* () {
        const t = setup()
        t.fake.seed(ArgoCD.Application, {
          apiVersion: "argoproj.io/v1alpha1",
          kind: "Application",
          metadata: { name: "gpu-operator", namespace: "argocd", labels: { "operator.aicr.run/runtime-uid": "11111111-1111-4111-8111-111111111111" } },
        } as never)
        expect(yield* t.run).toEqual(Exit.succeed(Requeue.after(5_000)))
        expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "OrphanedObjectsPresent" })
        expect(t.condition("Stalled")).toMatchObject({ status: "True", reason: "OrphanedObjectsPresent" })
        expect(t.rollouts()).toHaveLength(0)
        // Application records that do not parse block the adoption once spec.adoption names the old runtime.
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", {
          type: "merge",
          body: { spec: { adoption: { fromRuntimeUID: "11111111-1111-4111-8111-111111111111" } } },
        })
        yield* t.run
        expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "AdoptionBlocked" })
        expect(t.condition("Planned")!.message).toContain("Application argocd/gpu-operator: it has no operator.aicr.run/plan-release annotation")
      }),
    ),
  )
})

describe("planner reconcile: a failed pass (errors.ts)", () => {
  const warnings = (t: ReturnType<typeof setup>) =>
    t.fake
      .writesTo(Core.Event)
      .filter((w) => w.verb === "create")
      .map((w) => w.body as { type: string; reason: string })
      .filter((e) => e.type === "Warning")

  it.effect(
    "a transient failure goes back to the driver and writes nothing; a defect writes Planned=Unknown/InternalError (Ready, Stalled and status.plans kept) and one Warning Event per transition",
    () =>
      Effect.gen(function* () {
        const t = setup()
        t.fake.failNext("Unavailable", { verb: "create", kind: Core.ConfigMap })
        const transient = yield* at(T0, t.run)
        expect(Exit.isFailure(transient) && String(transient.cause)).toContain("Unavailable")
        expect(t.condition("Planned")).toBeUndefined()
        yield* at(T0, t.run)
        expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "Stabilizing" })
        const ready = t.condition("Ready")
        const stalled = t.condition("Stalled")
        const plans = t.runtime().status?.plans
        expect(plans?.target).toBeDefined()
        // The rollout's create refused by the API server (RBAC the chart grants missing): a defect, twice.
        t.fake.failNext("Forbidden", { verb: "create", kind: RuntimeRolloutKind, times: 2 })
        for (let i = 0; i < 2; i++) {
          const exit = yield* at(T0 + 61_000, t.run)
          expect(Exit.isFailure(exit) && String(exit.cause)).toContain("InternalError")
          expect(t.condition("Planned")).toMatchObject({ status: "Unknown", reason: "InternalError", message: "Please check controller logs for errors" })
          expect(t.condition("Ready")).toEqual(ready)
          expect(t.condition("Stalled")).toEqual(stalled)
          expect(t.runtime().status?.plans).toEqual(plans)
          expect(warnings(t)).toEqual([expect.objectContaining({ reason: "InternalError" })])
        }
        expect(t.rollouts()).toHaveLength(0)
        // Recovered: the rollout is created and Planned says so.
        expect(Exit.isSuccess(yield* at(T0 + 62_000, t.run))).toBe(true)
        expect(t.rollouts()).toHaveLength(1)
        expect(t.condition("Planned")).toMatchObject({ status: "True", reason: "PlanComputed" })
      }),
  )

  it.effect("the finalizer patch's test refused (the runtime moved since the pass read it): FinalizerMovedError, transient, nothing reported", () =>
    at(
      T0,
      Effect.gen(function* () {
        const t = setup()
        const stale = t.runtime()
        // Another writer changes the runtime after the pass read it: the patch's resourceVersion test fails (422).
        t.fake.seed(ClusterRuntimeKind, { ...stale, metadata: { ...stale.metadata, labels: { team: "gpu" } } } as never)
        const exit = yield* addFinalizer(stale, finalizerPatch(stale, "Add")!).pipe(Effect.provide(t.fake.layer), Effect.flip)
        expect(exit._tag).toBe("FinalizerMovedError")
        expect(classOf(exit)).toBe("transient")
        expect(t.runtime().metadata.finalizers).toBeUndefined()
        // In a pass: the driver retries, no InternalError is written.
        t.fake.failNext("Invalid", { verb: "patch", kind: ClusterRuntimeKind })
        const failed = yield* t.run
        expect(Exit.isFailure(failed) && String(failed.cause)).toContain("FinalizerMovedError")
        expect(t.condition("Planned")).toBeUndefined()
        expect(warnings(t)).toEqual([])
        yield* t.run
        expect(t.runtime().metadata.finalizers).toEqual([FINALIZER_CLEANUP])
      }),
    ),
  )
})

describe("planner reconcile: the cleanup finalizer and deletion", () => {
  it.effect("adds the finalizer on the first pass with one JSON patch that touches nothing else", () =>
    at(
      T0,
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        expect(t.runtime().metadata.finalizers).toEqual([FINALIZER_CLEANUP])
        const writes = t.fake.writesTo(ClusterRuntimeKind).filter((w) => w.subresource === undefined)
        expect(writes).toHaveLength(1)
        expect(writes[0]).toMatchObject({ verb: "patch", manager: "aicr-planner" })
        expect((writes[0]!.body as Array<{ op: string; path: string }>).map((o) => `${o.op} ${o.path}`)).toEqual([
          "test /metadata/resourceVersion",
          "add /metadata/finalizers",
        ])
        expect(t.runtime().spec).toEqual(aRuntime().spec)
      }),
    ),
  )

  it.effect("a rolled-out runtime: Deleting, a Remove rollout awaiting approval, and once it Succeeded the finalizer goes and so does the runtime", () =>
    Effect.gen(function* () {
      const t = setup()
      yield* at(T0, t.run)
      yield* at(T0 + 61_000, t.run)
      const install = t.rollouts()[0]!
      approveAndComplete(t.fake, install)
      yield* at(T0 + 70_000, t.run)
      expect(t.condition("Ready")).toMatchObject({ status: "True" })

      yield* t.fake.kube.delete(ClusterRuntimeKind, "cluster")
      expect(t.runtime().metadata.deletionTimestamp).toBeDefined()
      yield* at(T0 + 80_000, t.run)
      const removal = t.rollouts().find((r) => r.spec.kind === "Remove")!
      expect(removal.spec).toMatchObject({ fromDigest: install.spec.toDigest, toDigest: install.spec.toDigest, requestedBy: "alice" })
      expect(removal.spec.steps!.map((s) => `${s.action} ${s.release}`)).toEqual(["Remove gpu-operator", "Remove cert-manager"])
      expect(t.condition("Ready")).toMatchObject({
        status: "False",
        reason: "Deleting",
        message: expect.stringContaining(`rollout ${removal.metadata.name} awaiting approval`),
      })
      expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "Deleting" })
      expect(t.fake.peek(Core.ConfigMap, `${NS}/aicr-assessment-${removal.metadata.name}`)).toBeDefined()
      // Waiting for the approver changes nothing.
      const before = t.fake.writes.length
      yield* at(T0 + 81_000, t.run)
      expect(t.fake.writes.length).toBe(before)
      expect(t.runtime()).toBeDefined()

      approveAndComplete(t.fake, removal)
      const exit = yield* at(T0 + 90_000, t.run)
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(t.fake.peek(ClusterRuntimeKind, "cluster")).toBeUndefined()
      expect(t.rollouts().find((r) => r.metadata.name === removal.metadata.name)?.metadata.labels?.[LABEL_OUTCOME]).toBe("Succeeded")
      const finalizerWrite = t.fake
        .writesTo(ClusterRuntimeKind)
        .filter((w) => w.subresource === undefined)
        .at(-1)!
      expect((finalizerWrite.body as Array<{ op: string; path: string }>).map((o) => `${o.op} ${o.path}`)).toEqual([
        "test /metadata/finalizers/0",
        "remove /metadata/finalizers/0",
      ])
      // Plans stay, as the record.
      expect(Effect.runSync(t.fake.kube.list(Core.ConfigMap, { labelSelector: "operator.aicr.run/role=plan" })).items).toHaveLength(1)
      expect(Exit.isSuccess(yield* at(T0 + 91_000, t.run))).toBe(true)
    }),
  )

  it.effect("nothing rolled out: the rollout nobody approved is superseded and the runtime goes at once", () =>
    Effect.gen(function* () {
      const t = setup()
      yield* at(T0, t.run)
      yield* at(T0 + 61_000, t.run)
      const waiting = t.rollouts()[0]!
      yield* t.fake.kube.delete(ClusterRuntimeKind, "cluster")
      yield* at(T0 + 62_000, t.run)
      expect(t.rollouts()).toHaveLength(1)
      expect(t.rollouts()[0]!.metadata.labels?.[LABEL_OUTCOME]).toBe("Superseded")
      expect(t.rollouts()[0]!.metadata.name).toBe(waiting.metadata.name)
      expect(t.fake.peek(ClusterRuntimeKind, "cluster")).toBeUndefined()
    }),
  )
})

const bumped = comps.map((c) => (c.name === "gpu-operator" ? { ...c, version: "v25.10.2" } : c))
const INPUT_2 = sha256("input-2")
/** A second resolution (gpu-operator bumped), published as the resolver and the mirror would. */
const republish = (t: ReturnType<typeof setup>) => {
  t.fake.seed(Core.ConfigMap, {
    ...content,
    metadata: { ...content.metadata, name: "aicr-content-2" },
    data: { ...content.data, "recipe.json": JSON.stringify({ componentRefs: bumped, deploymentOrder: bumped.map((c) => c.name) }) },
  } as never)
  const rt = t.runtime()
  t.fake.seed(ClusterRuntimeKind, {
    ...rt,
    status: {
      ...rt.status,
      resolution: { ...rt.status!.resolution!, inputDigest: INPUT_2, contentConfigMap: "aicr-content-2" },
      mirror: {
        inputDigest: INPUT_2,
        bundle: `r/aicr/cluster/bundles/cluster:input-2@${sha256("b2")}`,
        charts: bumped.map((c) => ({ release: c.name, ref: `r/aicr/cluster/charts/${c.chart}:${c.version}@${sha256(`${c.name}@${c.version}`)}` })),
      },
    },
  } as never)
}

type JobObj = KubeObject & {
  spec: { suspend: boolean; template: { spec: { containers: Array<{ image: string; args: string[] }>; volumes: Array<{ configMap?: { name: string } }> } } }
}
const upgradeChecks = (t: ReturnType<typeof setup>) =>
  t.list<JobObj>(Core.Job).filter((j) => j.metadata.labels?.["operator.aicr.run/aicr-job"] === "upgrade-check")

/** Plays the Job controller and kubelet for the upgrade-check Job: it ends, its pod records the exit, AICR's writer fills the output. */
const endJob = (t: ReturnType<typeof setup>, job: JobObj, exitCode: number, message: string, report?: string) => {
  const { name, namespace } = job.metadata
  t.fake.seed(Core.Job, {
    ...job,
    status:
      exitCode === 0
        ? { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] }
        : { failed: 1, conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }] },
  } as never)
  t.fake.seed(Core.Pod, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `${name}-x`, namespace, labels: { "job-name": name } },
    status: { phase: exitCode === 0 ? "Succeeded" : "Failed", containerStatuses: [{ name: "aicr", state: { terminated: { exitCode, message } } }] },
  } as never)
  if (report !== undefined)
    t.fake.seed(Core.ConfigMap, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace },
      data: { "snapshot.json": report, format: "json" },
    } as never)
}

const fixtureReport = (verdict: string, reason: string) =>
  JSON.stringify({
    from: "/var/run/aicr/upgrade-check/from.json",
    to: "/var/run/aicr/upgrade-check/to.json",
    deployer: "argocd",
    objectNamesCompared: true,
    components: [
      {
        component: "gpu-operator",
        change: "version",
        from: "v25.10.1",
        to: "v25.10.2",
        verdict,
        notes: "1 patch",
        reason,
        jump: "1 patch",
        breaking: false,
        downgrade: false,
        ...(verdict === "manual" ? { steps: [{ id: "cordon", description: "Cordon GPU nodes first" }] } : {}),
        failsRun: verdict !== "safe",
      },
    ],
    summary: { components: 1, failing: verdict === "safe" ? 0 : 1 },
    atRisk: { scanned: false, reason: "no cluster access requested" },
  })

describe("planner reconcile: AICR 1.x upgrade-check as a Job (fixture-based reports; FakeKube runs no Job)", () => {
  /** Install and complete the first plan with AICR v1.3.0, then publish a second resolution and pass its window. */
  const upToAssessment = (t: ReturnType<typeof setup>) =>
    Effect.gen(function* () {
      yield* at(T0, t.run)
      yield* at(T0 + 61_000, t.run)
      expect(upgradeChecks(t)).toHaveLength(0) // a first install has nothing to check against
      yield* t.complete(T0 + 70_000)
      republish(t)
      yield* at(T0 + 80_000, t.run)
      expect(t.condition("Planned")).toMatchObject({ reason: "Stabilizing" })
      yield* at(T0 + 141_000, t.run)
    })

  it.effect("starts the Job with both recipes as its owned input; Planned=False/Assessing while it runs; no rollout yet", () =>
    Effect.gen(function* () {
      const t = setup("v1.3.0")
      yield* upToAssessment(t)
      const [job] = upgradeChecks(t)
      expect(job).toBeDefined()
      expect(job!.metadata.namespace).toBe("aicr-jobs")
      expect(job!.spec.suspend).toBe(false) // created suspended, resumed once its input existed
      expect(t.fake.writesTo(Core.Job).map((w) => w.verb)).toEqual(["create", "patch"])
      const c = job!.spec.template.spec.containers[0]!
      expect(c.image).toBe("ghcr.io/nvidia/aicr:v1.3.0")
      expect(c.args.slice(0, 11)).toEqual([
        "upgrade-check",
        "--from",
        "/var/run/aicr/upgrade-check/from.json",
        "--to",
        "/var/run/aicr/upgrade-check/to.json",
        "--deployer",
        "argocd",
        "--format",
        "json",
        "--fail-on-error=false",
        "--output",
      ])
      const input = t.fake.peek<KubeObject & { data: Record<string, string> }>(Core.ConfigMap, `aicr-jobs/${job!.metadata.name}-input`)!
      expect((input.metadata as { ownerReferences?: unknown }).ownerReferences).toEqual([
        expect.objectContaining({ kind: "Job", name: job!.metadata.name, uid: job!.metadata.uid }),
      ])
      expect(input.data["from.json"]).toBe(content.data["recipe.json"])
      expect(JSON.parse(input.data["to.json"]!).componentRefs[1].version).toBe("v25.10.2")
      expect(t.condition("Planned")).toMatchObject({
        status: "False",
        reason: "Assessing",
        message: expect.stringContaining(`aicr upgrade-check Job aicr-jobs/${job!.metadata.name}`),
      })
      expect(t.condition("Stalled")).toMatchObject({ status: "False" })
      expect(t.rollouts().filter((r) => r.spec.kind === "Upgrade")).toHaveLength(0)
      // A pass while it runs creates nothing new.
      yield* at(T0 + 142_000, t.run)
      expect(t.fake.writesTo(Core.Job).filter((w) => w.verb === "create")).toHaveLength(1)
    }),
  )

  it.effect("the report becomes the assessment (assessment.json) and AICR's verdicts the steps'; the rollout awaits approval", () =>
    Effect.gen(function* () {
      const t = setup("v1.3.0")
      yield* upToAssessment(t)
      endJob(t, upgradeChecks(t)[0]!, 0, "", fixtureReport("manual", "recorded"))
      yield* at(T0 + 150_000, t.run)
      const up = t.rollouts().find((r) => r.spec.kind === "Upgrade")!
      // cert-manager's chart digest moved at the same version: AICR has no row for it, the operator rates it unknown.
      expect(up.spec.steps).toEqual([
        { release: "cert-manager", namespace: "cert-manager", action: "Upgrade", verdict: "unknown", from: "v1.17.2", to: "v1.17.2" },
        { release: "gpu-operator", namespace: "gpu-operator", action: "Upgrade", verdict: "manual", from: "v25.10.1", to: "v25.10.2", acknowledge: true },
      ])
      expect(up.spec.requiresApproval).toBe(true)
      const stored = JSON.parse(
        t.fake.peek<KubeObject & { data: Record<string, string> }>(Core.ConfigMap, `${NS}/aicr-assessment-${up.metadata.name}`)!.data["assessment.json"]!,
      )
      expect(stored).toMatchObject({
        assessedBy: "aicr upgrade-check",
        aicrVersion: "v1.3.0",
        components: [
          { component: "gpu-operator", verdict: "manual", steps: [{ id: "cordon" }] },
          { component: "cert-manager", change: "values", verdict: "unknown", reason: "not-rated" },
        ],
      })
      expect(t.condition("Planned")).toMatchObject({ status: "True", reason: "PlanComputed" })
    }),
  )

  it.effect("blocked by AICR → TransitionBlocked, Stalled, no rollout", () =>
    Effect.gen(function* () {
      const t = setup("v1.3.0")
      yield* upToAssessment(t)
      endJob(t, upgradeChecks(t)[0]!, 0, "", fixtureReport("blocked", "beyond-record-ceiling"))
      yield* at(T0 + 150_000, t.run)
      expect(t.rollouts().filter((r) => r.spec.kind === "Upgrade")).toHaveLength(0)
      expect(t.condition("Planned")).toMatchObject({
        status: "False",
        reason: "TransitionBlocked",
        message: expect.stringContaining("gpu-operator v25.10.1→v25.10.2 (beyond-record-ceiling)"),
      })
      expect(t.condition("Stalled")).toMatchObject({ status: "True", reason: "TransitionBlocked" })
    }),
  )

  it.effect("AICR's failure → its AICR* reason with AICR's words; the Job stays (terminal)", () =>
    Effect.gen(function* () {
      const t = setup("v1.3.0")
      yield* upToAssessment(t)
      const job = upgradeChecks(t)[0]!
      endJob(t, job, 2, '{"level":"ERROR","msg":"command failed","error":"[INVALID_REQUEST] bundle directory has no recipe.yaml","exitCode":2}')
      yield* at(T0 + 150_000, t.run)
      expect(t.condition("Planned")).toMatchObject({
        status: "False",
        reason: "AICRInvalidRequest",
        message: expect.stringContaining("exited 2: [INVALID_REQUEST] bundle directory has no recipe.yaml"),
      })
      expect(t.condition("Stalled")).toMatchObject({ status: "True", reason: "AICRInvalidRequest" })
      expect(t.fake.peek(Core.Job, `aicr-jobs/${job.metadata.name}`)).toBeDefined()
    }),
  )

  it.effect("a Job that failed before AICR ran is deleted for a retry; the reconcile fails so the driver backs off", () =>
    Effect.gen(function* () {
      const t = setup("v1.3.0")
      yield* upToAssessment(t)
      const job = upgradeChecks(t)[0]!
      t.fake.seed(Core.Job, {
        ...job,
        status: { failed: 1, conditions: [{ type: "Failed", status: "True", reason: "PodFailurePolicy", message: "evicted" }] },
      } as never)
      const exit = yield* at(T0 + 150_000, t.run)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "Assessing", message: expect.stringContaining("failed transiently, retrying") })
      expect(t.fake.peek(Core.Job, `aicr-jobs/${job.metadata.name}`)).toBeUndefined()
    }),
  )

  it.effect("the active plan's recipe gone before the Job starts → PlanUnreadable naming the content ConfigMap, no Job", () =>
    Effect.gen(function* () {
      const t = setup("v1.3.0")
      yield* at(T0, t.run)
      yield* at(T0 + 61_000, t.run)
      yield* t.complete(T0 + 70_000)
      republish(t)
      yield* at(T0 + 80_000, t.run)
      yield* t.fake.kube.delete(Core.ConfigMap, `${NS}/aicr-content-1`)
      yield* at(T0 + 141_000, t.run)
      expect(t.fake.writesTo(Core.Job)).toHaveLength(0)
      expect(t.condition("Planned")).toMatchObject({
        status: "False",
        reason: "PlanUnreadable",
        message: expect.stringContaining(`content ConfigMap ${NS}/aicr-content-1 is gone`),
      })
    }),
  )

  it.effect("with AICR v0.11.1 no Job is created and the assessment says this AICR cannot rate the transition", () =>
    Effect.gen(function* () {
      const t = setup("v0.11.1")
      yield* upToAssessment(t)
      expect(t.fake.writesTo(Core.Job)).toHaveLength(0)
      const up = t.rollouts().find((r) => r.spec.kind === "Upgrade")!
      const stored = JSON.parse(
        t.fake.peek<KubeObject & { data: Record<string, string> }>(Core.ConfigMap, `${NS}/aicr-assessment-${up.metadata.name}`)!.data["assessment.json"]!,
      )
      expect(stored.assessedBy).toBe("aicr-operator")
      expect(stored.components[0].explanation).toContain("AICR v0.11.1 has no upgrade-check")
    }),
  )
})

describe("planner reconcile: a pin whose charts are gone from the registry (fake registry)", () => {
  /** Plan 1 installed, plan 2 rolled out after it; then the runtime pins plan 1. */
  const pinFirst = (t: ReturnType<typeof setup>) =>
    Effect.gen(function* () {
      yield* at(T0, t.run)
      yield* at(T0 + 61_000, t.run)
      const first = yield* t.complete(T0 + 70_000)
      republish(t)
      yield* at(T0 + 80_000, t.run)
      yield* at(T0 + 141_000, t.run)
      yield* t.complete(T0 + 150_000)
      const rt = t.runtime()
      t.fake.seed(ClusterRuntimeKind, {
        ...rt,
        metadata: { ...rt.metadata, generation: 2 },
        spec: { ...rt.spec, pin: { desiredStateDigest: first.spec.toDigest } },
      } as never)
      // The pin is a new target: it holds still for the window first.
      yield* at(T0 + 200_000, t.run)
      expect(t.condition("Planned")).toMatchObject({ reason: "Stabilizing" })
      return first.spec.toDigest
    })

  it.effect("a chart missing → Planned=False/PlanUnreadable naming release and ref@digest, Stalled, no Rollback", () =>
    Effect.gen(function* () {
      const t = setup()
      const pinned = yield* pinFirst(t)
      const gone = `r/aicr/cluster/charts/gpu-operator@${sha256("gpu-operator")}`
      t.registry.missing.add(gone)
      const exit = yield* at(T0 + 300_000, t.run)
      expect(t.registry.checked).toContain(gone)
      // Looked at again later: a chart pushed back sends no watch event.
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ _tag: "After" })
      expect(t.rollouts().filter((r) => r.spec.kind === "Rollback")).toHaveLength(0)
      expect(t.condition("Planned")).toMatchObject({
        status: "False",
        reason: "PlanUnreadable",
        message: expect.stringContaining(`release gpu-operator (${gone}) is no longer in the registry`),
      })
      expect(t.condition("Stalled")).toMatchObject({ status: "True", reason: "PlanUnreadable" })
      expect(t.runtime().status?.plans?.target).toBe(pinned)
      // Pushed back: the Rollback is created.
      t.registry.missing.clear()
      yield* at(T0 + 310_000, t.run)
      expect(t.rollouts().filter((r) => r.spec.kind === "Rollback")).toHaveLength(1)
    }),
  )

  it.effect("the registry down → Planned=False/Assessing (retrying), not stalled; the reconcile fails for backoff", () =>
    Effect.gen(function* () {
      const t = setup()
      yield* pinFirst(t)
      t.registry.down = true
      const exit = yield* at(T0 + 300_000, t.run)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(t.condition("Planned")).toMatchObject({
        status: "False",
        reason: "Assessing",
        message: expect.stringContaining("the registry did not answer (retrying)"),
      })
      expect(t.condition("Stalled")).toMatchObject({ status: "False" })
      expect(t.rollouts().filter((r) => r.spec.kind === "Rollback")).toHaveLength(0)
    }),
  )
})

describe("planner reconcile: after the rollout, the stack is still watched (Ready=NotReady)", () => {
  const comp = (name: string) => comps.find((c) => c.name === name)!
  /** The Application the step executor wrote for a release, as Argo CD 3.4 reports it; `status` overrides. */
  const application = (t: ReturnType<typeof setup>, name: string, status: Record<string, unknown> = {}) => {
    const c = comp(name)
    const plan = t.runtime().status!.plans!.active!
    const digest = sha256(c.name)
    const source = { repoURL: `oci://r/aicr/cluster/charts/${c.chart}`, path: ".", targetRevision: digest }
    const destination = { server: "https://kubernetes.default.svc", namespace: c.namespace }
    return {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Application",
      metadata: {
        name,
        namespace: "argocd",
        labels: { "operator.aicr.run/runtime-uid": t.runtime().metadata.uid! },
        annotations: { "operator.aicr.run/desired-state-digest": plan },
      },
      spec: { project: "aicr", source, destination },
      status: {
        sync: { status: "Synced", revision: digest, comparedTo: { source, destination } },
        health: { status: "Healthy" },
        operationState: { phase: "Succeeded", syncResult: { revision: digest } },
        ...status,
      },
    } as never
  }
  const daemonSet = (n: number) => ({
    health: { status: "Progressing" },
    resources: [
      {
        group: "apps",
        kind: "DaemonSet",
        namespace: "gpu-operator",
        name: "nvidia-driver-daemonset",
        status: "Synced",
        health: {
          status: "Progressing",
          message: `Waiting for daemon set "nvidia-driver-daemonset" rollout to finish: ${n} of 4 updated pods are available...`,
        },
      },
    ],
  })
  const events = (t: ReturnType<typeof setup>) =>
    t.fake.writes.filter((w) => w.kind === "Event" && w.verb === "create").map((w) => (w.body as { reason: string }).reason)

  it.effect(
    "a blip within the grace leaves Ready and comes back when it ends; past it NotReady with Argo CD's words and one Warning; a new message alone is paced; recovery clears at once",
    () =>
      Effect.gen(function* () {
        const t = setup()
        yield* at(T0, t.run)
        yield* at(T0 + 61_000, t.run)
        yield* t.complete(T0 + 70_000)
        for (const c of comps) t.fake.seed(ArgoCD.Application, application(t, c.name))
        yield* at(T0 + 71_000, t.run)
        expect(t.condition("Ready")).toMatchObject({ status: "True", reason: "ValidationDisabled" })
        expect(t.condition("Planned")).toMatchObject({ status: "True", reason: "PlanComputed" })

        // A driver pod not ready: within the 30 s grace nothing is written, the pass comes back at its end.
        t.fake.seed(ArgoCD.Application, application(t, "gpu-operator", daemonSet(3)))
        const writes = t.fake.writes.length
        expect(yield* at(T0 + 80_000, t.run)).toEqual(Exit.succeed(Requeue.after(30_050)))
        expect(t.condition("Ready")).toMatchObject({ status: "True", reason: "ValidationDisabled" })
        expect(t.fake.writes.length).toBe(writes)

        expect(yield* at(T0 + 110_050, t.run)).toEqual(Exit.succeed(Requeue.onChange))
        const down = t.condition("Ready")!
        expect(down).toMatchObject({ status: "False", reason: "NotReady" })
        expect(down.message).toContain(
          `release gpu-operator at v25.10.1@sha256:${sha256("gpu-operator").slice(7, 19)}: health Progressing; DaemonSet gpu-operator/nvidia-driver-daemonset Progressing: Waiting for daemon set "nvidia-driver-daemonset" rollout to finish: 3 of 4 updated pods are available`,
        )
        expect(t.condition("Stalled")).toMatchObject({ status: "False" })
        expect(events(t).filter((r) => r === "ReleaseNotReady")).toHaveLength(1)

        // A second pod: only the message changes, so it waits for the pacer's 10 s, then the latest is written.
        t.fake.seed(ArgoCD.Application, application(t, "gpu-operator", daemonSet(2)))
        expect(yield* at(T0 + 112_000, t.run)).toEqual(Exit.succeed(Requeue.after(8_050)))
        expect(t.condition("Ready")!.message).toContain("3 of 4 updated pods")
        yield* at(T0 + 120_050, t.run)
        expect(t.condition("Ready")!.message).toContain("2 of 4 updated pods")
        expect(t.condition("Ready")!.lastTransitionTime).toBe(down.lastTransitionTime)

        // Recovered: cleared at once, one Normal event.
        t.fake.seed(ArgoCD.Application, application(t, "gpu-operator"))
        yield* at(T0 + 121_000, t.run)
        expect(t.condition("Ready")).toMatchObject({ status: "True", reason: "ValidationDisabled" })
        expect(events(t).filter((r) => r === "ReleasesReady")).toHaveLength(1)
        expect(events(t).filter((r) => r === "ReleaseNotReady")).toHaveLength(1)
      }),
  )
})
