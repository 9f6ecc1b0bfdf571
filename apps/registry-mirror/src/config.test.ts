import { describe, expect, it } from "vitest"
import { parseSettings } from "./config"

describe("parseSettings", () => {
  it("reads flags, repeatable ones included", () => {
    const s = parseSettings(
      [
        "--registry",
        "oci://127.0.0.1:5000/aicr/c1",
        "--plain-http=reg.local:5000",
        "--plain-http",
        "b:1,c:2",
        "--upstream-rewrite",
        "https://a=http://b",
        "--docker-config",
        "/etc/cfg.json",
        "--operator-namespace",
        "ops",
      ],
      {},
    )
    expect(s).toMatchObject({
      prefix: { registry: "127.0.0.1:5000", prefix: "aicr/c1" },
      plainHttp: ["reg.local:5000", "b:1", "c:2"],
      dockerConfig: "/etc/cfg.json",
      namespace: "ops",
      rewrites: [["https://a", "http://b"]],
      concurrency: 4,
    })
  })
  it("falls back to the environment", () => {
    const s = parseSettings([], {
      AICR_REGISTRY_REPOSITORY: "oci://r.example/p",
      AICR_UPSTREAM_REWRITES: "oci://ghcr.io=oci://l:1/ghcr.io,https://x=http://y",
      POD_NAMESPACE: "aicr-x",
    })
    expect(s).toMatchObject({
      prefix: { registry: "r.example", prefix: "p" },
      namespace: "aicr-x",
      rewrites: [
        ["oci://ghcr.io", "oci://l:1/ghcr.io"],
        ["https://x", "http://y"],
      ],
    })
  })
  it("reads the verify interval: 10m by default, a duration flag or env, at least 1s", () => {
    expect(parseSettings(["--registry", "oci://r/p"], {}).verifyIntervalMs).toBe(600_000)
    expect(parseSettings(["--registry", "oci://r/p", "--verify-interval", "2s"], {}).verifyIntervalMs).toBe(2_000)
    expect(parseSettings(["--registry", "oci://r/p"], { AICR_MIRROR_VERIFY_INTERVAL: "1h" }).verifyIntervalMs).toBe(3_600_000)
    expect(() => parseSettings(["--registry", "oci://r/p", "--verify-interval", "500ms"], {})).toThrow(/--verify-interval/)
    expect(() => parseSettings(["--registry", "oci://r/p", "--verify-interval", "soon"], {})).toThrow(/invalid duration/)
  })
  it("requires the registry prefix", () => expect(() => parseSettings([], {})).toThrow(/--registry/))
  it("refuses unknown arguments", () => expect(() => parseSettings(["--registry", "oci://r/p", "--bogus", "1"], {})).toThrow(/unknown argument --bogus/))
})
