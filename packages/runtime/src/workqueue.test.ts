import { it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeWorkQueue } from "./workqueue"

const takeNow = (q: { take: Effect.Effect<Option.Option<string>> }) =>
  Effect.gen(function* () {
    const f = yield* Effect.forkChild(q.take)
    for (let i = 0; i < 20; i++) yield* Effect.yieldNow
    return f
  })

describe("work queue", () => {
  it.effect("de-duplicates a key added many times while it waits", () =>
    Effect.gen(function* () {
      const q = yield* makeWorkQueue({ name: "t" })
      yield* q.add("a")
      yield* q.add("b")
      yield* q.add("a")
      yield* q.add("a")
      expect(q.len()).toBe(2)
      expect(yield* q.take).toEqual(Option.some("a"))
      expect(yield* q.take).toEqual(Option.some("b"))
      expect(q.len()).toBe(0)
    }),
  )

  it.effect("never hands out a key that is processing; re-adds while in flight coalesce into one more pass after done", () =>
    Effect.gen(function* () {
      const q = yield* makeWorkQueue({ name: "t" })
      yield* q.add("a")
      const first = yield* q.take
      yield* q.add("a")
      yield* q.add("a")
      expect(q.len()).toBe(0) // dirty, not queued: no second worker can take it
      const waiting = yield* takeNow(q)
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* q.done(Option.getOrThrow(first))
      expect(yield* Fiber.join(waiting)).toEqual(Option.some("a"))
      yield* q.done("a")
      expect(q.len()).toBe(0)
    }),
  )

  it.effect("addAfter delivers after the delay and keeps only the earliest pending delay per key", () =>
    Effect.gen(function* () {
      const q = yield* makeWorkQueue({ name: "t" })
      yield* q.addAfter("a", "10 seconds")
      yield* q.addAfter("a", "20 seconds")
      yield* q.addAfter("a", "5 seconds")
      expect([...q.delayed().values()]).toEqual([5000])
      yield* TestClock.adjust("4 seconds")
      expect(q.len()).toBe(0)
      yield* TestClock.adjust("1 second")
      expect(q.len()).toBe(1)
      yield* TestClock.adjust("30 seconds")
      expect(q.len()).toBe(1)
    }),
  )

  it.effect("addRateLimited backs off per key and forget resets it", () =>
    Effect.gen(function* () {
      const q = yield* makeWorkQueue({ name: "t", backoff: { base: "1 second", jitter: 0 } })
      for (let i = 0; i < 3; i++) yield* q.addRateLimited("a")
      expect([...q.delayed().values()]).toEqual([1000])
      expect(q.numRequeues("a")).toBe(3)
      yield* TestClock.adjust("1 second")
      yield* q.take
      yield* q.done("a")
      yield* q.addRateLimited("a")
      expect([...q.delayed().values()]).toEqual([1000 + 8000])
      q.forget("a")
      expect(q.numRequeues("a")).toBe(0)
    }),
  )

  it.effect("shutdown hands out no more work, wakes waiting takers and drops delayed adds", () =>
    Effect.gen(function* () {
      const q = yield* makeWorkQueue({ name: "t" })
      const waiting = yield* takeNow(q)
      yield* q.shutdown
      expect(yield* Fiber.join(waiting)).toEqual(Option.none())
      yield* q.add("a")
      yield* q.addAfter("b", "1 second")
      expect(yield* q.take).toEqual(Option.none())
      expect(q.delayed().size).toBe(0)
    }),
  )

  it.effect("reports depth, adds, retries and durations to its metrics hooks", () =>
    Effect.gen(function* () {
      const seen = { depth: [] as Array<number>, adds: 0, retries: 0, queue: [] as Array<number>, work: [] as Array<number> }
      const q = yield* makeWorkQueue({
        name: "t",
        metrics: {
          depth: (n) => void seen.depth.push(n),
          add: () => void seen.adds++,
          retry: () => void seen.retries++,
          queueDuration: (s) => void seen.queue.push(s),
          workDuration: (s) => void seen.work.push(s),
        },
      })
      yield* q.add("a")
      yield* TestClock.adjust("2 seconds")
      yield* q.take
      yield* TestClock.adjust("3 seconds")
      yield* q.done("a")
      yield* q.addRateLimited("a")
      expect(seen).toEqual({ depth: [1, 0], adds: 1, retries: 1, queue: [2], work: [3] })
    }),
  )
})
