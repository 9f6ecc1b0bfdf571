// reconcile() against FakeKube: the writes the planner makes on a first visit, after the window, on an idle pass
// (none), and when a rollout ends — every condition of its room set, every write confined to its room.
import { ArgoCD, ClusterRuntimeKind, Core, type ClusterRuntime, type KubeObject, LABEL_OUTCOME, type ResourceKind, type RuntimeRollout, RuntimeRolloutKind, sha256 } from "@aicr/api"
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
