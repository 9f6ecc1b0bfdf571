import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeCondition } from "./condition"

const valid = {
  type: "Ready",
  status: "True",
  observedGeneration: 3,
  lastTransitionTime: "2026-12-02T10:00:00Z",
  reason: "RolledOut",
  message: "Plan 3f2a9c1d0b7e rolled out",
}

describe("Condition wire schema", () => {
  it.each([
    { name: "accepts a complete condition", given: valid },
    { name: "accepts a condition without observedGeneration", given: { ...valid, observedGeneration: undefined } },
    { name: "accepts a prefixed type", given: { ...valid, type: "operator.aicr.run/Ready" } },
    { name: "accepts an empty message", given: { ...valid, message: "" } },
    { name: "accepts a time with fractional seconds and an offset", given: { ...valid, lastTransitionTime: "2026-12-02T10:00:00.123+01:00" } },
    { name: "accepts a reason with commas, colons and underscores", given: { ...valid, reason: "A_b,c:D" } },
  ])("$name", ({ given }) => {
    const input = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined))
    expect(Result.isSuccess(decodeCondition(input))).toBe(true)
  })

  it.each([
    { name: "refuses a status other than True, False or Unknown", given: { ...valid, status: "true" } },
    { name: "refuses an empty reason", given: { ...valid, reason: "" } },
    { name: "refuses a reason that starts with a digit", given: { ...valid, reason: "1Ready" } },
    { name: "refuses a reason that ends with a comma", given: { ...valid, reason: "Ready," } },
    { name: "refuses a reason longer than 1024 characters", given: { ...valid, reason: "A".repeat(1025) } },
    { name: "refuses a type longer than 316 characters", given: { ...valid, type: "A".repeat(317) } },
    { name: "refuses a type with a space", given: { ...valid, type: "Not Ready" } },
    { name: "refuses a message longer than 32768 characters", given: { ...valid, message: "x".repeat(32769) } },
    { name: "refuses a negative observedGeneration", given: { ...valid, observedGeneration: -1 } },
    { name: "refuses a fractional observedGeneration", given: { ...valid, observedGeneration: 1.5 } },
    { name: "refuses a lastTransitionTime that is not RFC 3339", given: { ...valid, lastTransitionTime: "2026-12-02 10:00:00" } },
    { name: "refuses a condition without lastTransitionTime", given: { ...valid, lastTransitionTime: undefined } },
  ])("$name", ({ given }) => {
    const input = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined))
    expect(Result.isFailure(decodeCondition(input))).toBe(true)
  })
})
