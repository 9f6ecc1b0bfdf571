/**
 * gates: pure. Why no new step may start now: engine available, not suspended, not paused, `Approved` current True,
 * `ValidationReady` current True when validation is Required (not for a `Remove` rollout, which leaves nothing to
 * validate). A step already written finishes even after a revocation or an expiry. A runtime being deleted is served
 * like any other: its finalizer keeps it until the planner's `Remove` rollout has run.
 */
import { Approved, deploymentValidationOf, type RuntimeRollout, ValidationReady } from "@aicr/api"
import { current } from "@aicr/conditions"
import type { Observed } from "./gather"

/** Why the current step cannot start, or why the rollout cannot go on: a Progressing False reason. */
export type Blocked =
  | "AwaitingApproval"
  | "AwaitingAcknowledgement"
  | "AwaitingValidationReady"
  | "Paused"
  | "EngineSuspended"
  | "EngineMissing"
  | "ProjectMissing"
  | "EngineNotResponding"
  | "Unauthorized"
  | "InventoryDrift"
  | "StepUnknown"
  | "MovedReleaseMissing"
  | "NamespaceMissing"
  | "EngineSuspensionRefused"
  | "ForeignObject"
  | "PlanUnreadable"
  | "RolloutFailed"
  | "RolloutRevoked"
  | "RolloutExpired"

/** Why no new step may start now, or undefined when one may. */
export const startBlockedBy = (o: Observed, rollout: RuntimeRollout): { reason: Blocked; message: string } | undefined => {
  if (o.engine._tag !== "Ready") return { reason: o.engine._tag, message: o.engine.message }
  if (o.runtime.spec.suspendEngine)
    return { reason: "EngineSuspended", message: "spec.suspendEngine is set: no step starts and Argo CD syncs nothing until it is cleared" }
  if (o.runtime.spec.paused) return { reason: "Paused", message: "spec.paused is set: no new step starts; Argo CD keeps syncing what is written" }
  const approved = current(rollout, Approved)
  if (approved.status !== "True") {
    if (approved.reason === "RolloutRevoked" || approved.reason === "RolloutExpired" || approved.reason === "AwaitingAcknowledgement")
      return { reason: approved.reason, message: approved.message }
    return { reason: "AwaitingApproval", message: `Approved is ${approved.status} (${approved.reason}): ${approved.message}` }
  }
  // A Remove rollout leaves nothing to validate, so it never waits for the validation gate.
  if (deploymentValidationOf(o.runtime.spec) === "Required" && rollout.spec.kind !== "Remove") {
    const ready = current(rollout, ValidationReady)
    if (ready.status !== "True")
      return {
        reason: "AwaitingValidationReady",
        message: `Deployment validation is Required and ValidationReady is ${ready.status} (${ready.reason}): ${ready.message}`,
      }
  }
  return undefined
}
