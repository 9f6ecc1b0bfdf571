import { describe, expect, it } from "vitest"
import { toStructural, unbounded } from "./structural"

describe("toStructural", () => {
  it.each([
    {
      name: "flattens allOf check groups into the node",
      given: { type: "string", pattern: "^a$", allOf: [{ maxLength: 3, description: "d" }] },
      want: { description: "d", type: "string", pattern: "^a$", maxLength: 3 },
    },
    {
      name: "concatenates CEL rules found in allOf",
      given: {
        type: "array",
        items: { type: "string", maxLength: 1 },
        "x-kubernetes-validations": [{ rule: "a" }],
        allOf: [{ maxItems: 2, "x-kubernetes-validations": [{ rule: "b" }] }],
      },
      want: { type: "array", maxItems: 2, items: { type: "string", maxLength: 1 }, "x-kubernetes-validations": [{ rule: "a" }, { rule: "b" }] },
    },
    {
      name: "drops additionalProperties beside properties and empty required lists",
      given: { type: "object", properties: { a: { type: "boolean" } }, required: [], additionalProperties: false },
      want: { type: "object", properties: { a: { type: "boolean" } } },
    },
    {
      name: "inlines $ref from the definitions",
      given: { $ref: "#/$defs/X", description: "outer" },
      defs: { X: { type: "boolean" } },
      want: { description: "outer", type: "boolean" },
    },
    {
      name: "drops propertyNames of maps, which CEL checks instead",
      given: { type: "object", propertyNames: { pattern: "x" }, additionalProperties: { type: "string", maxLength: 1 }, maxProperties: 1 },
      want: { type: "object", maxProperties: 1, additionalProperties: { type: "string", maxLength: 1 } },
    },
    {
      name: "drops the safe-integer bounds effect adds to Int",
      given: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      want: { type: "integer", minimum: 0 },
    },
  ])("$name", ({ given, defs, want }) => {
    expect(toStructural(given, defs ?? {})).toStrictEqual(want)
  })

  it.each([
    { name: "refuses anyOf, which is not structural", given: { anyOf: [{ type: "string" }, { type: "null" }] }, want: /anyOf/ },
    { name: "refuses a node without a type", given: { description: "x" }, want: /no type/ },
    { name: "refuses an open object without properties", given: { type: "object", additionalProperties: true }, want: /needs properties/ },
    { name: "refuses conflicting bounds in allOf", given: { type: "string", maxLength: 1, allOf: [{ maxLength: 2 }] }, want: /conflicting maxLength/ },
    { name: "refuses an unresolved $ref", given: { $ref: "#/$defs/Nope" }, want: /unresolved/ },
  ])("$name", ({ given, want }) => {
    expect(() => toStructural(given)).toThrow(want)
  })
})

describe("unbounded", () => {
  it("names every string, list and map without a bound", () => {
    const schema = {
      type: "object",
      properties: {
        s: { type: "string" },
        e: { type: "string", enum: ["a"] },
        l: { type: "array", items: { type: "string", maxLength: 1 } },
        m: { type: "object", additionalProperties: { type: "string" } },
      },
    }
    expect(unbounded(schema)).toEqual([
      "$.s: string without maxLength",
      "$.l: list without maxItems",
      "$.m: map without maxProperties",
      "$.m.*: string without maxLength",
    ])
  })
})
