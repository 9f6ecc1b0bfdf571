// The resolver's flags: the version gate's allowances.
import { describe, expect, it } from "vitest"
import { parseSettings } from "./config"

const BASE = ["--registry", "oci://registry.example/aicr/cluster", "--component-namespaces", "gpu-operator"]

describe("parseSettings", () => {
  it("a 1.x release passes the gate with no allowance", () => {
    expect(parseSettings(["--aicr-version", "v1.1.2", ...BASE], {}).gate).toEqual({ _tag: "Supported" })
  })

  it("a 0.x AICR is refused unless the development allowance is given, by flag or environment", () => {
    expect(parseSettings(["--aicr-version", "v0.11.1", ...BASE], {}).gate).toMatchObject({
      _tag: "Refused",
      message: expect.stringContaining(">=1.0.0,<2.0.0"),
    })
    expect(parseSettings(["--aicr-version", "v0.11.1", "--allow-unsupported-aicr=true", ...BASE], {}).gate).toMatchObject({ _tag: "Allowed" })
    expect(parseSettings(["--aicr-version", "v0.11.1", ...BASE], { AICR_ALLOW_UNSUPPORTED_VERSION: "true" }).gate).toMatchObject({ _tag: "Allowed" })
    expect(
      parseSettings(["--aicr-version", "v0.11.1", "--allow-unsupported-aicr", "false", ...BASE], { AICR_ALLOW_UNSUPPORTED_VERSION: "true" }).gate,
    ).toMatchObject({ _tag: "Refused" })
  })

  it("a prerelease needs --allow-prerelease-aicr (AllowPrereleaseAICR)", () => {
    expect(parseSettings(["--aicr-version", "v1.2.0-rc0", ...BASE], {}).gate._tag).toBe("Refused")
    expect(parseSettings(["--aicr-version", "v1.2.0-rc0", "--allow-prerelease-aicr=true", ...BASE], {}).gate._tag).toBe("Supported")
    expect(parseSettings(["--aicr-version", "v1.2.0-rc0", ...BASE], { AICR_ALLOW_PRERELEASE: "true" }).gate._tag).toBe("Supported")
  })

  it("refuses to start without --component-namespaces (chart namespaces.components): never every namespace", () => {
    const want =
      "--component-namespaces (or AICR_COMPONENT_NAMESPACES) is required: every namespace the recipe may deploy into, comma-separated (chart namespaces.components)"
    expect(() => parseSettings(["--aicr-version", "v1.1.2", "--registry", "oci://registry.example/aicr/cluster"], {})).toThrow(want)
    expect(() => parseSettings(["--aicr-version", "v1.1.2", "--registry", "oci://registry.example/aicr/cluster", "--component-namespaces", " , "], {})).toThrow(
      want,
    )
    expect(
      parseSettings(
        [
          "--aicr-version",
          "v1.1.2",
          "--registry",
          "oci://registry.example/aicr/cluster",
          "--component-namespaces",
          "kube-system,gpu-operator",
          "--component-namespaces=gpu-operator",
        ],
        {},
      ).allowedNamespaces,
    ).toEqual(["gpu-operator", "kube-system"])
    expect(
      parseSettings(["--aicr-version", "v1.1.2", "--registry", "oci://registry.example/aicr/cluster"], { AICR_COMPONENT_NAMESPACES: "monitoring" })
        .allowedNamespaces,
    ).toEqual(["monitoring"])
  })

  it("refuses an allowance that is not a boolean", () => {
    expect(() => parseSettings(["--aicr-version", "v0.11.1", "--allow-unsupported-aicr=maybe", ...BASE], {})).toThrow(
      '--allow-unsupported-aicr must be true or false, not "maybe"',
    )
  })
})
