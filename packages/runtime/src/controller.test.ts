import type { KubeObject, ResourceKind } from "@aicr/api"
import { KubeError, reasonFromStatus, type Informer, type InformerEvent } from "@aicr/kube"
import { it } from "@effect/vitest"
import { Clock, Data, Deferred, Effect, Exit, Fiber, Logger, Option, References, Scope } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { runController, self } from "./controller"
import { makeMetrics } from "./metrics"
import { Requeue } from "./requeue"

const Widget: ResourceKind = { group: "test.aicr.run", version: "v1", kind: "Widget", plural: "widgets", namespaced: false }
const w = (name: string, rv = "1") => ({ apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name, resourceVersion: rv } }) as KubeObject

/** An informer whose events the test pushes by hand. */
const stubInformer = (initial: ReadonlyArray<KubeObject> = []) => {
  const handlers: Array<(e: InformerEvent<KubeObject>) => Effect.Effect<void>> = []
  const informer: Informer<KubeObject> = {
    kind: Widget,
    get: (k) => Option.fromNullishOr(initial.find((o) => o.metadata.name === k)),
    list: () => initial,
    hasSynced: () => true,
    awaitSynced: Effect.void,
    subscribe: (h) => Effect.suspend(() => (handlers.push(h), Effect.forEach(initial, (object) => h({ type: "add", object }), { discard: true }))),
    resourceVersion: () => "1",
    listCount: () => 1,
    listError: () => undefined,
    scope: {},
  }
  return { informer, emit: (e: InformerEvent<KubeObject>) => Effect.forEach(handlers, (h) => h(e), { discard: true }) }
}

const settle = Effect.gen(function* () {
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow
})

const logs: Array<{ level: string; message: unknown; annotations: Record<string, unknown> }> = []
const captureLogs = Logger.layer([
  Logger.make(
    ({ logLevel, message, fiber }) => void logs.push({ level: logLevel, message, annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } }),
  ),
])

class RegistryUnreachableError extends Data.TaggedError("RegistryUnreachableError")<{ readonly registry: string }> {}
const conflict = new KubeError({ reason: reasonFromStatus(409, { reason: "Conflict", message: "the object has been modified" }), verb: "PATCH", path: "/x" })

describe("runController", () => {
  it.effect("reconciles each key once however many events arrive before a worker takes it", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a"), w("b")])
      const calls: Array<string> = []
      yield* runController({ name: "t", kind: Widget, sources: [self(src.informer)], reconcile: (k) => Effect.sync(() => (calls.push(k), Requeue.onChange)) })
      yield* src.emit({ type: "update", object: w("a", "2"), old: w("a") })
      yield* src.emit({ type: "update", object: w("a", "3"), old: w("a", "2") })
      yield* settle
      expect(calls.sort()).toEqual(["a", "b"])
    }),
  )

  it.effect("never runs one key concurrently; events during a reconcile coalesce into exactly one more pass", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a")])
      const gate = yield* Deferred.make<void>()
      let running = 0,
        maxRunning = 0,
        calls = 0
      yield* runController({
        name: "t",
        kind: Widget,
        workers: 4,
        sources: [self(src.informer)],
        reconcile: () =>
          Effect.gen(function* () {
            calls++
            running++
            maxRunning = Math.max(maxRunning, running)
            if (calls === 1) yield* Deferred.await(gate)
            running--
            return Requeue.onChange
          }),
      })
      yield* settle
      for (let i = 2; i < 6; i++) yield* src.emit({ type: "update", object: w("a", String(i)), old: w("a") })
      yield* settle
      expect(calls).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      yield* settle
      expect({ calls, maxRunning }).toEqual({ calls: 2, maxRunning: 1 })
    }),
  )

  it.effect("reconciles its initialKeys once after the caches sync, with no object and no event for them", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a")])
      const calls: Array<string> = []
      yield* runController({
        name: "t",
        kind: Widget,
        sources: [self(src.informer)],
        initialKeys: ["a", "cluster"],
        reconcile: (k) => Effect.sync(() => (calls.push(k), Requeue.onChange)),
      })
      yield* settle
      expect(calls.sort()).toEqual(["a", "cluster"])
    }),
  )

  it.effect("Requeue.after comes back after the delay", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a")])
      let calls = 0
      yield* runController({ name: "t", kind: Widget, sources: [self(src.informer)], reconcile: () => Effect.sync(() => (calls++, Requeue.after("1 minute"))) })
      yield* settle
      yield* TestClock.adjust("59 seconds")
      expect(calls).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(calls).toBe(2)
    }),
  )

  it.effect("backs off per key on errors, growing to the cap, and forgets after a success", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a")])
      const times: Array<number> = []
      let failUntil = 5
      yield* runController({
        name: "t",
        kind: Widget,
        sources: [self(src.informer)],
        backoff: { base: "1 second", max: "4 seconds", jitter: 0 },
        reconcile: () =>
          Effect.gen(function* () {
            times.push(yield* Clock.currentTimeMillis)
            if (times.length <= failUntil) return yield* Effect.fail(new RegistryUnreachableError({ registry: "r" }))
            return Requeue.onChange
          }),
      })
      for (let i = 0; i < 20; i++) {
        yield* TestClock.adjust("1 second")
        yield* settle
      }
      // fail at 0, +1 s, +2 s, +4 s, +4 s (cap), then success
      expect(times).toEqual([0, 1000, 3000, 7000, 11000, 15000])
      failUntil = 99
      yield* src.emit({ type: "update", object: w("a", "9"), old: w("a") })
      yield* settle
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(times.length).toBe(8) // after a success the backoff starts again at 1 s
    }).pipe(Effect.provide(captureLogs)),
  )

  it.effect("treats KubeError Conflict as a silent immediate requeue: debug log only, not an error", () =>
    Effect.gen(function* () {
      logs.length = 0
      const src = stubInformer([w("a")])
      const metrics = makeMetrics()
      let calls = 0
      yield* runController({
        name: "conflicts",
        kind: Widget,
        sources: [self(src.informer)],
        metrics,
        reconcile: () => (++calls === 1 ? Effect.fail(conflict) : Effect.succeed(Requeue.onChange)),
      })
      yield* settle
      yield* TestClock.adjust("10 millis")
      yield* settle
      expect(calls).toBe(2)
      expect(logs.filter((l) => l.level !== "Debug" && l.level !== "Info")).toEqual([])
      const text = yield* Effect.promise(() => metrics.registry.metrics())
      expect(text).toContain('controller_runtime_reconcile_total{controller="conflicts",result="requeue"} 1')
      expect(text).toContain('controller_runtime_reconcile_errors_total{controller="conflicts"} 0')
    }).pipe(Effect.provide(captureLogs)),
  )

  it.effect("logs a defect at error with its stack and requeues with backoff", () =>
    Effect.gen(function* () {
      logs.length = 0
      const src = stubInformer([w("a")])
      let calls = 0
      yield* runController({
        name: "t",
        kind: Widget,
        sources: [self(src.informer)],
        backoff: { base: "1 second", jitter: 0 },
        reconcile: () =>
          Effect.sync(() => {
            if (++calls === 1) throw new Error("boom")
            return Requeue.onChange
          }),
      })
      yield* settle
      const errorLog = logs.find((l) => l.level === "Error")
      expect(errorLog?.message).toEqual(["Reconciler panicked"])
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(calls).toBe(2)
    }).pipe(Effect.provide(captureLogs)),
  )

  it.effect("on scope close stops taking work, lets the in-flight reconcile finish and starts nothing new", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a"), w("b")])
      const gate = yield* Deferred.make<void>()
      const done: Array<string> = []
      const scope = yield* Scope.make()
      yield* runController({
        name: "t",
        kind: Widget,
        sources: [self(src.informer)],
        reconcile: (k) => Deferred.await(gate).pipe(Effect.andThen(Effect.sync(() => (done.push(k), Requeue.onChange)))),
      }).pipe(Scope.provide(scope))
      yield* settle
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* settle
      expect(closing.pollUnsafe()).toBeUndefined() // waiting for the in-flight reconcile
      yield* Deferred.succeed(gate, undefined)
      yield* settle
      yield* Fiber.join(closing)
      expect(done).toEqual(["a"])
    }),
  )

  it.effect("interrupts in-flight reconciles that overrun the graceful shutdown period", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a")])
      let interrupted = false
      const scope = yield* Scope.make()
      yield* runController({
        name: "t",
        kind: Widget,
        sources: [self(src.informer)],
        gracefulShutdown: "30 seconds",
        reconcile: () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true)))),
      }).pipe(Scope.provide(scope))
      yield* settle
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* TestClock.adjust("29 seconds")
      expect(interrupted).toBe(false)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      expect(interrupted).toBe(true)
    }),
  )

  it.effect("annotates reconcile logs with controller, reconcileID and the Kind-keyed object", () =>
    Effect.gen(function* () {
      const src = stubInformer([w("a")])
      const seen: Array<Record<string, unknown>> = []
      yield* runController({
        name: "approval-guard",
        kind: Widget,
        sources: [self(src.informer)],
        reconcile: () =>
          Effect.gen(function* () {
            yield* Effect.logInfo("Reconciling")
            return Requeue.onChange
          }),
      }).pipe(
        Effect.provide(
          Logger.layer([
            Logger.make(({ fiber, message }) => {
              if ((message as Array<unknown>)[0] === "Reconciling") seen.push({ ...fiber.getRef(References.CurrentLogAnnotations) })
            }),
          ]),
        ),
      )
      yield* settle
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatchObject({ controller: "approval-guard", Widget: "a" })
      expect(seen[0]!["reconcileID"]).toMatch(/^[0-9a-f-]{36}$/)
    }),
  )
})
