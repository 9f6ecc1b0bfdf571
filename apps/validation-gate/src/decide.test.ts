import type { ClusterRuntime, RuntimeRollout } from "@aicr/api"
import { current } from "@aicr/conditions"
import { describe, expect, it } from "vitest"
import type { GateSettings } from "./config"
import { decide } from "./decide"
import type { Observed } from "./gather"

const settings: GateSettings = {
  registry: "oci://r/aicr/cluster",
  prefix: { registry: "r", prefix: "aicr/cluster" },
  plainHttp: [],
  dockerConfig: undefined,
  namespace: "aicr-system",
  validationNamespace: "aicr-validation",
  launcher: "aicr-validation",
  deadlineSeconds: 1500,
  signingKey: undefined,
}
const D = "sha256:" + "1".repeat(64)
const cond = (type: string, status: string, reason: string, message = "m") => ({
  type,
  status,
  reason,
  message,
  observedGeneration: 1,
  lastTransitionTime: "2026-12-03T07:00:00Z",
})
const rollout = (o: { kind?: string; labels?: Record<string, string>; conditions?: ReturnType<typeof cond>[]; validation?: Record<string, unknown> } = {}) =>
  ({
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "RuntimeRollout",
    metadata: { name: "cluster-111111111111-1", uid: "r1", generation: 1, ...(o.labels ? { labels: o.labels } : {}) },
    spec: { runtimeUID: "u1", toDigest: D, kind: o.kind ?? "Install", deadline: "2026-12-04T00:00:00Z", requiresApproval: true },
    status: { conditions: o.conditions ?? [], ...(o.validation ? { validation: o.validation } : {}) },
  }) as unknown as RuntimeRollout
const runtime = { metadata: { name: "cluster", uid: "u1" }, spec: {} } as unknown as ClusterRuntime
const observed = (r: RuntimeRollout, over: Partial<Observed> = {}): Observed => ({
  rollout: r,
  runtime,
  mode: "Required",
  missing: [],
  progressing: current(r, { type: "Progressing" }),
  validation: r.status?.validation,
  settings,
  now: 0,
  ...over,
})

describe("validation-gate decide", () => {
  it("leaves alone an ended rollout, another runtime's, and a Remove rollout (the runtime's deletion)", () => {
    expect(decide(observed(rollout({ labels: { "operator.aicr.run/outcome": "Succeeded" } })))._tag).toBe("LeaveAlone")
    expect(decide(observed(rollout(), { runtime: undefined }))._tag).toBe("LeaveAlone")
    expect(
      decide(observed(rollout({ kind: "Remove" }), { missing: ["ServiceAccount aicr-validation/aicr-validation (the validation launcher) does not exist"] })),
    ).toEqual({ _tag: "LeaveAlone", why: "a Remove rollout leaves nothing to validate" })
  })

  it("Disabled: ready, whatever is installed", () => {
    expect(decide(observed(rollout(), { mode: "Disabled", missing: undefined }))._tag).toBe("Disabled")
  })

  it("Required and not installed: ValidationUnavailable naming everything missing and both ways out", () => {
    const missing = [
      "ServiceAccount aicr-validation/aicr-validation may not create Jobs in namespace aicr-validation (its Role binding is missing)",
      "AICR's validators have no cluster-wide rights",
    ]
    const d = decide(observed(rollout(), { missing }))
    expect(d._tag).toBe("Unavailable")
    const message = (d as { message: string }).message
    expect(message).toContain(`not installed: ${missing[0]}; ${missing[1]}. `)
    expect(message).toContain("validation.enabled: true")
    expect(message).toContain("spec.validation.deployment: Disabled")
  })

  it("waits for every step, then validates", () => {
    expect(decide(observed(rollout({ conditions: [cond("Progressing", "True", "StepInProgress")] })))._tag).toBe("AwaitSteps")
    expect(decide(observed(rollout({ conditions: [cond("Progressing", "True", "StepsCompleted")] })))._tag).toBe("Validate")
  })

  it("keeps a verdict once reached: never re-runs a passed or a terminally failed validation", () => {
    const done = [cond("Progressing", "True", "StepsCompleted")]
    expect(decide(observed(rollout({ conditions: [...done, cond("Validated", "True", "ValidationPassed")], validation: { result: "Passed" } })))).toMatchObject(
      { _tag: "Keep", reason: "ValidationPassed" },
    )
    expect(decide(observed(rollout({ conditions: [...done, cond("Validated", "False", "ValidationIncomplete")] })))).toMatchObject({
      _tag: "Keep",
      reason: "ValidationIncomplete",
    })
    // Validating is not a verdict: the run goes on.
    expect(decide(observed(rollout({ conditions: [...done, cond("Validated", "False", "Validating")] })))._tag).toBe("Validate")
  })
})
