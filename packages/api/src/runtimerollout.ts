/**
 * `RuntimeRollout` (cluster-scoped): one transition between two plans. The operator writes the identity fields
 * once; approvers write only the set-once `approval` and `revocation` and append `acknowledgements` (operator.md
 * §3.3; ADRs 20261202-runtimerollout-spec, 20261202-status-rooms).
 */
import { Schema } from "effect"
import { cel, Digest, Dns1123Label, HumanReason, listMap, NonNegativeInt, ObjectName, OciReference, text, Time, Uid, UserName } from "./common"
import { Conditions } from "./clusterruntime"
import { KubeObjectMeta } from "./meta"

export const RolloutKind = Schema.Literals(["Install", "Upgrade", "Rollback", "Adopt", "Remove"])
export type RolloutKind = typeof RolloutKind.Type
export const MAX_ACKNOWLEDGEMENTS = 32
export const MAX_STEPS = 128

const immutable = (field: string) => cel({ rule: "self == oldSelf", message: `spec.${field} is immutable` })

// ---- spec -----------------------------------------------------------------------------------------------------

export const Approval = Schema.Struct({
  approvedBy: UserName.annotate({ description: "The approver's user name; admission requires it to be the requester's." }),
  groups: Schema.optionalKey(Schema.Array(text(256, 1)).check(Schema.isMaxLength(32)).annotate({ description: "The approver's groups." })),
  reason: HumanReason.annotate({ description: "Why the approver approved (kubectl aicr approve --reason)." }),
  approvedAt: Time,
  expiresAt: Time.annotate({ description: "The approval is void after this time; at most spec.deadline." }),
  toDigest: Digest.annotate({ description: "The target plan approved; must equal spec.toDigest." }),
}).annotate({
  description: "The set-once approval.",
  ...cel({ rule: "self.expiresAt > self.approvedAt", message: "spec.approval.expiresAt must be after spec.approval.approvedAt", fieldPath: ".expiresAt" }),
})

export const Revocation = Schema.Struct({
  revokedBy: UserName,
  reason: HumanReason,
  revokedAt: Time,
}).annotate({ description: "The set-once revocation: the step in flight finishes, nothing new starts." })

export const Acknowledgement = Schema.Struct({
  step: Dns1123Label.annotate({ description: "The release whose manual post-apply actions were done." }),
  acknowledgedBy: UserName,
  at: Time,
  reason: Schema.optionalKey(text(1024)),
}).annotate({
  description: "One acknowledgement; immutable once written.",
  ...cel({ rule: "self == oldSelf", message: "an acknowledgement cannot be changed once written" }),
})

export const Verdict = Schema.Literals(["safe", "manual", "blocked", "unknown", "unversioned"])
export type Verdict = typeof Verdict.Type
export const StepAction = Schema.Literals(["Install", "Upgrade", "Remove", "Move", "Adopt"])
export type StepAction = typeof StepAction.Type

/** One step the planner planned: installs and upgrades in dependency order, then removals in reverse order. */
export const RolloutStep = Schema.Struct({
  release: Dns1123Label,
  namespace: Dns1123Label,
  action: StepAction,
  verdict: Schema.optionalKey(Verdict.annotate({ description: "The assessment's verdict for this component's change; absent for an install." })),
  from: Schema.optionalKey(text(128).annotate({ description: "Chart version before the step." })),
  to: Schema.optionalKey(text(128).annotate({ description: "Chart version after the step." })),
  acknowledge: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "A manual transition with post-apply actions: the step waits for kubectl aicr acknowledge." }),
  ),
})
export type RolloutStep = typeof RolloutStep.Type

export const RuntimeRolloutSpec = Schema.Struct({
  runtimeUID: Uid.annotate({ description: "UID of the ClusterRuntime this rollout belongs to (no ownerReference).", ...immutable("runtimeUID") }),
  fromDigest: Schema.optionalKey(Digest.annotate({ description: "desiredStateDigest of the active plan; absent for Install." })),
  toDigest: Digest.annotate({ description: "desiredStateDigest of the target plan.", ...immutable("toDigest") }),
  kind: RolloutKind.annotate({ description: "What this transition does.", ...immutable("kind") }),
  deadline: Time.annotate({ description: "An unapproved rollout expires at this time (RolloutExpired).", ...immutable("deadline") }),
  requiresApproval: Schema.Boolean.annotate({ description: "Whether steps wait for an approval.", ...immutable("requiresApproval") }),
  requestedBy: Schema.optionalKey(UserName.annotate({ description: "Who made the runtime edit that produced this change; may not approve it." })),
  steps: Schema.optionalKey(
    Schema.Array(RolloutStep)
      .check(Schema.isMaxLength(MAX_STEPS))
      .annotate({
        description: "The steps, in the order they run; what an approval approves.",
        ...cel({ rule: "self == oldSelf", message: "spec.steps is immutable" }),
      }),
  ),
  approval: Schema.optionalKey(Approval),
  revocation: Schema.optionalKey(Revocation),
  acknowledgements: Schema.optionalKey(
    Schema.Array(Acknowledgement)
      .check(Schema.isMaxLength(MAX_ACKNOWLEDGEMENTS))
      .annotate({ description: "Append-only; one per manual step.", ...listMap("step") }),
  ),
}).annotate({
  description: "One transition between two plans.",
  ...cel(
    {
      rule: "has(self.fromDigest) == has(oldSelf.fromDigest) && (!has(self.fromDigest) || self.fromDigest == oldSelf.fromDigest)",
      message: "spec.fromDigest is immutable",
    },
    {
      rule: "has(self.requestedBy) == has(oldSelf.requestedBy) && (!has(self.requestedBy) || self.requestedBy == oldSelf.requestedBy)",
      message: "spec.requestedBy is immutable",
    },
    { rule: "has(self.steps) == has(oldSelf.steps)", message: "spec.steps is immutable" },
    {
      rule: "!has(oldSelf.approval) || (has(self.approval) && self.approval == oldSelf.approval)",
      message: "spec.approval is set-once: it cannot be changed or removed",
    },
    {
      rule: "!has(oldSelf.revocation) || (has(self.revocation) && self.revocation == oldSelf.revocation)",
      message: "spec.revocation is set-once: it cannot be changed or removed",
    },
    {
      rule: "!has(oldSelf.acknowledgements) || (has(self.acknowledgements) && oldSelf.acknowledgements.all(o, self.acknowledgements.exists(n, n == o)))",
      message: "spec.acknowledgements is append-only: entries cannot be changed or removed",
    },
    {
      rule: "!has(self.approval) || self.approval.toDigest == self.toDigest",
      message: "spec.approval.toDigest must equal spec.toDigest: an approval binds to the exact target plan",
    },
    { rule: "!has(self.approval) || self.approval.expiresAt <= self.deadline", message: "spec.approval.expiresAt must not be after spec.deadline" },
    { rule: "self.kind != 'Install' || !has(self.fromDigest)", message: "spec.fromDigest must be absent for an Install" },
    { rule: "!(self.kind in ['Upgrade', 'Rollback']) || has(self.fromDigest)", message: "spec.fromDigest is required for an Upgrade or a Rollback" },
    {
      rule: "!has(self.acknowledgements) || size(self.acknowledgements) == 0 || has(self.approval)",
      message: "spec.acknowledgements need an approval first",
    },
  ),
})
export type RuntimeRolloutSpec = typeof RuntimeRolloutSpec.Type

// ---- status rooms ---------------------------------------------------------------------------------------------

const Count = NonNegativeInt(MAX_STEPS)

/** planner: the assessment (aicr upgrade-check) this rollout was created from. */
export const AssessmentStatus = Schema.Struct({
  configMap: Schema.optionalKey(ObjectName.annotate({ description: "Content ConfigMap holding assessment.json." })),
  verdicts: Schema.optionalKey(
    Schema.Struct({ safe: Count, manual: Count, blocked: Count, unknown: Count, unversioned: Count }).annotate({ description: "Components per verdict." }),
  ),
}).annotate({ description: "Owned by planner." })

/** approval-guard: what the approval allows now. */
export const ApprovalStatus = Schema.Struct({
  approvedBy: Schema.optionalKey(UserName),
  validUntil: Schema.optionalKey(Time.annotate({ description: "The earlier of spec.approval.expiresAt and spec.deadline." })),
  pendingAcknowledgements: Schema.optionalKey(
    Schema.Array(Dns1123Label).check(Schema.isMaxLength(MAX_ACKNOWLEDGEMENTS)).annotate({ description: "Releases waiting for kubectl aicr acknowledge." }),
  ),
}).annotate({ description: "Owned by approval-guard." })

export const StepState = Schema.Literals(["Pending", "Applying", "WaitingForReady", "AwaitingAcknowledgement", "Ready", "Failed", "Skipped"])
export const StepStatus = Schema.Struct({
  index: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(MAX_STEPS)),
  release: Dns1123Label,
  namespace: Dns1123Label,
  action: StepAction,
  verdict: Schema.optionalKey(Verdict),
  state: StepState,
  writtenRevision: Schema.optionalKey(text(128).annotate({ description: "Revision written to the Application (chart digest + values hash)." })),
  readyAtRevision: Schema.optionalKey(text(128).annotate({ description: "Revision the release was last seen ready at." })),
  gate: Schema.optionalKey(Schema.Literals(["None", "Pending", "Passed", "Failed"]).annotate({ description: "AICR readiness gate." })),
  startedAt: Schema.optionalKey(Time),
  deadline: Schema.optionalKey(Time.annotate({ description: "When the step in flight fails if it is not ready by then (its timeout after the write)." })),
  completedAt: Schema.optionalKey(Time),
  message: Schema.optionalKey(text(1024)),
})
/** step-executor: step progress. */
export const StepsStatus = Schema.Struct({
  total: Count,
  done: Count,
  current: Schema.optionalKey(text(256).annotate({ description: "e.g. 9/18 gpu-operator (Upgrade)" })),
  items: Schema.optionalKey(Schema.Array(StepStatus).check(Schema.isMaxLength(MAX_STEPS)).annotate(listMap("index"))),
}).annotate({ description: "Owned by step-executor." })

/** validation-gate: the deployment validation run and its evidence. */
export const ValidationStatus = Schema.Struct({
  runID: Schema.optionalKey(text(128, 1)),
  result: Schema.optionalKey(Schema.Literals(["Passed", "Failed", "Skipped"])),
  evidenceRef: Schema.optionalKey(OciReference.annotate({ description: "<registry>/evidence/…@sha256:…" })),
  startedAt: Schema.optionalKey(Time),
  completedAt: Schema.optionalKey(Time),
  checks: Schema.optionalKey(
    Schema.Struct({ passed: NonNegativeInt(10_000), failed: NonNegativeInt(10_000), skipped: NonNegativeInt(10_000), other: NonNegativeInt(10_000) }),
  ),
}).annotate({ description: "Owned by validation-gate." })

export const RuntimeRolloutStatus = Schema.Struct({
  conditions: Schema.optionalKey(Conditions),
  assessment: Schema.optionalKey(AssessmentStatus),
  approval: Schema.optionalKey(ApprovalStatus),
  steps: Schema.optionalKey(StepsStatus),
  validation: Schema.optionalKey(ValidationStatus),
}).annotate({ description: "Observations only; each top-level key has one writer." })
export type RuntimeRolloutStatus = typeof RuntimeRolloutStatus.Type

export const RuntimeRollout = Schema.Struct({
  apiVersion: Schema.Literal("operator.aicr.run/v1alpha1"),
  kind: Schema.Literal("RuntimeRollout"),
  metadata: KubeObjectMeta,
  spec: RuntimeRolloutSpec,
  status: Schema.optionalKey(RuntimeRolloutStatus),
})
export type RuntimeRollout = typeof RuntimeRollout.Type
export const decodeRuntimeRollout = Schema.decodeUnknownResult(RuntimeRollout)
