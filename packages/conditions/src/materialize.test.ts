import { describe, expect, it } from "vitest"
import type { Condition, ConditionIntent } from "./condition"
import { equalIgnoringOrder, isSame, isUpToDate, materialize, toConditionTime } from "./materialize"

const T0 = "2026-12-01T08:00:00Z"
const NOW = "2026-12-02T10:11:12.987Z"
const NOW_S = "2026-12-02T10:11:12Z"

const wire = (c: Partial<Condition> & Pick<Condition, "type" | "status">): Condition => ({
  observedGeneration: 1,
  lastTransitionTime: T0,
  reason: "Some",
  message: "m",
  ...c,
})
const intent = (type: string, status: Condition["status"], reason = "Some", message = "m"): ConditionIntent => ({ type, status, reason, message })

describe("materialize", () => {
  it.each([
    {
      name: "stamps a new condition with now, truncated to whole seconds in UTC",
      intents: [intent("Resolved", "Unknown", "NotYetObserved")],
      existing: [],
      want: [{ type: "Resolved", status: "Unknown", reason: "NotYetObserved", lastTransitionTime: NOW_S, observedGeneration: 4 }],
    },
    {
      name: "keeps lastTransitionTime when only the reason and message change",
      intents: [intent("Resolved", "False", "CriteriaConflict", "new")],
      existing: [wire({ type: "Resolved", status: "False", reason: "Resolving", message: "old" })],
      want: [{ status: "False", reason: "CriteriaConflict", message: "new", lastTransitionTime: T0, observedGeneration: 4 }],
    },
    {
      name: "moves lastTransitionTime to now when the status changes",
      intents: [intent("Resolved", "True")],
      existing: [wire({ type: "Resolved", status: "False" })],
      want: [{ status: "True", lastTransitionTime: NOW_S }],
    },
    {
      name: "ignores other writers' conditions",
      intents: [intent("Mirrored", "True")],
      existing: [wire({ type: "Resolved", status: "True" })],
      want: [{ type: "Mirrored", lastTransitionTime: NOW_S }],
    },
  ])("$name", ({ intents, existing, want }) => {
    const got = materialize(intents, { existing, generation: 4, now: NOW })
    expect(got).toHaveLength(want.length)
    want.forEach((w, i) => expect(got[i]).toMatchObject(w))
  })

  it("leaves observedGeneration out when the object has no generation", () => {
    expect(materialize([intent("Ready", "True")], { generation: undefined, now: NOW })[0]).not.toHaveProperty("observedGeneration")
  })

  it("refuses two intents of the same type in one pass", () => {
    expect(() => materialize([intent("Ready", "True"), intent("Ready", "False")], { generation: 1, now: NOW })).toThrow(/set twice/)
  })
})

describe("toConditionTime", () => {
  it.each([
    { name: "truncates milliseconds", given: "2026-12-02T10:11:12.999Z", want: "2026-12-02T10:11:12Z" },
    { name: "converts an offset to UTC", given: "2026-12-02T11:11:12+01:00", want: "2026-12-02T10:11:12Z" },
    { name: "accepts epoch milliseconds", given: 1_000_999, want: "1970-01-01T00:16:40Z" },
  ])("$name", ({ given, want }) => {
    expect(toConditionTime(given)).toBe(want)
  })

  it("refuses an invalid time", () => {
    expect(() => toConditionTime("yesterday")).toThrow(/Invalid time/)
  })
})

describe("comparisons that skip no-op writes", () => {
  const a = wire({ type: "Ready", status: "True" })
  const b = wire({ type: "Mirrored", status: "False" })
  it.each([
    { name: "the same condition is the same", x: a, y: { ...a }, want: true },
    { name: "the same instant written with an offset is the same", x: a, y: { ...a, lastTransitionTime: "2026-12-01T09:00:00+01:00" }, want: true },
    { name: "another message is not the same", x: a, y: { ...a, message: "other" }, want: false },
    { name: "another observedGeneration is not the same", x: a, y: { ...a, observedGeneration: 2 }, want: false },
    { name: "a missing observedGeneration is not the same as 1", x: a, y: { ...a, observedGeneration: undefined }, want: false },
  ])("isSame: $name", ({ x, y, want }) => {
    expect(isSame(x, y as Condition)).toBe(want)
  })

  it.each([
    { name: "lists with the same conditions in another order are equal", x: [a, b], y: [b, a], want: true },
    { name: "a list with one more condition is not equal", x: [a], y: [a, b], want: false },
  ])("equalIgnoringOrder: $name", ({ x, y, want }) => {
    expect(equalIgnoringOrder(x, y)).toBe(want)
  })

  it.each([
    { name: "desired conditions already on the object need no write", desired: [a], existing: [b, a], want: true },
    { name: "a changed desired condition needs a write", desired: [{ ...a, reason: "Other" }], existing: [a], want: false },
    { name: "a desired condition missing from the object needs a write", desired: [a], existing: undefined, want: false },
  ])("isUpToDate: $name", ({ desired, existing, want }) => {
    expect(isUpToDate(desired, existing)).toBe(want)
  })
})
