import { describe, expect, it } from "vitest"
import { aRollout, anApproval, at, awaitingAck, T0, TO } from "../test/support/fixtures"
import { approversOf } from "./access"
import { decide, type Decision } from "./decide"
import type { Observed } from "./gather"

const approvers = { users: ["bob"], groups: ["aicr-approvers"], serviceAccounts: [] }
const observed = (rollout: Observed["rollout"], o: Partial<Observed> = {}): Observed => ({
  rollout,
  generation: rollout.metadata.generation,
  now: T0 + 5 * 60_000,
  approverRole: "aicr-operator-approver",
  operatorNamespaces: ["aicr-system", "aicr-validation"],
  approvers,
  approverAllowed: true,
  ...o,
})
const min = (m: number) => T0 + m * 60_000

describe("decide", () => {
  const cases: Array<{ name: string; given: Observed; want: Decision | { _tag: string } }> = [
    {
      name: "waits for an approval before the deadline, with the approvers",
      given: observed(aRollout()),
      want: { _tag: "Awaiting", deadline: min(60), approvers },
    },
    {
      name: "expires an unapproved rollout at its deadline exactly",
      given: observed(aRollout(), { now: min(60) }),
      want: { _tag: "Expired", cause: "deadline", at: min(60) },
    },
    {
      name: "needs nothing when spec.requiresApproval is false",
      given: observed(aRollout({ spec: { requiresApproval: false } })),
      want: { _tag: "NotRequired" },
    },
    {
      name: "counts an approval bound to the target by an allowed approver, valid until its expiry",
      given: observed(aRollout({ spec: { approval: anApproval() } })),
      want: { _tag: "Approved", by: "approver", reason: "Maintenance window", validUntil: min(31), pending: [] },
    },
    {
      name: "expires an approval mid-rollout at expiresAt",
      given: observed(aRollout({ spec: { approval: anApproval() } }), { now: min(31) }),
      want: { _tag: "Expired", cause: "approval", at: min(31) },
    },
    {
      name: "caps validity at the deadline",
      given: observed(aRollout({ spec: { deadline: at(20), approval: anApproval() } })),
      want: { _tag: "Approved", by: "approver", reason: "Maintenance window", validUntil: min(20), pending: [] },
    },
    {
      name: "revocation wins over a valid approval",
      given: observed(aRollout({ spec: { approval: anApproval(), revocation: { revokedBy: "bob", reason: "incident", revokedAt: at(3) } } })),
      want: { _tag: "Revoked", by: "bob", reason: "incident" },
    },
    {
      name: "refuses an approval by the requester (admission refuses it too)",
      given: observed(aRollout({ spec: { approval: anApproval({ approvedBy: "alice" }) } })),
      want: {
        _tag: "Refused",
        message: "The approval by alice does not count: alice made the runtime edit that produced this rollout, and nobody approves their own change",
      },
    },
    {
      name: "refuses an approval bound to another plan",
      given: observed(aRollout({ spec: { approval: anApproval({ toDigest: `sha256:${"9".repeat(64)}` }) } })),
      want: {
        _tag: "Refused",
        message: `The approval by approver binds plan sha256:${"9".repeat(64)}, not this rollout's target ${TO}; a new approval is needed`,
      },
    },
    {
      name: "refuses an approval by an operator identity",
      given: observed(aRollout({ spec: { approval: anApproval({ approvedBy: "system:serviceaccount:aicr-system:aicr-planner" }) } })),
      want: { _tag: "Refused", message: "The approval by system:serviceaccount:aicr-system:aicr-planner does not count: operator identities never approve" },
    },
    {
      name: "refuses an approval whose approver the authorizer does not allow",
      given: observed(aRollout({ spec: { approval: anApproval() } }), { approverAllowed: false }),
      want: {
        _tag: "Refused",
        message:
          "The approval by approver does not count: approver (groups aicr-approvers, system:authenticated) does not hold the verb approve on runtimerollouts (ClusterRole aicr-operator-approver)",
      },
    },
    {
      name: "a refused approval still expires at the deadline",
      given: observed(aRollout({ spec: { approval: anApproval({ approvedBy: "alice" }) } }), { now: min(61) }),
      want: { _tag: "Expired", cause: "deadline", at: min(60) },
    },
    {
      name: "lists steps waiting for acknowledgement, sorted, without those acknowledged",
      given: observed(
        aRollout({
          spec: { approval: anApproval(), acknowledgements: [{ step: "kai-scheduler", acknowledgedBy: "bob", at: at(4) }] },
          status: { steps: { total: 3, done: 1, items: [awaitingAck("nvsentinel", 2), awaitingAck("kai-scheduler", 1), awaitingAck("grove", 3)] } },
        }),
      ),
      want: { _tag: "Approved", by: "approver", reason: "Maintenance window", validUntil: min(31), pending: ["grove", "nvsentinel"] },
    },
    {
      name: "keeps an ended rollout's Approved as it was",
      given: observed(
        aRollout({
          labels: { "operator.aicr.run/outcome": "Succeeded" },
          spec: { approval: anApproval() },
          status: { conditions: [{ type: "Approved", status: "True", reason: "ApprovedByUser", message: "m", lastTransitionTime: at(1) }] },
        }),
        { now: min(90) },
      ),
      want: { _tag: "Closed" },
    },
  ]
  it.each(cases)("$name", ({ given, want }) => expect(decide(given)).toEqual(want))
})

describe("approversOf", () => {
  it("collects the subjects of bindings to the approver role only, sorted and de-duplicated", () => {
    const b = (role: string, subjects: Array<{ kind: string; name: string; namespace?: string }>) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: role },
      roleRef: { kind: "ClusterRole", name: role },
      subjects,
    })
    expect(
      approversOf(
        [
          b("aicr-operator-approver", [
            { kind: "User", name: "carol" },
            { kind: "Group", name: "g" },
            { kind: "User", name: "bob" },
          ]),
          b("aicr-operator-approver", [
            { kind: "User", name: "bob" },
            { kind: "ServiceAccount", name: "ci", namespace: "ci" },
          ]),
          b("view", [{ kind: "User", name: "mallory" }]),
        ],
        "aicr-operator-approver",
      ),
    ).toEqual({ users: ["bob", "carol"], groups: ["g"], serviceAccounts: ["ci/ci"] })
  })
})
