import { it } from "@effect/vitest"
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeKeyedBackoff, makeTokenBucket } from "./ratelimit"

describe("keyed backoff", () => {
  it.effect("doubles per failure from the base, within the jitter, and stops at the cap", () =>
    Effect.gen(function* () {
      const b = makeKeyedBackoff({ base: "100 millis", max: "1 second", jitter: 0.1 })
      const delays: Array<number> = []
      for (let i = 0; i < 6; i++) delays.push(yield* b.next("k"))
      const want = [100, 200, 400, 800, 1000, 1000]
      delays.forEach((d, i) => {
        expect(d).toBeGreaterThanOrEqual(want[i]!)
        expect(d).toBeLessThanOrEqual(Math.min(1000, want[i]! * 1.1))
      })
      expect(b.failures("k")).toBe(6)
    }),
  )

  it.effect("keeps keys independent and starts over after forget", () =>
    Effect.gen(function* () {
      const b = makeKeyedBackoff({ base: "10 millis", jitter: 0 })
      yield* b.next("a")
      yield* b.next("a")
      expect(yield* b.next("b")).toBe(10)
      b.forget("a")
      expect(yield* b.next("a")).toBe(10)
    }),
  )

  it.effect("defaults to 5 ms, as controller-runtime", () =>
    Effect.gen(function* () {
      const d = yield* makeKeyedBackoff().next("k")
      expect(d).toBeGreaterThanOrEqual(5)
      expect(d).toBeLessThan(5.5)
    }),
  )
})

describe("token bucket", () => {
  it.effect("lets a burst through at once, then spaces callers at 1/qps", () =>
    Effect.gen(function* () {
      const bucket = makeTokenBucket({ qps: 10, burst: 3 })
      const times: Array<number> = []
      const fiber = yield* Effect.forkChild(
        Effect.forEach(
          Array.from({ length: 6 }),
          () =>
            bucket.take.pipe(
              Effect.andThen(Clock.currentTimeMillis),
              Effect.map((t) => void times.push(t)),
            ),
          { discard: true },
        ),
      )
      for (let i = 0; i < 10; i++) yield* TestClock.adjust("50 millis")
      yield* Fiber.join(fiber)
      expect(times).toEqual([0, 0, 0, 100, 200, 300])
    }),
  )

  it.effect("refills while idle, up to the burst", () =>
    Effect.gen(function* () {
      const bucket = makeTokenBucket({ qps: 2, burst: 2 })
      expect([yield* bucket.tryTake, yield* bucket.tryTake, yield* bucket.tryTake]).toEqual([true, true, false])
      yield* TestClock.adjust("500 millis")
      expect([yield* bucket.tryTake, yield* bucket.tryTake]).toEqual([true, false])
      yield* TestClock.adjust("1 hour")
      expect([yield* bucket.tryTake, yield* bucket.tryTake, yield* bucket.tryTake]).toEqual([true, true, false])
    }),
  )
})
