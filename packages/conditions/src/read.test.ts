import { describe, expect, it } from "vitest"
import type { Condition } from "./condition"
import { ConditionDef } from "./def"
import { current, isHealthy, isTrue, summarize, type ConditionHolder } from "./read"

const def = (type: string, polarity: "normal-true" | "abnormal-true" = "normal-true") =>
  ConditionDef.make({ type, owner: "x", polarity, doc: "d", reasons: { True: { Yes: "y" }, False: { No: "n" } } })
const Resolved = def("Resolved")
const Mirrored = def("Mirrored")
const Stalled = def("Stalled", "abnormal-true")

const cond = (type: string, status: Condition["status"], observedGeneration: number | undefined, reason = "R"): Condition => ({
  type,
  status,
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
  lastTransitionTime: "2026-12-02T10:00:00Z",
  reason,
  message: `${type} says ${reason}`,
})
const obj = (generation: number | undefined, ...conditions: Condition[]): ConditionHolder => ({ metadata: { generation }, status: { conditions } })

describe("current", () => {
  it.each([
    {
      name: "returns a condition written for the current generation",
      o: obj(3, cond("Resolved", "True", 3)),
      want: { status: "True", reason: "R", current: true },
    },
    { name: "reads a missing condition as Unknown/NotYetReported", o: obj(3), want: { status: "Unknown", reason: "NotYetReported", current: false } },
    {
      name: "reads an object without status as Unknown/NotYetReported",
      o: { metadata: { generation: 1 } },
      want: { status: "Unknown", reason: "NotYetReported" },
    },
    {
      name: "reads a condition from an older generation as Unknown/Stale",
      o: obj(4, cond("Resolved", "True", 3)),
      want: { status: "Unknown", reason: "Stale", observedGeneration: 3, current: false },
    },
    {
      name: "reads a condition without observedGeneration as stale",
      o: obj(4, cond("Resolved", "True", undefined)),
      want: { status: "Unknown", reason: "Stale" },
    },
    {
      name: "reads a condition from a newer generation as stale, never True",
      o: obj(2, cond("Resolved", "True", 3)),
      want: { status: "Unknown", reason: "Stale" },
    },
    {
      name: "accepts a condition without observedGeneration on an object without generation",
      o: obj(undefined, cond("Resolved", "False", undefined)),
      want: { status: "False", current: true },
    },
  ])("$name", ({ o, want }) => {
    expect(current(o, Resolved)).toMatchObject(want)
  })

  it("names both generations in the stale message", () => {
    expect(current(obj(4, cond("Resolved", "True", 3)), Resolved).message).toBe("Resolved was reported for generation 3, the object is at generation 4")
  })

  it.each([
    { name: "isTrue is false for a stale True", o: obj(4, cond("Resolved", "True", 3)), want: [false, false] },
    { name: "isTrue and isHealthy are true for a current True", o: obj(3, cond("Resolved", "True", 3)), want: [true, true] },
  ])("$name", ({ o, want }) => {
    expect([isTrue(o, Resolved), isHealthy(o, Resolved)]).toEqual(want)
  })
})

describe("summarize", () => {
  it.each([
    {
      name: "is True when every input is healthy, abnormal-true ones False",
      o: obj(2, cond("Resolved", "True", 2), cond("Mirrored", "True", 2), cond("Stalled", "False", 2)),
      want: { status: "True", message: "" },
    },
    {
      name: "is False and names the first unhealthy input when one is unhealthy",
      o: obj(2, cond("Resolved", "False", 2, "CriteriaConflict"), cond("Mirrored", "True", 2), cond("Stalled", "True", 2, "AwaitingApproval")),
      want: {
        status: "False",
        message: "Resolved=False CriteriaConflict: Resolved says CriteriaConflict; Stalled=True AwaitingApproval: Stalled says AwaitingApproval",
      },
    },
    {
      name: "counts a missing input as Unknown, never as True",
      o: obj(2, cond("Resolved", "True", 2), cond("Stalled", "False", 2)),
      want: { status: "Unknown", message: "Waiting for Mirrored" },
    },
    {
      name: "counts a stale input as Unknown",
      o: obj(3, cond("Resolved", "True", 3), cond("Mirrored", "True", 2), cond("Stalled", "False", 3)),
      want: { status: "Unknown", message: "Waiting for Mirrored" },
    },
    {
      name: "prefers unhealthy inputs over unknown ones",
      o: obj(3, cond("Resolved", "False", 3, "Resolving")),
      want: { status: "False", message: "Resolved=False Resolving: Resolved says Resolving" },
    },
  ])("$name", ({ o, want }) => {
    expect(summarize(o, { of: [Resolved, Mirrored, Stalled] })).toMatchObject(want)
  })

  it("keeps the inputs in the order given", () => {
    const s = summarize(obj(1), { of: [Stalled, Resolved] })
    expect(s.conditions.map((c) => c.type)).toEqual(["Stalled", "Resolved"])
  })
})
