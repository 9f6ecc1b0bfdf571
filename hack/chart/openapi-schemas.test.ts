import { describe, expect, it } from "vitest"
import { strict } from "./openapi-schemas"

describe("strict schemas from the API server's OpenAPI", () => {
  it("refuses unknown fields of every object with properties, nested ones too", () => {
    expect(strict({ type: "object", properties: { spec: { type: "object", properties: { replicas: { type: "integer" } } } } })).toEqual({
      type: "object",
      additionalProperties: false,
      properties: { spec: { type: "object", additionalProperties: false, properties: { replicas: { type: "integer" } } } },
    })
  })

  it("keeps maps, fields the API server preserves, and enums and defaults as they are", () => {
    const map = { type: "object", additionalProperties: { type: "string" } }
    const preserved = { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { a: { type: "string" } } }
    const withDefault = { type: "string", enum: ["a", "b"], default: { properties: { x: 1 } } }
    expect(strict(map)).toEqual(map)
    expect(strict(preserved)).toEqual(preserved)
    expect(strict(withDefault)).toEqual(withDefault)
  })

  it("turns OpenAPI's nullable into a JSON Schema type that admits null", () => {
    expect(strict({ type: "string", nullable: true })).toEqual({ type: ["string", "null"], nullable: true })
  })
})
