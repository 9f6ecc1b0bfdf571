import { describe, expect, it } from "vitest"
import { parseSettings } from "./config"

describe("step-executor settings", () => {
  it("defaults, flags, environment and per-release timeouts", () => {
    expect(parseSettings([], {})).toEqual({
      namespace: "aicr-system",
      engineNamespace: "argocd",
      project: "aicr",
      stepTimeoutMs: 900_000,
      releaseTimeoutsMs: {},
      syncRetries: 2,
      engineStaleAfterMs: 600_000,
      componentPodSecurity: {},
    })
    expect(
      parseSettings(
        [
          "--engine-namespace",
          "gitops",
          "--step-timeout=90s",
          "--release-step-timeout",
          "gpu-operator=30m",
          "--release-step-timeout=x=1h",
          "--component-pod-security=gpu-operator=privileged",
          "--component-pod-security",
          "cert-manager=restricted",
        ],
        { AICR_ENGINE_PROJECT: "p" },
      ),
    ).toEqual({
      namespace: "aicr-system",
      engineNamespace: "gitops",
      project: "p",
      stepTimeoutMs: 90_000,
      releaseTimeoutsMs: { "gpu-operator": 1_800_000, x: 3_600_000 },
      syncRetries: 2,
      engineStaleAfterMs: 600_000,
      componentPodSecurity: { "gpu-operator": "privileged", "cert-manager": "restricted" },
    })
  })

  it("refuses what it cannot use, saying why", () => {
    expect(() => parseSettings(["--step-timeout", "soon"], {})).toThrow('--step-timeout must be a positive duration such as 90s, 10m or 1h (got "soon")')
    expect(() => parseSettings(["--release-step-timeout", "gpu-operator"], {})).toThrow("--release-step-timeout must be RELEASE=DURATION")
    expect(() => parseSettings(["--sync-retries", "-1"], {})).toThrow("--sync-retries must be a whole number from 0 to 10")
    expect(() => parseSettings(["--component-pod-security", "gpu-operator=open"], {})).toThrow(
      '--component-pod-security must be NAMESPACE=privileged|baseline|restricted (got "gpu-operator=open")',
    )
    expect(() => parseSettings(["--nope"], {})).toThrow("unknown argument --nope")
  })
})
