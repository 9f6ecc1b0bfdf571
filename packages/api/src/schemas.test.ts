import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { current, materialize } from "@aicr/conditions"
import { decodeClusterRuntime, deploymentValidationOf, type ClusterRuntimeStatus } from "./clusterruntime"
import { Resolved } from "./clusterruntime-conditions"
import { decodeRuntimeRollout } from "./runtimerollout"
import { eksClusterRuntime, installRollout } from "./samples"

const withSpec = (spec: Record<string, unknown>) => ({ ...eksClusterRuntime(), spec: { ...eksClusterRuntime().spec, ...spec } })

describe("ClusterRuntime schema", () => {
  it("decodes the EKS sample of the install guide", () => {
    expect(Result.isSuccess(decodeClusterRuntime(eksClusterRuntime()))).toBe(true)
  })

  it.each([
    { name: "accepts a pin by digest", spec: { pin: { desiredStateDigest: `sha256:${"a".repeat(64)}` } } },
    { name: "accepts overrides with component:dot.path", spec: { overrides: [{ path: "gpuoperator:driver.version", value: "580.105.08" }] } },
    { name: "accepts adoption of an earlier runtime UID", spec: { adoption: { fromRuntimeUID: "0b6f3d0e-7c1a-4d59-9a43-5c1f1f6a2e10" } } },
    { name: "accepts validation Disabled, pause and suspendEngine", spec: { validation: { deployment: "Disabled" }, paused: true, suspendEngine: true } },
  ])("$name", ({ spec }) => {
    expect(Result.isSuccess(decodeClusterRuntime(withSpec(spec)))).toBe(true)
  })

  it.each([
    { name: "refuses an upper-case intent", spec: { intent: "Training" } },
    { name: "refuses a pin that is not a sha256 digest", spec: { pin: { desiredStateDigest: "sha256:abc" } } },
    { name: "refuses an override path without a component", spec: { overrides: [{ path: "driver.version", value: "1" }] } },
    { name: "refuses an override value over 4 KiB", spec: { overrides: [{ path: "gpuoperator:a", value: "x".repeat(4097) }] } },
    { name: "refuses more than 64 overrides", spec: { overrides: Array.from({ length: 65 }, (_, i) => ({ path: `c:p${i}`, value: "1" })) } },
    { name: "refuses an empty nodeSelector", spec: { placement: { system: { nodeSelector: {} } } } },
    { name: "refuses a validation mode other than Required or Disabled", spec: { validation: { deployment: "Optional" } } },
    { name: "refuses an adoption UID that is not a UID", spec: { adoption: { fromRuntimeUID: "cluster" } } },
  ])("$name", ({ spec }) => {
    expect(Result.isFailure(decodeClusterRuntime(withSpec(spec)))).toBe(true)
  })

  it.each([
    { name: "reads an absent validation.deployment as Required", spec: {}, want: "Required" },
    { name: "reads Disabled as Disabled", spec: { validation: { deployment: "Disabled" as const } }, want: "Disabled" },
  ])("$name", ({ spec, want }) => {
    expect(deploymentValidationOf(spec)).toBe(want)
  })
})

describe("RuntimeRollout schema", () => {
  it("decodes a first-install rollout", () => {
    expect(Result.isSuccess(decodeRuntimeRollout(installRollout()))).toBe(true)
  })

  it.each([
    { name: "refuses an unknown kind", spec: { kind: "Reinstall" } },
    {
      name: "refuses an approval reason over 1024 characters",
      spec: {
        approval: {
          approvedBy: "bob",
          reason: "x".repeat(1025),
          approvedAt: "2026-12-02T10:00:00Z",
          expiresAt: "2026-12-02T12:00:00Z",
          toDigest: `sha256:${"a".repeat(64)}`,
        },
      },
    },
    {
      name: "refuses an empty approval reason",
      spec: {
        approval: {
          approvedBy: "bob",
          reason: "",
          approvedAt: "2026-12-02T10:00:00Z",
          expiresAt: "2026-12-02T12:00:00Z",
          toDigest: `sha256:${"a".repeat(64)}`,
        },
      },
    },
    { name: "refuses a deadline that is not RFC 3339", spec: { deadline: "tomorrow" } },
  ])("$name", ({ spec }) => {
    const r = installRollout()
    expect(Result.isFailure(decodeRuntimeRollout({ ...r, spec: { ...r.spec, ...spec } }))).toBe(true)
  })
})

describe("schemas work with @aicr/conditions", () => {
  it("reads a ClusterRuntime's conditions with current and writes materialized ones back", () => {
    const rt = { ...eksClusterRuntime(), metadata: { name: "cluster", generation: 2 } }
    const conditions = materialize([Resolved.true("InputsResolved", "Resolved inputs sha256:1111")], { generation: 2, now: "2026-12-02T10:00:00Z" })
    const status: ClusterRuntimeStatus = { conditions }
    expect(current({ ...rt, status }, Resolved)).toMatchObject({ status: "True", reason: "InputsResolved", current: true })
    expect(current({ ...rt, metadata: { ...rt.metadata, generation: 3 }, status }, Resolved).reason).toBe("Stale")
  })
})
