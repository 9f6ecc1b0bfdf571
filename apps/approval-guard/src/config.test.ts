import { describe, expect, it } from "vitest"
import { parseSettings } from "./config"

describe("parseSettings", () => {
  it("defaults to the approver role and the operator and validation namespaces", () => {
    expect(parseSettings([], {})).toEqual({ approverRole: "aicr-operator-approver", operatorNamespaces: ["aicr-system", "aicr-validation"] })
  })
  it("reads flags, then the environment", () => {
    expect(parseSettings(["--approver-role=r", "--operator-namespace", "ops"], {})).toEqual({
      approverRole: "r",
      operatorNamespaces: ["ops", "aicr-validation"],
    })
    expect(parseSettings([], { POD_NAMESPACE: "aicr" })).toEqual({ approverRole: "aicr-operator-approver", operatorNamespaces: ["aicr", "aicr-validation"] })
  })
  it("refuses unknown flags and missing values", () => {
    expect(() => parseSettings(["--nope"], {})).toThrow("unknown argument --nope")
    expect(() => parseSettings(["--approver-role"], {})).toThrow("--approver-role needs a value")
  })
})
