/**
 * decide: pure. May this rollout proceed now? From what gather observed; no I/O.
 *
 * - revoked → `Revoked` (the step in flight finishes, nothing new starts);
 * - no approval needed → `NotRequired`;
 * - no approval yet → `Awaiting` until `spec.deadline`, then `Expired` (`RolloutExpired`);
 * - an approval counts only when it binds `spec.toDigest`, does not come from the requester nor from an operator
 *   identity, and its approver holds the `approve` verb (the authorizer's answer); otherwise `Refused`;
 * - a counted approval is void from `min(expiresAt, deadline)` → `Expired`; before that, steps applied and waiting
 *   for their manual post-apply actions (step state `AwaitingAcknowledgement`) without an acknowledgement make it
 *   `AwaitingAcknowledgement`; each acknowledgement releases its step;
 * - a rollout with an outcome label has ended: its `Approved` stays as it was (`Closed`).
 *
 * The next pass is due at the exact instant the answer changes by itself (deadline or expiry), never by polling.
 */
import { LABEL_OUTCOME, type RuntimeRollout } from "@aicr/api"
import type { Approvers } from "./access"
import type { Observed } from "./gather"

export type Decision =
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Revoked"; readonly by: string; readonly reason: string }
  | { readonly _tag: "NotRequired" }
  | { readonly _tag: "Awaiting"; readonly deadline: number; readonly approvers: Approvers | undefined }
  | { readonly _tag: "Expired"; readonly cause: "deadline" | "approval"; readonly at: number }
  | { readonly _tag: "Refused"; readonly message: string }
  | { readonly _tag: "Approved"; readonly by: string; readonly reason: string; readonly validUntil: number; readonly pending: ReadonlyArray<string> }

export type ApprovalCheck = { readonly _tag: "Valid" } | { readonly _tag: "Invalid"; readonly message: string }

const isOperatorIdentity = (user: string, namespaces: ReadonlyArray<string>) => namespaces.some((ns) => user.startsWith(`system:serviceaccount:${ns}:`))

/** Whether spec.approval counts, by what the rollout itself says and the authorizer's answer (pure). */
export const approvalCheck = (o: Pick<Observed, "rollout" | "operatorNamespaces" | "approverAllowed" | "approverRole">): ApprovalCheck => {
  const { spec } = o.rollout
  const a = spec.approval
  if (a === undefined) return { _tag: "Invalid", message: "no approval" }
  if (a.toDigest !== spec.toDigest)
    return {
      _tag: "Invalid",
      message: `The approval by ${a.approvedBy} binds plan ${a.toDigest}, not this rollout's target ${spec.toDigest}; a new approval is needed`,
    }
  if (spec.requestedBy !== undefined && a.approvedBy === spec.requestedBy) {
    return {
      _tag: "Invalid",
      message: `The approval by ${a.approvedBy} does not count: ${a.approvedBy} made the runtime edit that produced this rollout, and nobody approves their own change`,
    }
  }
  if (isOperatorIdentity(a.approvedBy, o.operatorNamespaces))
    return { _tag: "Invalid", message: `The approval by ${a.approvedBy} does not count: operator identities never approve` }
  if (o.approverAllowed === false) {
    return {
      _tag: "Invalid",
      message: `The approval by ${a.approvedBy} does not count: ${a.approvedBy} (groups ${(a.groups ?? []).join(", ") || "none recorded"}) does not hold the verb approve on runtimerollouts (ClusterRole ${o.approverRole})`,
    }
  }
  return { _tag: "Valid" }
}

/** Steps waiting for their manual post-apply actions without an acknowledgement, sorted. */
export const pendingAcknowledgements = (rollout: RuntimeRollout): ReadonlyArray<string> => {
  const acknowledged = new Set((rollout.spec.acknowledgements ?? []).map((a) => a.step))
  const waiting = (rollout.status?.steps?.items ?? []).filter((s) => s.state === "AwaitingAcknowledgement").map((s) => s.release)
  return [...new Set(waiting.filter((r) => !acknowledged.has(r)))].sort()
}

export const decide = (o: Observed): Decision => {
  const { spec, metadata } = o.rollout
  if (metadata.labels?.[LABEL_OUTCOME] !== undefined && o.rollout.status?.conditions?.some((c) => c.type === "Approved")) return { _tag: "Closed" }
  if (spec.revocation !== undefined) return { _tag: "Revoked", by: spec.revocation.revokedBy, reason: spec.revocation.reason }
  if (!spec.requiresApproval) return { _tag: "NotRequired" }
  const deadline = Date.parse(spec.deadline)
  const a = spec.approval
  if (a === undefined) return o.now < deadline ? { _tag: "Awaiting", deadline, approvers: o.approvers } : { _tag: "Expired", cause: "deadline", at: deadline }
  const check = approvalCheck(o)
  if (check._tag === "Invalid") return o.now < deadline ? { _tag: "Refused", message: check.message } : { _tag: "Expired", cause: "deadline", at: deadline }
  const validUntil = Math.min(Date.parse(a.expiresAt), deadline)
  if (o.now >= validUntil) return { _tag: "Expired", cause: "approval", at: validUntil }
  return { _tag: "Approved", by: a.approvedBy, reason: a.reason, validUntil, pending: pendingAcknowledgements(o.rollout) }
}
