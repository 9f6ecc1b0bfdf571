import { describe, expect, it } from "vitest"
import { parseSettings } from "./config"

describe("parseSettings", () => {
  it("reads the flags with the chart's defaults", () => {
    const s = parseSettings(["--registry", "oci://123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr/c1", "--auth-provider=aws"], { POD_NAMESPACE: "ops" })
    expect(s).toMatchObject({
      provider: "aws",
      ecrHost: "123456789012.dkr.ecr.us-east-1.amazonaws.com",
      repoCreds: { namespace: "argocd", name: "aicr-registry" },
      dockerConfig: { namespace: "ops", name: "aicr-registry-docker-config" },
      refreshIntervalMs: 6 * 3_600_000,
    })
  })
  it("defaults to static and takes an ECR host override and an interval", () => {
    expect(
      parseSettings(
        ["--registry", "oci://127.0.0.1:5000/p", "--ecr-registry", "123456789012.dkr.ecr.eu-west-1.amazonaws.com", "--refresh-interval", "30m"],
        {},
      ),
    ).toMatchObject({
      provider: "static",
      ecrHost: "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
      refreshIntervalMs: 1_800_000,
    })
  })
  it.each([
    { argv: [], why: /--registry/u },
    { argv: ["--registry", "oci://r/p", "--auth-provider", "gcp"], why: /aws or static/u },
    { argv: ["--registry", "oci://r/p", "--repo-creds-secret", "Bad_Name"], why: /object name/u },
    { argv: ["--registry", "oci://r/p", "--nope"], why: /unknown argument/u },
    { argv: ["--registry", "oci://r/p", "--engine-namespace="], why: /--engine-namespace needs a value/u },
  ])("refuses $argv", ({ argv, why }) => {
    expect(() => parseSettings(argv, {})).toThrow(why)
  })
})
