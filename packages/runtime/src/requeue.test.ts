import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { Requeue } from "./requeue"

describe("Requeue", () => {
  it("builds after(d) from any duration input", () => {
    const r = Requeue.after("90 seconds")
    expect(r._tag === "After" && Duration.toMillis(r.delay)).toBe(90_000)
  })
  it("min keeps the sooner request and prefers any After over onChange/never", () => {
    expect(Requeue.min(Requeue.onChange, Requeue.after(5))).toEqual(Requeue.after(5))
    expect(Requeue.min(Requeue.after(10), Requeue.after(5))).toEqual(Requeue.after(5))
    expect(Requeue.min(Requeue.never, Requeue.onChange)).toEqual(Requeue.onChange)
  })
})
