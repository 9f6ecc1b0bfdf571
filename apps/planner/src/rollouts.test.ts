import type { RuntimeRollout } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { reachedOutcome } from "./rollouts"

type Cond = readonly [type: string, status: "True" | "False" | "Unknown", reason: string, observedGeneration: number]

/** A rollout at `generation` carrying `conditions`, as the planner's cache shows it. */
const at = (generation: number, ...conditions: ReadonlyArray<Cond>): RuntimeRollout => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "RuntimeRollout",
  metadata: { name: "cluster-aaaaaaaaaaaa-1", generation, creationTimestamp: "2026-12-02T11:00:00Z" },
  spec: {
    runtimeUID: "0b5c7a52-3f0e-4a8e-9d0a-3c8e5b1f2a90",
    toDigest: `sha256:${"a".repeat(64)}`,
    kind: "Upgrade",
    deadline: "2026-12-03T11:00:00Z",
    requiresApproval: true,
    approval: {
      approvedBy: "bob",
      reason: "ok",
      approvedAt: "2026-12-02T11:10:00Z",
      expiresAt: "2026-12-02T17:00:00Z",
      toDigest: `sha256:${"a".repeat(64)}`,
    },
    ...(generation > 1 ? { revocation: { revokedBy: "bob", reason: "GPU incident", revokedAt: "2026-12-02T11:20:00Z" } } : {}),
  },
  status: {
    conditions: conditions.map(([type, status, reason, observedGeneration]) => ({
      type,
      status,
      reason,
      message: `${type} ${reason}`,
      observedGeneration,
      lastTransitionTime: "2026-12-02T11:00:00Z",
    })),
  },
})

describe("planner: a revoked or expired rollout ends only on the step-executor's current word that no step is in flight", () => {
  it("a revocation during a step: open while the executor's Progressing is of the generation before the revocation, and while the step is in flight; Revoked once the executor reports nothing may start", () => {
    const inFlight: Cond = ["Progressing", "True", "StepInProgress", 1]
    expect(reachedOutcome(at(1, ["Approved", "True", "ApprovedByUser", 1], inFlight), true)).toBeUndefined()
    // `kubectl aicr revoke` sets spec.revocation (generation 2) and the guard answers at once: the executor's word on
    // the step in flight is of generation 1 until its next pass, so it is stale, not "no step in flight".
    const revoked: Cond = ["Approved", "False", "RolloutRevoked", 2]
    expect(reachedOutcome(at(2, revoked, inFlight), true)).toBeUndefined()
    expect(reachedOutcome(at(2, revoked), true)).toBeUndefined()
    // The executor's next pass: the step is still in flight.
    expect(reachedOutcome(at(2, revoked, ["Progressing", "True", "StepInProgress", 2]), true)).toBeUndefined()
    // A defect in the executor says nothing about the step either.
    expect(reachedOutcome(at(2, revoked, ["Progressing", "Unknown", "InternalError", 2]), true)).toBeUndefined()
    // The step finished; nothing new may start.
    expect(reachedOutcome(at(2, revoked, ["Progressing", "False", "RolloutRevoked", 2]), true)).toBe("Revoked")
    // A revocation that came when every step was done (validation still to run).
    expect(reachedOutcome(at(2, revoked, ["Progressing", "True", "StepsCompleted", 2]), false)).toBe("Revoked")
  })

  it("an expiry: Expired once the executor reports for the rollout's generation that nothing may start", () => {
    const expired: Cond = ["Approved", "False", "RolloutExpired", 1]
    expect(reachedOutcome(at(1, expired), true)).toBeUndefined()
    expect(reachedOutcome(at(1, expired, ["Progressing", "True", "StepInProgress", 1]), true)).toBeUndefined()
    expect(reachedOutcome(at(1, expired, ["Progressing", "False", "AwaitingApproval", 0]), true)).toBeUndefined()
    expect(reachedOutcome(at(1, expired, ["Progressing", "False", "AwaitingApproval", 1]), true)).toBe("Expired")
    expect(reachedOutcome(at(1, expired, ["Progressing", "False", "RolloutExpired", 1]), true)).toBe("Expired")
  })

  it("Failed on the executor's current RolloutFailed, whatever the approval says", () => {
    expect(reachedOutcome(at(2, ["Approved", "False", "RolloutRevoked", 2], ["Progressing", "False", "RolloutFailed", 2]), true)).toBe("Failed")
    expect(reachedOutcome(at(1, ["Approved", "True", "ApprovedByUser", 1], ["Progressing", "False", "RolloutFailed", 1]), true)).toBe("Failed")
  })
})
