import { describe, expect, it } from "vitest"
import { conditionIn, expectCondition, untilCondition } from "./conditions"

const ready = { type: "Ready", status: "False", reason: "EngineMissing", message: "install Argo CD" }
const runtime = { status: { conditions: [{ type: "Planned", status: "True", reason: "PlanComputed", message: "" }, ready] } }

describe("condition assertions", () => {
  it.each([
    { name: "an object with status.conditions", source: runtime },
    { name: "a list of conditions", source: runtime.status.conditions },
    { name: "one condition with its type", source: ready },
    { name: "one condition read without a type", source: { status: "False", reason: "EngineMissing", message: "install Argo CD" } },
  ])("finds the condition in $name", ({ source }) => {
    expect(expectCondition(source, "Ready", "False", "EngineMissing")).toMatchObject({ status: "False", reason: "EngineMissing", message: "install Argo CD" })
  })

  it.each([
    {
      name: "another status",
      status: "True" as const,
      reason: "EngineMissing",
      want: "expected condition Ready True/EngineMissing, got False/EngineMissing: install Argo CD",
    },
    {
      name: "another reason",
      status: "False" as const,
      reason: "Unauthorized",
      want: "expected condition Ready False/Unauthorized, got False/EngineMissing: install Argo CD",
    },
  ])("fails on $name, naming what it found", ({ status, reason, want }) => {
    expect(() => expectCondition(runtime, "Ready", status, reason)).toThrow(want)
  })

  it("fails when the condition is absent, or a single condition has another type", () => {
    expect(() => expectCondition(runtime, "Stalled", "True", "EngineMissing")).toThrow("got no such condition")
    expect(conditionIn(ready, "Stalled")).toBeUndefined()
    expect(() => expectCondition(undefined, "Ready", "False", "EngineMissing")).toThrow("got no such condition")
  })

  it("untilCondition polls until the condition matches and returns it", async () => {
    const seen = [{ ...ready, reason: "ProjectMissing" }, ready]
    let n = 0
    const c = await untilCondition(async () => seen[Math.min(n++, 1)], "Ready", "False", "EngineMissing", { intervalMs: 1 })
    expect(c).toBe(ready)
    expect(n).toBe(2)
  })

  it("untilCondition names the condition last seen when it times out", async () => {
    await expect(untilCondition(async () => runtime, "Ready", "True", "RolledOut", { timeoutMs: 20, intervalMs: 5 })).rejects.toThrow(
      /timed out waiting for condition Ready True\/RolledOut.*\(last seen: False\/EngineMissing: install Argo CD\)/u,
    )
  })
})
