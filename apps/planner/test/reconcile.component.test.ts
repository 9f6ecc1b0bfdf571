// reconcile() against FakeKube: the writes the planner makes on a first visit, after the window, on an idle pass
// (none), and when a rollout ends — every condition of its room set, every write confined to its room; the cleanup
// finalizer, and a deletion from Deleting through the Remove rollout to the runtime gone.
import { ArgoCD, ClusterRuntimeKind, Core, type ClusterRuntime, FINALIZER_CLEANUP, type KubeObject, LABEL_OUTCOME, type ResourceKind, type RuntimeRollout, RuntimeRolloutKind, sha256 } from "@aicr/api"
import { eventRecorderLayer } from "@aicr/kube"
import { Requeue } from "@aicr/runtime"
import { makeFakeKube } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { PlannerConfig, type PlannerSettings } from "../src/config"
import { reconcile } from "../src/reconcile"

const NS = "aicr-system"
const T0 = Date.parse("2026-12-02T10:00:00Z")
const UID = "6a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
const INPUT = sha256("input")
const settings: PlannerSettings = { namespace: NS, windowMs: 60_000, deadlineMs: 86_400_000, project: "aicr", engineNamespace: "argocd" }

const comps = [
  { name: "cert-manager", namespace: "cert-manager", chart: "cert-manager", version: "v1.17.2", source: "https://charts.jetstack.io" },
  { name: "gpu-operator", namespace: "gpu-operator", chart: "gpu-operator", version: "v25.10.1", source: "https://helm.ngc.nvidia.com/nvidia", dependencyRefs: ["cert-manager"] },
]
const cond = (type: string, reason: string) => ({ type, status: "True" as const, reason, message: "", observedGeneration: 1, lastTransitionTime: "2026-12-02T09:00:00Z" })
const aRuntime = (): ClusterRuntime => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "ClusterRuntime",
  metadata: { name: "cluster", uid: UID, generation: 1, annotations: { "operator.aicr.run/edited-by": "alice" } },
  spec: { intent: "training", validation: { deployment: "Disabled" } },
  status: {
    conditions: [cond("Resolved", "InputsResolved"), cond("Mirrored", "ContentMirrored")],
    resolution: { inputDigest: INPUT, contentConfigMap: "aicr-content-1", aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" } },
    mirror: { inputDigest: INPUT, bundle: `r/aicr/cluster/bundles/cluster:input-1@${sha256("b")}`, charts: comps.map((c) => ({ release: c.name, ref: `r/aicr/cluster/charts/${c.chart}:${c.version}@${sha256(c.name)}` })) },
  },
})
const content = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "aicr-content-1", namespace: NS, labels: { "operator.aicr.run/role": "content" } },
  data: {
    "recipe.json": JSON.stringify({ componentRefs: comps, deploymentOrder: comps.map((c) => c.name) }),
    "values.json": JSON.stringify({ kind: "Bundle", deployer: "helm", files: Object.fromEntries(comps.map((c) => [`${c.name}/values.yaml`, `# ${c.name}\n`])) }),
  },
}

const setup = () => {
  const fake = makeFakeKube({
    listMapKeys: {
      "ClusterRuntime.operator.aicr.run": { "status.conditions": "type", "status.mirror.charts": "release" },
      "RuntimeRollout.operator.aicr.run": { "status.conditions": "type" },
    },
  })
  fake.seed(ClusterRuntimeKind, aRuntime())
  fake.seed(Core.ConfigMap, content as never)
  const events = eventRecorderLayer({ controller: "operator.aicr.run/planner", instance: "test" }).pipe(Layer.provide(fake.layer))
  const run = reconcile("cluster").pipe(Effect.provide(Layer.mergeAll(fake.layer, events)), Effect.provideService(PlannerConfig, settings), Effect.exit)
  const runtime = () => fake.peek<ClusterRuntime>(ClusterRuntimeKind, "cluster")!
  const condition = (type: string) => runtime().status?.conditions?.find((c) => c.type === type)
  const list = <T extends KubeObject>(kind: ResourceKind) => Effect.runSync(fake.kube.list<T>(kind)).items
  const rollouts = () => list<RuntimeRollout>(RuntimeRolloutKind)
  return { fake, run, runtime, condition, rollouts }
}

/** As the approver and then the step executor would: approved (a new generation), and every step done at it. */
const approveAndComplete = (fake: ReturnType<typeof setup>["fake"], r: RuntimeRollout) => {
  const approval = { approvedBy: "bob", reason: "ok", approvedAt: "2026-12-02T10:01:00Z", expiresAt: "2026-12-02T12:00:00Z", toDigest: r.spec.toDigest }
  const [approved] = fake.seed<RuntimeRollout>(RuntimeRolloutKind, { ...r, spec: { ...r.spec, approval } })
  fake.seed<RuntimeRollout>(RuntimeRolloutKind, { ...approved!, status: { conditions: [{ ...cond("Progressing", "StepsCompleted"), observedGeneration: approved!.metadata.generation }] } })
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
      t.fake.seed(RuntimeRolloutKind, { ...r, status: { conditions: [{ ...cond("Progressing", "StepsCompleted"), observedGeneration: r.metadata.generation }] } } as never)
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
        t.fake.seed(ArgoCD.Application, { apiVersion: "argoproj.io/v1alpha1", kind: "Application", metadata: { name: "gpu-operator", namespace: "argocd", labels: { "operator.aicr.run/runtime-uid": "11111111-1111-4111-8111-111111111111" } } } as never)
        expect(yield* t.run).toEqual(Exit.succeed(Requeue.after(5_000)))
        expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "OrphanedObjectsPresent" })
        expect(t.condition("Stalled")).toMatchObject({ status: "True", reason: "OrphanedObjectsPresent" })
        expect(t.rollouts()).toHaveLength(0)
        // Application records that do not parse block the adoption once spec.adoption names the old runtime.
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { adoption: { fromRuntimeUID: "11111111-1111-4111-8111-111111111111" } } } })
        yield* t.run
        expect(t.condition("Planned")).toMatchObject({ status: "False", reason: "AdoptionBlocked" })
        expect(t.condition("Planned")!.message).toContain("Application argocd/gpu-operator: it has no operator.aicr.run/plan-release annotation")
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
        expect((writes[0]!.body as Array<{ op: string; path: string }>).map((o) => `${o.op} ${o.path}`)).toEqual(["test /metadata/resourceVersion", "add /metadata/finalizers"])
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
      expect(t.condition("Ready")).toMatchObject({ status: "False", reason: "Deleting", message: expect.stringContaining(`rollout ${removal.metadata.name} awaiting approval`) })
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
      const finalizerWrite = t.fake.writesTo(ClusterRuntimeKind).filter((w) => w.subresource === undefined).at(-1)!
      expect((finalizerWrite.body as Array<{ op: string; path: string }>).map((o) => `${o.op} ${o.path}`)).toEqual(["test /metadata/finalizers/0", "remove /metadata/finalizers/0"])
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
