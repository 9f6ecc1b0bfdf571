import { describe, expect, it } from "vitest"
import { parseConfig, parseDurationMs, parseJobSeconds } from "./config"

describe("parseConfig", () => {
  it("defaults to operator.md §4.1: :8080, :8081, leader election on aicr-<app>, 15 s / 10 s / 2 s, 30 s shutdown", () => {
    const c = parseConfig("approval-guard", [], {})
    expect(c).toMatchObject({
      metricsBindAddress: ":8080",
      healthProbeBindAddress: ":8081",
      leaderElect: true,
      leaderElectionId: "aicr-approval-guard",
      leaderElectionNamespace: "aicr-system",
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      gracefulShutdownMs: 30_000,
      logLevel: "info",
      kubeApiQps: 20,
      kubeApiBurst: 30,
      inCluster: false,
      kubeconfig: undefined,
    })
  })

  it("reads flags before environment variables and leaves unknown arguments for the app", () => {
    const c = parseConfig("planner", ["--kubeconfig=/k", "--leader-elect=false", "--log-level", "debug", "--stabilization=5m", "--metrics-bind-address=0"], {
      LOG_LEVEL: "warn",
      POD_NAMESPACE: "ops",
      POD_NAME: "planner-0",
    })
    expect(c).toMatchObject({
      kubeconfig: "/k",
      leaderElect: false,
      logLevel: "debug",
      leaderElectionNamespace: "ops",
      metricsBindAddress: "0",
      rest: ["--stabilization=5m"],
    })
    expect(c.identity).toMatch(/^planner-0_/)
  })

  it("uses in-cluster config when there is no kubeconfig and the service host is set", () => {
    expect(parseConfig("x", [], { KUBERNETES_SERVICE_HOST: "10.0.0.1" }).inCluster).toBe(true)
    expect(parseConfig("x", ["--kubeconfig", "/k"], { KUBERNETES_SERVICE_HOST: "10.0.0.1" }).inCluster).toBe(false)
  })

  it("refuses a bad log level or duration", () => {
    expect(() => parseConfig("x", ["--log-level=loud"], {})).toThrow(/log level/)
    expect(() => parseDurationMs("soon")).toThrow(/duration/)
    expect([parseDurationMs("15s"), parseDurationMs("500ms"), parseDurationMs("2m"), parseDurationMs("3")]).toEqual([15_000, 500, 120_000, 3_000])
  })
})

describe("parseJobSeconds", () => {
  it("takes whole seconds from 30 to 86400, the fallback when unset, and names the flag otherwise", () => {
    expect(parseJobSeconds(undefined, 600, "job-deadline")).toBe(600)
    expect(parseJobSeconds("900", 600, "job-deadline")).toBe(900)
    for (const bad of ["29", "86401", "1.5", "ten"])
      expect(() => parseJobSeconds(bad, 600, "job-ttl")).toThrow(/--job-ttl must be a whole number of seconds from 30 to 86400/)
  })
})
