// The status pacer with TestClock: message-only rewrites at most once per interval per object, any other change at
// once, and the wait it answers is when the deferred one is due.
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeStatusPacer } from "./pacer"

describe("status pacer", () => {
  const counting = () => {
    let writes = 0
    return { write: Effect.sync(() => (writes++, true)), writes: () => writes }
  }

  it.effect("writes a message-only change at once when the object was not written within the interval", () =>
    Effect.gen(function* () {
      const pacer = makeStatusPacer({ interval: "10 seconds" })
      const w = counting()
      expect(yield* pacer.pace("r1", true, w.write)).toBe(0)
      expect(w.writes()).toBe(1)
    }),
  )

  it.effect("defers a message-only change within the interval and answers when it is due", () =>
    Effect.gen(function* () {
      const pacer = makeStatusPacer({ interval: "10 seconds" })
      const w = counting()
      yield* pacer.pace("r1", false, w.write)
      yield* TestClock.adjust("3 seconds")
      expect(yield* pacer.pace("r1", true, w.write)).toBe(7_000)
      expect(w.writes()).toBe(1)
      yield* TestClock.adjust("7 seconds")
      expect(yield* pacer.pace("r1", true, w.write)).toBe(0)
      expect(w.writes()).toBe(2)
    }),
  )

  it.effect("writes any other change at once, and it starts the interval again", () =>
    Effect.gen(function* () {
      const pacer = makeStatusPacer({ interval: "10 seconds" })
      const w = counting()
      yield* pacer.pace("r1", false, w.write)
      yield* TestClock.adjust("1 second")
      expect(yield* pacer.pace("r1", false, w.write)).toBe(0)
      expect(w.writes()).toBe(2)
      yield* TestClock.adjust("9500 millis")
      expect(yield* pacer.pace("r1", true, w.write)).toBe(500)
      expect(w.writes()).toBe(2)
    }),
  )

  it.effect("paces each object on its own", () =>
    Effect.gen(function* () {
      const pacer = makeStatusPacer({ interval: "10 seconds" })
      const w = counting()
      yield* pacer.pace("r1", false, w.write)
      expect(yield* pacer.pace("r2", true, w.write)).toBe(0)
      expect(yield* pacer.pace("r1", true, w.write)).toBe(10_000)
      expect(w.writes()).toBe(2)
    }),
  )

  it.effect("does not start the interval when the write made no change", () =>
    Effect.gen(function* () {
      const pacer = makeStatusPacer({ interval: "10 seconds" })
      const w = counting()
      expect(yield* pacer.pace("r1", false, Effect.succeed(false))).toBe(0)
      expect(yield* pacer.pace("r1", true, w.write)).toBe(0)
      expect(w.writes()).toBe(1)
    }),
  )
})
