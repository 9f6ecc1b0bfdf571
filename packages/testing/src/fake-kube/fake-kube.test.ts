import { Core, type KubeObject } from "@aicr/api"
import { Kube, type KubeError, type WatchEvent } from "@aicr/kube"
import { Effect, Fiber, Option } from "effect"
import { describe, expect, it } from "vitest"
import { makeFakeKube } from "./fake-kube"
import { runSsaScenario, ssaScenarios, WidgetKind } from "./ssa-scenarios"

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
const fail = <A>(e: Effect.Effect<A, KubeError>) => Effect.runPromise(Effect.flip(e))

const widget = (name: string, spec: Record<string, unknown> = { size: 1 }, extra: Record<string, unknown> = {}) =>
  ({ apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name, ...extra }, spec }) as KubeObject & { spec: Record<string, unknown> }

describe("FakeKube: server-side-apply ownership (the scenario table shared with the real API server)", () => {
  it.each(ssaScenarios.map((s, i) => ({ ...s, i })))("$name", async (scenario) => {
    const fake = makeFakeKube()
    const outcome = await run(runSsaScenario(fake.kube, scenario, `w-${scenario.i}`))
    expect(outcome).toEqual(scenario.want)
  })

  it("reports every conflicting field as a FieldManagerConflict cause, spelled as the API server spells it", async () => {
    const fake = makeFakeKube()
    await run(fake.kube.create(WidgetKind, widget("w")))
    const cond = { type: "A", status: "True", reason: "R", message: "m", lastTransitionTime: "2026-12-02T10:00:00Z" }
    await run(fake.kube.apply(WidgetKind, { ...widget("w"), status: { conditions: [cond] } }, { fieldManager: "a", subresource: "status" }))
    const err = await fail(
      fake.kube.apply(WidgetKind, { ...widget("w"), status: { conditions: [{ ...cond, status: "False" }] } }, { fieldManager: "b", subresource: "status" }),
    )
    expect(err.reason).toMatchObject({
      _tag: "FieldManagerConflict",
      code: 409,
      causes: [{ reason: "FieldManagerConflict", field: '.status.conditions[type="A"].status' }],
    })
    expect(fake.owners(WidgetKind, "w").find((o) => o.manager === "a")?.fields).toContain('.status.conditions[type="A"].status')
  })
})

describe("FakeKube: versions", () => {
  it("bumps resourceVersion on every change and generation only on spec changes", async () => {
    const fake = makeFakeKube()
    const created = await run(fake.kube.create(WidgetKind, widget("w")))
    expect(created.metadata).toMatchObject({ generation: 1, resourceVersion: "1" })
    const labelled = await run(fake.kube.patch(WidgetKind, "w", { type: "merge", body: { metadata: { labels: { a: "b" } } } }))
    expect(labelled.metadata).toMatchObject({ generation: 1, resourceVersion: "2" })
    const status = await run(fake.kube.patch(WidgetKind, "w", { type: "merge", body: { status: { alpha: { n: 1 } } } }, { subresource: "status" }))
    expect(status.metadata).toMatchObject({ generation: 1, resourceVersion: "3" })
    // The creator (an Update manager) owns spec.size, so taking it over needs force, as on the API server.
    expect((await fail(fake.kube.apply(WidgetKind, widget("w", { size: 2 }), { fieldManager: "m" }))).reason._tag).toBe("FieldManagerConflict")
    const spec = await run(fake.kube.apply(WidgetKind, widget("w", { size: 2 }), { fieldManager: "m", force: true }))
    expect(spec.metadata).toMatchObject({ generation: 2, resourceVersion: "4" })
  })

  it("ignores status on main-resource writes and spec on status writes (status subresource)", async () => {
    const fake = makeFakeKube()
    await run(fake.kube.create(WidgetKind, { ...widget("w"), status: { alpha: { n: 9 } } } as KubeObject))
    expect(fake.peek(WidgetKind, "w")).not.toHaveProperty("status")
    await run(fake.kube.patch(WidgetKind, "w", { type: "merge", body: { spec: { size: 5 }, status: { alpha: { n: 1 } } } }, { subresource: "status" }))
    expect(fake.peek<KubeObject & { spec: unknown; status: unknown }>(WidgetKind, "w")).toMatchObject({ spec: { size: 1 }, status: { alpha: { n: 1 } } })
  })

  it("does not bump resourceVersion for a no-op apply", async () => {
    const fake = makeFakeKube()
    await run(fake.kube.create(WidgetKind, widget("w")))
    const a = await run(fake.kube.apply(WidgetKind, { ...widget("w"), status: { alpha: { n: 1 } } }, { fieldManager: "m", subresource: "status" }))
    const b = await run(fake.kube.apply(WidgetKind, { ...widget("w"), status: { alpha: { n: 1 } } }, { fieldManager: "m", subresource: "status" }))
    expect(b.metadata.resourceVersion).toBe(a.metadata.resourceVersion)
  })

  it("refuses a replace with a stale resourceVersion with Conflict", async () => {
    const fake = makeFakeKube()
    const w = await run(fake.kube.create(WidgetKind, widget("w")))
    await run(fake.kube.replace(WidgetKind, { ...w, spec: { size: 2 } } as KubeObject))
    const err = await fail(fake.kube.replace(WidgetKind, { ...w, spec: { size: 3 } } as KubeObject))
    expect(err.reason._tag).toBe("Conflict")
  })
})

describe("FakeKube: verbs", () => {
  it("gets, lists by label selector and namespace, and answers AlreadyExists / NotFound like the API server", async () => {
    const fake = makeFakeKube()
    const cm = (ns: string, name: string, labels: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: ns, labels },
      data: {},
    })
    fake.seed(Core.ConfigMap, cm("a", "p1", { role: "plan" }), cm("a", "c1", { role: "content" }), cm("b", "p2", { role: "plan" }))
    expect((await run(fake.kube.list(Core.ConfigMap, { labelSelector: "role=plan" }))).items.map((o) => o.metadata.name)).toEqual(["p1", "p2"])
    expect((await run(fake.kube.list(Core.ConfigMap, { namespace: "a", labelSelector: "role in (plan,content)" }))).items).toHaveLength(2)
    expect((await run(fake.kube.list(Core.ConfigMap, { fieldSelector: "metadata.name=c1" }))).items).toHaveLength(1)
    expect(Option.isSome(await run(fake.kube.get(Core.ConfigMap, "a/p1")))).toBe(true)
    expect(Option.isNone(await run(fake.kube.get(Core.ConfigMap, "a/zz")))).toBe(true)
    expect((await fail(fake.kube.create(Core.ConfigMap, cm("a", "p1", {})))).reason._tag).toBe("AlreadyExists")
    expect((await fail(fake.kube.delete(Core.ConfigMap, "a/zz"))).reason._tag).toBe("NotFound")
  })

  it("applies JSON patches and refuses a failed test op as Invalid", async () => {
    const fake = makeFakeKube()
    await run(fake.kube.create(WidgetKind, widget("w")))
    const p = await run(
      fake.kube.patch<KubeObject & { spec: unknown }>(WidgetKind, "w", {
        type: "json",
        ops: [
          { op: "replace", path: "/spec/size", value: 3 },
          { op: "add", path: "/spec/color", value: "red" },
        ],
      }),
    )
    expect(p.spec).toEqual({ size: 3, color: "red" })
    expect((await fail(fake.kube.patch(WidgetKind, "w", { type: "json", ops: [{ op: "test", path: "/spec/size", value: 1 }] }))).reason._tag).toBe("Invalid")
  })

  it("deletes with preconditions and holds an object with finalizers until they are removed", async () => {
    const fake = makeFakeKube()
    await run(fake.kube.create(WidgetKind, widget("w", { size: 1 }, { finalizers: ["operator.aicr.run/cleanup"] })))
    expect((await fail(fake.kube.delete(WidgetKind, "w", { preconditions: { uid: "nope" } }))).reason._tag).toBe("Conflict")
    await run(fake.kube.delete(WidgetKind, "w"))
    expect(fake.peek(WidgetKind, "w")?.metadata.deletionTimestamp).toBeDefined()
    await run(fake.kube.patch(WidgetKind, "w", { type: "merge", body: { metadata: { finalizers: null } } }))
    expect(fake.peek(WidgetKind, "w")).toBeUndefined()
  })

  it("records every write with verb, manager, path, body and result", async () => {
    const fake = makeFakeKube()
    await run(fake.kube.create(WidgetKind, widget("w"), { fieldManager: "aicr-planner" }))
    await Effect.runPromise(
      Effect.ignore(fake.kube.apply(WidgetKind, { ...widget("w"), status: { alpha: { n: 1 } } }, { fieldManager: "aicr-alpha", subresource: "status" })),
    )
    fake.failNext("Unavailable", { verb: "delete" })
    await Effect.runPromise(Effect.ignore(fake.kube.delete(WidgetKind, "w")))
    expect(fake.writes.map((w) => ({ verb: w.verb, manager: w.manager, path: w.path, result: w.result }))).toEqual([
      { verb: "create", manager: "aicr-planner", path: "/apis/test.aicr.run/v1/widgets", result: "ok" },
      { verb: "apply", manager: "aicr-alpha", path: "/apis/test.aicr.run/v1/widgets/w/status", result: "ok" },
      { verb: "delete", manager: undefined, path: "/apis/test.aicr.run/v1/widgets/w", result: "Unavailable" },
    ])
    expect(fake.writes[1]!.body).toMatchObject({ status: { alpha: { n: 1 } } })
  })

  it("is provided as the Kube service by its layer", async () => {
    const fake = makeFakeKube()
    fake.seed(WidgetKind, widget("w"))
    const got = await run(
      Effect.gen(function* () {
        return yield* (yield* Kube).get(WidgetKind, "w")
      }).pipe(Effect.provide(fake.layer)),
    )
    expect(Option.isSome(got)).toBe(true)
  })
})

describe("FakeKube: watch", () => {
  it("replays events after a resourceVersion and streams new ones; a selector change reads as ADDED/DELETED", async () => {
    const fake = makeFakeKube()
    fake.seed(WidgetKind, widget("a"))
    const rv = fake.resourceVersion()
    fake.seed(WidgetKind, widget("b"))
    const seen: Array<string> = []
    const fiber = Effect.runFork(
      fake.kube.watch(WidgetKind, { resourceVersion: rv }, (e: WatchEvent) =>
        Effect.sync(() => void seen.push(e.type === "BOOKMARK" ? "BOOKMARK" : `${e.type} ${e.object.metadata.name}`)),
      ),
    )
    await new Promise((r) => setTimeout(r, 5))
    await run(fake.kube.delete(WidgetKind, "a"))
    fake.bookmark()
    fake.closeWatches()
    await Effect.runPromise(Fiber.join(fiber))
    expect(seen).toEqual(["ADDED b", "DELETED a", "BOOKMARK"])

    const sel: Array<string> = []
    const f2 = Effect.runFork(
      fake.kube.watch(WidgetKind, { resourceVersion: fake.resourceVersion(), labelSelector: "x=y" }, (e: WatchEvent) =>
        Effect.sync(() => void sel.push(e.type)),
      ),
    )
    await new Promise((r) => setTimeout(r, 5))
    await run(fake.kube.patch(WidgetKind, "b", { type: "merge", body: { metadata: { labels: { x: "y" } } } }))
    await run(fake.kube.patch(WidgetKind, "b", { type: "merge", body: { metadata: { labels: { x: "z" } } } }))
    fake.failWatches("Unavailable")
    const exit = await Effect.runPromise(Effect.flip(Fiber.join(f2)))
    expect(sel).toEqual(["ADDED", "DELETED"])
    expect(exit.reason._tag).toBe("Unavailable")
  })

  it("answers Gone for a resourceVersion older than the kept history", async () => {
    const fake = makeFakeKube({ history: 2 })
    fake.seed(WidgetKind, widget("a"), widget("b"), widget("c"), widget("d"))
    const err = await fail(fake.kube.watch(WidgetKind, { resourceVersion: "1" }, () => Effect.void))
    expect(err.reason._tag).toBe("Gone")
  })
})
