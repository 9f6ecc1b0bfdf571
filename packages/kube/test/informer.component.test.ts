import type { KubeObject } from "@aicr/api"
import { it } from "@effect/vitest"
import { Deferred, type Duration, Effect, Exit, Fiber, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeFakeKube, WidgetKind } from "@aicr/testing"
import { makeInformer, type InformerEvent } from "../src/index"

const widget = (name: string, extra: Record<string, unknown> = {}) =>
  ({ apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name, ...extra }, spec: { size: 1 } }) as KubeObject

/** Let forked fibers (informer loop, watch) run until they block. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow
})

const setup = (opts: { watchdog?: Duration.Input } = {}) =>
  Effect.gen(function* () {
    const fake = makeFakeKube()
    const events: Array<string> = []
    const informer = yield* makeInformer<KubeObject>({ kind: WidgetKind, watchdog: opts.watchdog, watchTimeoutSeconds: 300 }).pipe(Effect.provide(fake.layer))
    return { fake, events, informer, record: (e: InformerEvent<KubeObject>) => Effect.sync(() => void events.push(`${e.type} ${e.object.metadata.name}`)) }
  })

describe("informer", () => {
  it.effect("lists, syncs, strips managedFields and replays the cache to a late subscriber", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      fake.seed(WidgetKind, widget("a", { managedFields: [{ manager: "x" }] }), widget("b"))
      const informer = yield* makeInformer<KubeObject>({ kind: WidgetKind }).pipe(Effect.provide(fake.layer))
      yield* informer.awaitSynced
      expect(informer.hasSynced()).toBe(true)
      expect(informer.list().map((o) => o.metadata.name)).toEqual(["a", "b"])
      expect(Option.getOrThrow(informer.get("a")).metadata).not.toHaveProperty("managedFields")
      const seen: Array<string> = []
      yield* informer.subscribe((e) => Effect.sync(() => void seen.push(`${e.type} ${e.object.metadata.name}`)))
      expect(seen).toEqual(["add a", "add b"])
    }),
  )

  it.effect("asks its list to project the items (page by page) and projects each item once", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      fake.seed(WidgetKind, widget("a"), widget("b"))
      const projected: Array<string> = []
      const transform = (o: KubeObject) => {
        projected.push(o.metadata.name)
        return { apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, resourceVersion: o.metadata.resourceVersion } } as KubeObject
      }
      const informer = yield* makeInformer<KubeObject>({ kind: WidgetKind, transform }).pipe(Effect.provide(fake.layer))
      yield* informer.awaitSynced
      expect(projected).toEqual(["a", "b"])
      expect(Option.getOrThrow(informer.get("a"))).not.toHaveProperty("spec")
    }),
  )

  it.effect("delivers add, update and delete from the watch, and skips updates that do not change resourceVersion", () =>
    Effect.gen(function* () {
      const { fake, events, informer, record } = yield* setup()
      yield* informer.subscribe(record)
      yield* informer.awaitSynced
      yield* settle
      yield* fake.kube.create(WidgetKind, widget("a"))
      yield* fake.kube.patch(WidgetKind, "a", { type: "merge", body: { spec: { size: 2 } } })
      yield* fake.kube.delete(WidgetKind, "a")
      yield* settle
      expect(events).toEqual(["add a", "update a", "delete a"])
      expect(informer.list()).toEqual([])
    }),
  )

  it.effect("re-watches from the last resourceVersion after a clean close, without relisting", () =>
    Effect.gen(function* () {
      const { fake, events, informer, record } = yield* setup()
      yield* informer.subscribe(record)
      yield* informer.awaitSynced
      yield* settle
      yield* TestClock.adjust("5 seconds")
      fake.closeWatches()
      yield* settle
      yield* fake.kube.create(WidgetKind, widget("a"))
      yield* settle
      expect(informer.listCount()).toBe(1)
      expect(fake.requests.watch).toBe(2)
      expect(events).toEqual(["add a"])
    }),
  )

  it.effect("relists at once on Gone, emitting the diff of what changed meanwhile", () =>
    Effect.gen(function* () {
      const { fake, events, informer, record } = yield* setup()
      fake.seed(WidgetKind, widget("old"))
      yield* informer.subscribe(record)
      yield* informer.awaitSynced
      yield* settle
      fake.failWatches("Gone")
      yield* settle
      expect(informer.listCount()).toBe(2)
      expect(events).toEqual(["add old"])
    }),
  )

  it.effect("after a watch failure backs off, relists and converges on objects created and deleted during the outage", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      fake.seed(WidgetKind, widget("stays"), widget("goes"))
      const events: Array<string> = []
      const informer = yield* makeInformer<KubeObject>({ kind: WidgetKind }).pipe(Effect.provide(fake.layer))
      yield* informer.subscribe((e) => Effect.sync(() => void events.push(`${e.type} ${e.object.metadata.name}`)))
      yield* informer.awaitSynced
      yield* settle
      events.length = 0
      // The API server goes away: the watch breaks and the next lists fail too.
      fake.failNext("Unavailable", { verb: "list", times: 3 })
      fake.failWatches("Unavailable")
      yield* settle
      fake.seed(WidgetKind, widget("new"))
      yield* fake.kube.delete(WidgetKind, "goes")
      for (let i = 0; i < 4; i++) {
        yield* TestClock.adjust("30 seconds")
        yield* settle
      }
      expect(events.sort()).toEqual(["add new", "delete goes"])
      expect(informer.list().map((o) => o.metadata.name)).toEqual(["new", "stays"])
      expect(fake.requests.list).toBe(5) // initial, 3 failed, 1 recovered
    }),
  )

  it.effect("a tolerated list failure counts as synced and empty, is kept as listError, and clears once a list succeeds", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      fake.seed(WidgetKind, widget("a"))
      // As when a CRD is not installed yet: the list answers NotFound until it is.
      fake.failNext("NotFound", { verb: "list", times: 2 })
      const informer = yield* makeInformer<KubeObject>({ kind: WidgetKind, tolerate: (e) => e.reason._tag === "NotFound" }).pipe(Effect.provide(fake.layer))
      yield* informer.awaitSynced
      expect(informer.list()).toEqual([])
      expect(informer.listError()?.reason._tag).toBe("NotFound")
      for (let i = 0; i < 2; i++) {
        yield* TestClock.adjust("2 seconds")
        yield* settle
      }
      expect(informer.listError()).toBeUndefined()
      expect(informer.list().map((o) => o.metadata.name)).toEqual(["a"])
      // An untolerated failure holds the informer unsynced.
      const other = makeFakeKube()
      other.failNext("Forbidden", { verb: "list" })
      const held = yield* makeInformer<KubeObject>({ kind: WidgetKind, tolerate: (e) => e.reason._tag === "NotFound" }).pipe(Effect.provide(other.layer))
      yield* settle
      expect(held.hasSynced()).toBe(false)
      expect(held.listError()).toBeUndefined()
    }),
  )

  it.effect("after a tolerated list failure it waits for retryWhen, making no request meanwhile, then lists again", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      fake.seed(WidgetKind, widget("a"))
      fake.failNext("NotFound", { verb: "list", times: 1 })
      const installed = yield* Deferred.make<void>()
      const informer = yield* makeInformer<KubeObject>({
        kind: WidgetKind,
        tolerate: (e) => e.reason._tag === "NotFound",
        retryWhen: () => Deferred.await(installed),
      }).pipe(Effect.provide(fake.layer))
      yield* informer.awaitSynced
      expect(informer.listError()?.reason._tag).toBe("NotFound")
      // Ten minutes of the backoff's 30 s cap: no list while the kind is not there.
      for (let i = 0; i < 20; i++) {
        yield* TestClock.adjust("30 seconds")
        yield* settle
      }
      expect(fake.requests.list).toBe(1)
      yield* Deferred.succeed(installed, undefined)
      yield* settle
      yield* TestClock.adjust("2 seconds")
      yield* settle
      expect(fake.requests.list).toBe(2)
      expect(informer.listError()).toBeUndefined()
      expect(informer.list().map((o) => o.metadata.name)).toEqual(["a"])
    }),
  )

  it.effect("relists when the watchdog sees no event or bookmark for its period", () =>
    Effect.gen(function* () {
      const { fake, informer } = yield* setup({ watchdog: "1 minute" })
      yield* informer.awaitSynced
      yield* settle
      yield* TestClock.adjust("30 seconds")
      fake.bookmark()
      yield* settle
      yield* TestClock.adjust("45 seconds")
      yield* settle
      expect(informer.listCount()).toBe(1) // the bookmark at 30 s kept it alive
      yield* TestClock.adjust("20 seconds")
      yield* settle
      expect(informer.listCount()).toBe(2)
    }),
  )

  it.effect("stops for good when its scope closes: no open watch and no restart later", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const scope = yield* Scope.make()
      const informer = yield* makeInformer<KubeObject>({ kind: WidgetKind }).pipe(Effect.provide(fake.layer), Scope.provide(scope))
      yield* informer.awaitSynced
      yield* settle
      expect(fake.openWatches()).toBe(1)
      yield* Scope.close(scope, Exit.void)
      yield* settle
      yield* TestClock.adjust("10 minutes")
      yield* settle
      expect(fake.openWatches()).toBe(0)
      expect(fake.requests.list).toBe(1)
      expect(fake.requests.watch).toBe(1)
    }),
  )

  it.effect("watches one namespace with a label selector", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const cm = (ns: string, name: string, role: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns, labels: { role } } })
      const ConfigMap = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true }
      fake.seed(ConfigMap, cm("a", "p", "plan"), cm("a", "c", "content"), cm("b", "p", "plan"))
      const informer = yield* makeInformer<KubeObject>({ kind: ConfigMap, namespace: "a", labelSelector: "role=plan" }).pipe(Effect.provide(fake.layer))
      yield* informer.awaitSynced
      expect(informer.list().map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(["a/p"])
      const f = yield* Effect.forkChild(informer.awaitSynced)
      yield* Fiber.join(f)
    }),
  )
})
