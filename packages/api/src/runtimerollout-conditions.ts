/**
 * Condition catalog of `RuntimeRollout`. Owners follow architecture.md §2; `Succeeded` is the planner's, derived
 * from the durable outcome label (ADR 20261202-condition-catalog).
 */
import { ConditionDef, StandardUnknownReasons } from "@aicr/conditions"

/** Approved: this rollout may proceed now. Not oscillating: after True→False (revoked, expired) it stays False. */
export const Approved = ConditionDef.make({
  type: "Approved",
  owner: "approval-guard",
  polarity: "normal-true",
  doc: "True when this rollout may proceed now; once False after True (revoked or expired) it stays False, a retry is a new rollout",
  reasons: {
    True: {
      ApprovedByUser: "a set-once approval bound to spec.toDigest is present and unexpired; the message names the approver",
      ApprovalNotRequired: "spec.requiresApproval is false",
    },
    False: {
      AwaitingApproval: "no approval for the target plan yet",
      AwaitingAcknowledgement: "a manual step's post-apply actions wait for kubectl aicr acknowledge",
      ApprovalRefused: "the approval names the requester or does not bind to spec.toDigest",
      RolloutRevoked: "an approver revoked the rollout",
      RolloutExpired: "spec.deadline or the approval's expiresAt has passed",
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Progressing: the steps advance (True) or cannot (False, reason says why). Oscillates while steps run. */
export const Progressing = ConditionDef.make({
  type: "Progressing",
  owner: "step-executor",
  polarity: "normal-true",
  doc: "True while steps advance or once all are ready at their revisions (StepsCompleted); False when they cannot advance",
  reasons: {
    True: {
      StepInProgress: "an Application was written and the executor waits for it to be ready at that revision; the message names the step",
      StepsCompleted: "every step is ready at the revision written",
    },
    False: {
      AwaitingApproval: "Approved is not True for this generation",
      AwaitingAcknowledgement: "a manual step was applied and waits for kubectl aicr acknowledge",
      AwaitingValidationReady: "ValidationReady is not True for this generation",
      Paused: "the runtime's spec.paused is set",
      EngineSuspended: "the runtime's spec.suspendEngine is set",
      EngineSuspensionRefused: "an Application could not be suspended",
      EngineMissing: "Argo CD's CRDs are absent",
      EngineNotResponding: "Argo CD has not compared an operator Application for too long; no new step starts",
      ProjectMissing: "the AppProject cannot be read",
      Unauthorized: "the operator is not authorised on Argo CD's objects",
      InventoryDrift: "live engine objects differ from what the plan and rollout expect",
      StepUnknown: "a step kind this operator build does not understand",
      MovedReleaseMissing: "a moved release cannot be found at its old location",
      NamespaceMissing:
        "the step's release namespace does not exist; Argo CD does not create it; the message gives the command that creates it with its Pod Security labels",
      ForeignObject: "an Application with the wanted name was not created by this operator",
      PlanUnreadable: "the target plan ConfigMap is malformed or untrusted",
      RolloutFailed: "a step failed or passed its timeout; terminal",
      RolloutRevoked: "revoked; the step in flight finished and nothing else starts",
      RolloutExpired: "expired; the step in flight finished and nothing else starts",
    },
    Unknown: StandardUnknownReasons,
  },
})

/** ValidationReady: deployment validation can run for this rollout (or is Disabled). Checked before any step. */
export const ValidationReady = ConditionDef.make({
  type: "ValidationReady",
  owner: "validation-gate",
  polarity: "normal-true",
  doc: "True when deployment validation is installed, or the runtime sets spec.validation.deployment Disabled",
  reasons: {
    True: {
      ValidationAvailable: "the validation launcher is installed",
      ValidationDisabled: "the runtime sets spec.validation.deployment Disabled",
    },
    False: { ValidationUnavailable: "validation is Required but not installed (chart validation.enabled=false)" },
    Unknown: StandardUnknownReasons,
  },
})

/** Validated: AICR deployment validation passed after the last step, with evidence bound to plan and approval. */
export const Validated = ConditionDef.make({
  type: "Validated",
  owner: "validation-gate",
  polarity: "normal-true",
  doc: "True when aicr validate passed after the last step and its evidence was pushed, or validation is Disabled",
  reasons: {
    True: {
      ValidationPassed: "the deployment phase passed; status.validation.evidenceRef names the evidence",
      ValidationDisabled: "the runtime sets spec.validation.deployment Disabled",
    },
    False: {
      AwaitingSteps: "Progressing is not True/StepsCompleted for this generation",
      Validating: "a validation run is in progress; the message names the run",
      ValidationFailed: "a validation check failed; the message names the failed checks with the validator's own message; terminal",
      ValidationIncomplete:
        "a check ended other than passed, failed or skipped (timeout, crash), or the run wrote no report (deadline, killed, readiness pre-flight, a plan or snapshot it could not read); terminal",
      ValidationEmpty: "no check ran: the recipe declares no deployment check, or every check was skipped; terminal",
      ValidationUnverified: "a check reported passed in 0 ms with no output, so the validator cannot have run; terminal",
      EvidenceUnsigned: "a signing key is configured but the evidence carries no key signature; terminal",
      ValidationUnavailable: "validation is Required but not installed",
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Succeeded: the rollout's outcome, derived from the durable outcome label. Not oscillating once terminal. */
export const Succeeded = ConditionDef.make({
  type: "Succeeded",
  owner: "planner",
  polarity: "normal-true",
  doc: "True once the rollout ended Succeeded; False with the terminal reason once it ended otherwise, or InProgress",
  reasons: {
    True: { RolloutSucceeded: "every step is ready and validation passed (or is Disabled)" },
    False: {
      InProgress: "the rollout has not ended",
      RolloutFailed: "the rollout ended Failed",
      RolloutExpired: "the rollout ended Expired",
      RolloutRevoked: "the rollout ended Revoked",
      RolloutSuperseded: "a newer target, or the runtime's deletion, replaced the rollout before it was approved; nothing of it ran",
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Every condition type on RuntimeRollout. */
export const RuntimeRolloutConditions = [Approved, Progressing, ValidationReady, Validated, Succeeded] as const
