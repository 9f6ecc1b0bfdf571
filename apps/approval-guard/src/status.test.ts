import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { aRollout, anApproval, at, awaitingAck, T0 } from "../test/support/fixtures"
import { decide } from "./decide"
import type { Observed } from "./gather"
import { report, requeueOf } from "./status"

const observed = (rollout: Observed["rollout"], o: Partial<Observed> = {}): Observed => ({
  rollout,
  generation: 1,
  now: T0 + 5 * 60_000,
  approverRole: "aicr-operator-approver",
  operatorNamespaces: ["aicr-system"],
  approvers: { users: ["bob"], groups: ["aicr-approvers"], serviceAccounts: [] },
  approverAllowed: true,
  ...o,
})
const run = (o: Observed) => {
  const d = decide(o)
  const w = report(o, d)
  const c = w.conditions[0]!
  const r = requeueOf(o, d)
  return { c: `${c.status}/${c.reason}`, message: c.message, approval: w["approval"], after: r._tag === "After" ? Duration.toMillis(r.delay) : r._tag }
}

describe("report and requeue", () => {
  it("says who may approve, that the requester may not, and comes back at the deadline exactly", () => {
    expect(run(observed(aRollout()))).toEqual({
      c: "False/AwaitingApproval",
      message: `Waiting for an approval of plan 3f2a9c1d0e4b until ${at(60)}. May approve: users bob; groups aicr-approvers (ClusterRole aicr-operator-approver). alice requested this change and may not approve it. Run: kubectl aicr approve cluster-3f2a9c1d0e4b-1 --reason "…"`,
      approval: {},
      after: 55 * 60_000,
    })
  })

  it("says how to configure an approver when none is bound, and that the rollout expires at its deadline", () => {
    const r = run(observed(aRollout(), { approvers: { users: [], groups: [], serviceAccounts: [] } }))
    expect(r.c).toBe("False/AwaitingApproval")
    expect(r.message).toBe(
      `No approver is configured: bind the ClusterRole aicr-operator-approver to users or groups (chart values approvers.users, approvers.groups). Until then nobody can approve plan 3f2a9c1d0e4b, and the rollout expires at ${at(60)}`,
    )
  })

  it("approves until the approval's expiry and comes back then", () => {
    expect(run(observed(aRollout({ spec: { approval: anApproval() } })))).toEqual({
      c: "True/ApprovedByUser",
      message: `Approved by approver for plan 3f2a9c1d0e4b until ${at(31)}: Maintenance window`,
      approval: { approvedBy: "approver", validUntil: at(31) },
      after: 26 * 60_000,
    })
  })

  it("holds the rollout while a step waits for its acknowledgement and names the command", () => {
    const r = run(observed(aRollout({ spec: { approval: anApproval() }, status: { steps: { total: 2, done: 1, items: [awaitingAck("gpu-operator")] } } })))
    expect(r).toMatchObject({
      c: "False/AwaitingAcknowledgement",
      approval: { approvedBy: "approver", validUntil: at(31), pendingAcknowledgements: ["gpu-operator"] },
    })
    expect(r.message).toContain("kubectl aicr acknowledge cluster-3f2a9c1d0e4b-1 --step gpu-operator")
  })

  it("ends with RolloutExpired and RolloutRevoked, and waits only for changes after that", () => {
    expect(run(observed(aRollout(), { now: T0 + 60 * 60_000 }))).toMatchObject({ c: "False/RolloutExpired", after: "OnChange" })
    expect(run(observed(aRollout({ spec: { approval: anApproval() } }), { now: T0 + 40 * 60_000 }))).toMatchObject({
      c: "False/RolloutExpired",
      message: expect.stringContaining(`The approval expired at ${at(31)}`),
    })
    expect(run(observed(aRollout({ spec: { approval: anApproval(), revocation: { revokedBy: "bob", reason: "incident", revokedAt: at(2) } } })))).toMatchObject(
      {
        c: "False/RolloutRevoked",
        message: "Revoked by bob: incident. The step in flight finishes and nothing new starts; a retry is a new rollout with a new approval",
        after: "OnChange",
      },
    )
  })

  it("keeps the condition's transition time when only the message changes", () => {
    const o = observed(
      aRollout({
        status: {
          conditions: [{ type: "Approved", status: "False", reason: "AwaitingApproval", message: "old", lastTransitionTime: at(0), observedGeneration: 1 }],
        },
      }),
    )
    expect(report(o, decide(o)).conditions[0]!.lastTransitionTime).toBe(at(0))
  })
})
