// The version gate of operator.md §4.3 step 3 on the pinned AICR version, by case.
import { describe, expect, it } from "vitest"
import { capabilitiesOf, SUPPORTED_AICR_RANGE, versionGate } from "./capabilities"

const gate = (version: string, allow: { prerelease?: boolean; outsideRange?: boolean } = {}) =>
  versionGate(capabilitiesOf(version)!, { prerelease: allow.prerelease ?? false, outsideRange: allow.outsideRange ?? false })

describe("versionGate", () => {
  it.each(["v1.0.0", "1.1.2", "v1.99.3"])("passes the release %s", (v) => {
    expect(gate(v)).toEqual({ _tag: "Supported" })
  })

  it.each(["v0.11.1", "v0.10.16", "v2.0.0", "v3.1.0"])("refuses %s with the range in the message and what to change", (v) => {
    const g = gate(v)
    expect(g._tag).toBe("Refused")
    expect(g).toMatchObject({ message: expect.stringContaining(`outside the supported range ${SUPPORTED_AICR_RANGE}`) })
    expect(g).toMatchObject({ message: expect.stringContaining("aicr.allowUnsupportedVersion") })
  })

  it("refuses a prerelease without the prerelease allowance, and passes it with it", () => {
    expect(gate("v1.2.0-rc0")).toEqual({ _tag: "Refused", message: expect.stringMatching(/^AICR 1\.2\.0-rc0 is a prerelease: .*aicr\.allowPrerelease/) })
    expect(gate("v1.2.0-rc0", { prerelease: true })).toEqual({ _tag: "Supported" })
  })

  it("keeps 2.0.0's prereleases and 1.0.0's out of the range even with the prerelease allowance", () => {
    expect(gate("v2.0.0-rc0", { prerelease: true })._tag).toBe("Refused")
    expect(gate("v1.0.0-rc1", { prerelease: true })._tag).toBe("Refused")
  })

  it("lets 0.x through only with the development allowance, and says so", () => {
    expect(gate("v0.11.1", { outsideRange: true })).toEqual({
      _tag: "Allowed",
      note: `AICR 0.11.1 is outside the supported range ${SUPPORTED_AICR_RANGE}, allowed for development only (aicr.allowUnsupportedVersion)`,
    })
    // The development allowance is not a prerelease allowance.
    expect(gate("v0.12.0-rc1", { outsideRange: true })._tag).toBe("Refused")
    expect(gate("v0.12.0-rc1", { outsideRange: true, prerelease: true })._tag).toBe("Allowed")
  })
})
