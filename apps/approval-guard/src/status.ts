/**
 * report: pure. The owned condition (`Approved`) and the status room (`status.approval`) for every decision,
 * including internal errors, plus when the next pass is due. Messages are deterministic (no current time, sorted
 * lists), so an unchanged state makes no write.
 */
import { Approved, type RuntimeRolloutStatus } from "@aicr/api"
import { type ConditionIntent, INTERNAL_ERROR_MESSAGE, materialize, shortDigest, toConditionTime } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import { Requeue } from "@aicr/runtime"
import type { Approvers } from "./access"
import type { Decision } from "./decide"
import type { Observed } from "./gather"

export type ApprovalRoom = NonNullable<RuntimeRolloutStatus["approval"]>

const iso = (ms: number) => toConditionTime(ms)

/** "users a, b; groups g; service accounts ns/n", or undefined when nobody is bound. */
export const describeApprovers = (a: Approvers | undefined): string | undefined => {
  if (a === undefined) return undefined
  const parts = [
    a.users.length > 0 ? `users ${a.users.join(", ")}` : "",
    a.groups.length > 0 ? `groups ${a.groups.join(", ")}` : "",
    a.serviceAccounts.length > 0 ? `service accounts ${a.serviceAccounts.join(", ")}` : "",
  ].filter((p) => p !== "")
  return parts.length > 0 ? parts.join("; ") : undefined
}

export const approvedCondition = (o: Observed, d: Decision): ConditionIntent<"Approved"> => {
  const name = o.rollout.metadata.name
  const plan = shortDigest(o.rollout.spec.toDigest)
  switch (d._tag) {
    case "Closed": {
      const c = o.rollout.status!.conditions!.find((x) => x.type === "Approved")!
      return { type: "Approved", status: c.status, reason: c.reason, message: c.message } as ConditionIntent<"Approved">
    }
    case "Revoked":
      return Approved.false(
        "RolloutRevoked",
        `Revoked by ${d.by}: ${d.reason}. The step in flight finishes and nothing new starts; a retry is a new rollout with a new approval`,
      )
    case "NotRequired":
      return Approved.true("ApprovalNotRequired", "This rollout needs no approval (spec.requiresApproval is false)")
    case "Awaiting": {
      const who = describeApprovers(d.approvers)
      const requester = o.rollout.spec.requestedBy !== undefined ? ` ${o.rollout.spec.requestedBy} requested this change and may not approve it.` : ""
      return who === undefined
        ? Approved.false(
            "AwaitingApproval",
            `No approver is configured: bind the ClusterRole ${o.approverRole} to users or groups (chart values approvers.users, approvers.groups). ` +
              `Until then nobody can approve plan ${plan}, and the rollout expires at ${iso(d.deadline)}`,
          )
        : Approved.false(
            "AwaitingApproval",
            `Waiting for an approval of plan ${plan} until ${iso(d.deadline)}. May approve: ${who} (ClusterRole ${o.approverRole}).${requester} ` +
              `Run: kubectl aicr approve ${name} --reason "…"`,
          )
    }
    case "Expired":
      return d.cause === "deadline"
        ? Approved.false(
            "RolloutExpired",
            `The deadline ${iso(d.at)} passed without a valid approval; nothing starts. A retry is a new rollout (annotation operator.aicr.run/retry=${name} on the runtime)`,
          )
        : Approved.false(
            "RolloutExpired",
            `The approval expired at ${iso(d.at)}: the step in flight finishes and nothing new starts. A retry is a new rollout with a new approval`,
          )
    case "Refused":
      return Approved.false("ApprovalRefused", d.message)
    case "Approved":
      return d.pending.length > 0
        ? Approved.false(
            "AwaitingAcknowledgement",
            `Approved by ${d.by} until ${iso(d.validUntil)}; waiting for the manual post-apply actions of ${d.pending.join(", ")}: ` +
              `do them, then run kubectl aicr acknowledge ${name} --step ${d.pending[0]}`,
          )
        : Approved.true("ApprovedByUser", `Approved by ${d.by} for plan ${plan} until ${iso(d.validUntil)}: ${d.reason}`)
  }
}

export const approvalRoom = (o: Observed, d: Decision): ApprovalRoom => {
  if (d._tag === "Closed") return o.rollout.status?.approval ?? {}
  const a = o.rollout.spec.approval
  const base: { approvedBy?: string; validUntil?: string } =
    a === undefined ? {} : { approvedBy: a.approvedBy, validUntil: iso(Math.min(Date.parse(a.expiresAt), Date.parse(o.rollout.spec.deadline))) }
  return d._tag === "Approved" && d.pending.length > 0 ? { ...base, pendingAcknowledgements: [...d.pending] } : base
}

/** When the answer changes by itself: at the deadline while waiting, at the end of validity while approved. */
export const requeueOf = (o: Observed, d: Decision): Requeue => {
  const at = d._tag === "Awaiting" ? d.deadline : d._tag === "Approved" ? d.validUntil : d._tag === "Refused" ? Date.parse(o.rollout.spec.deadline) : undefined
  return at === undefined ? Requeue.onChange : Requeue.after(Math.max(0, at - o.now))
}

const write = (o: Observed, condition: ConditionIntent<"Approved">, room: ApprovalRoom): StatusWrite => ({
  conditions: materialize([condition], { existing: o.rollout.status?.conditions, generation: o.generation, now: o.now }),
  approval: room,
})

export const report = (o: Observed, d: Decision): StatusWrite => write(o, approvedCondition(o, d), approvalRoom(o, d))

/** An unexpected failure: Approved Unknown/InternalError (the detail goes to the log), the room as it was. */
export const reportInternalError = (o: Pick<Observed, "rollout" | "generation" | "now">): StatusWrite => ({
  conditions: materialize([Approved.unknown("InternalError", INTERNAL_ERROR_MESSAGE)], {
    existing: o.rollout.status?.conditions,
    generation: o.generation,
    now: o.now,
  }),
  approval: o.rollout.status?.approval ?? {},
})
