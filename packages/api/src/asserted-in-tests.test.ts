import { describe, expect, it } from "vitest"
import { assertedIn, assertionsIn } from "./asserted-in-tests"

const file = (text: string) => ({ path: "apps/x/test/x.int.test.ts", text })

describe("assertionsIn", () => {
  it("finds expectCondition and untilCondition calls with literal type, status and reason, with their test's title", () => {
    const text = `
      import { expectCondition, untilCondition } from "@aicr/testing/harness"
      describe("d", () => {
        it("engine gone", async () => {
          const c = await untilCondition(read, "Ready", "False", "EngineMissing", { timeoutMs: 1 })
          expectCondition(await read(), 'Stalled', "True", \`EngineMissing\`)
        })
        it.each(cases)("case $name", async () => {
          h.expectCondition(x, "Planned", "True", "PlanComputed")
        })
        it(\`templated \${name}\`, () => expectCondition(x, "Mirrored", "False", "Conflict"))
      })
      expectCondition(top, "Ready", "True", "RolledOut")
    `
    expect(assertionsIn(file(text)).map((a) => [a.type, a.status, a.reason, a.test])).toEqual([
      ["Ready", "False", "EngineMissing", "engine gone"],
      ["Stalled", "True", "EngineMissing", "engine gone"],
      ["Planned", "True", "PlanComputed", "case $name"],
      ["Mirrored", "False", "Conflict", "templated ${name}"],
      ["Ready", "True", "RolledOut", undefined],
    ])
  })

  it("does not count calls whose type, status or reason is not a literal, nor other functions or plain text", () => {
    const text = `
      it("t", async () => {
        expectCondition(x, type, "False", "EngineMissing")
        await untilCondition(read, "Ready", status, "EngineMissing")
        expectCondition(x, "Ready", "False", reason)
        waitFor("Ready", "False", "EngineMissing")
        expect(c).toMatchObject({ type: "Ready", status: "False", reason: "EngineMissing" })
        // expectCondition(x, "Ready", "False", "EngineMissing")
        const s = 'expectCondition(x, "Ready", "False", "Unauthorized")'
      })
    `
    expect(assertionsIn(file(text))).toEqual([])
  })

  it("counts a test once however often it asserts the same reason", () => {
    const text = `it("t", () => { expectCondition(a, "Ready", "False", "Paused"); expectCondition(b, "Ready", "False", "Paused") })`
    expect(assertedIn([file(text)]).of("Ready", "False", "Paused")).toEqual([
      { type: "Ready", status: "False", reason: "Paused", path: "apps/x/test/x.int.test.ts", test: "t" },
    ])
  })
})
