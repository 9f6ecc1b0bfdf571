/**
 * report: pure. The planner's conditions and rooms on every pass: `Planned`, `Ready`, `Stalled` and `status.plans` on
 * the runtime; `Succeeded` and `status.assessment` on each rollout (rebuilt from the durable outcome label, so a
 * lost status comes back the same). Messages carry no times except the window's end, so an unchanged state makes no
 * write. After a defect (errors.ts) the runtime's room says `Planned=Unknown/InternalError`.
 */
import {
  Approved,
  type ClusterRuntime,
  deploymentValidationOf,
  EngineAvailable,
  type Outcome,
  type Plan,
  Planned,
  Progressing,
  Ready,
  type RuntimeRollout,
  Stalled,
  Succeeded,
  ValidationReady,
  Validated,
} from "@aicr/api"
import { type ConditionIntent, current, materialize, shortDigest } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import type { Decision } from "./decide"
import { internalPlanned } from "./errors"
import type { Observed } from "./gather"
import type { StackReadiness } from "./readiness"
import { outcomeOf, VALIDATION_FAILURES } from "./rollouts"

export const assessmentConfigMapName = (rollout: string) => `aicr-assessment-${rollout}`

export const plannedCondition = (d: Decision): ConditionIntent<"Planned"> => {
  switch (d.plan._tag) {
    case "AwaitingResolution":
      return Planned.false("AwaitingResolution", d.plan.message)
    case "Stabilizing":
      return Planned.false("Stabilizing", d.plan.message)
    case "Assessing":
      return Planned.false("Assessing", d.plan.message)
    case "Blocked":
      return Planned.false(d.plan.reason, d.plan.message)
    case "Planned":
      return Planned.true("PlanComputed", d.plan.message)
    case "Deleting":
      return Planned.false("Deleting", d.plan.message)
    case "Paused":
      return Planned.false("Paused", d.plan.message)
  }
}

const STARTED: ReadonlySet<string> = new Set(["Applying", "WaitingForReady", "AwaitingAcknowledgement", "Failed"])

/**
 * The step in flight, as the step executor labels it (`1/15 cert-manager (Install)`), only while one has started:
 * the executor also names the next step while it waits at the gate (no approval yet, an approval that does not
 * count, paused), and nothing runs then.
 */
export const stepInFlight = (r: RuntimeRollout): string | undefined =>
  r.status?.steps?.items?.some((i) => STARTED.has(i.state)) ? r.status.steps.current : undefined

/** The validation gate's `ValidationUnavailable` on a rollout (Required, not installed), if it says so now. */
const validationUnavailable = (r: RuntimeRollout | undefined): string | undefined => {
  if (r === undefined || r.spec.kind === "Remove") return undefined
  const ready = current(r, ValidationReady)
  return ready.status === "False" && ready.reason === "ValidationUnavailable" ? ready.message : undefined
}

/** Where the open rollout is: awaiting approval, its step, validation, or what the step executor says. */
const rolloutProgress = (open: RuntimeRollout): string => {
  const name = open.metadata.name
  const unavailable = validationUnavailable(open)
  if (unavailable !== undefined) return `rollout ${name} stalled: ValidationUnavailable: ${unavailable}`
  if (open.spec.approval === undefined) return `rollout ${name} awaiting approval (kubectl aicr approve ${name} --reason "…")`
  const progressing = current(open, Progressing)
  if (progressing.status === "True" && progressing.reason === "StepsCompleted" && open.status?.validation?.runID !== undefined) {
    return `rollout ${name}: deployment validation run ${open.status.validation.runID}`
  }
  const stall = rolloutStall(open)
  if (stall !== undefined) return `rollout ${name} stalled: ${stall.reason}: ${stall.detail}`
  const step = stepInFlight(open)
  if (step !== undefined) return `rollout ${name}: step ${step}`
  return `rollout ${name}: ${progressing.status === "Unknown" ? "approved, waiting for the step executor" : progressing.message}`
}

/**
 * The active plan whose releases `Ready` watches: when nothing else speaks first — no deletion, suspension or pause, no
 * rollout open or ended without success — and the active plan is the target (readable).
 */
export const watchedPlan = (o: Observed, d: Decision): Plan | undefined => {
  if (o.runtime.metadata.deletionTimestamp || o.runtime.spec.suspendEngine || o.runtime.spec.paused) return undefined
  if (d.open !== undefined || d.ended !== undefined || d.active === undefined || d.active !== d.target) return undefined
  const read = o.plans.get(d.active)
  return read?.ok === true ? read.plan : undefined
}

const READY: StackReadiness = { _tag: "Ready" }

/**
 * What a person sees first: `rollout <name>: step 9/18 gpu-operator (Upgrade)`, awaiting approval, paused, … After a
 * rollout, `stack` (readiness.ts) turns a release of the active plan that is not ready into `NotReady`.
 */
export const readyCondition = (o: Observed, d: Decision, stack: StackReadiness = READY): ConditionIntent<"Ready"> => {
  if (o.runtime.metadata.deletionTimestamp) {
    const open = d.open
    return Ready.false(
      "Deleting",
      `The runtime is being deleted: ${open !== undefined && open.spec.kind === "Remove" ? rolloutProgress(open) : d.plan.message}`,
    )
  }
  if (o.runtime.spec.suspendEngine) {
    // The step-executor reports in status.engine where the suspension does not hold (a sync in flight, a refused patch).
    const refused = o.runtime.status?.engine?.suspensionRefused
    if (refused !== undefined) return Ready.false("EngineSuspensionRefused", refused)
    return Ready.false("EngineSuspended", "spec.suspendEngine is set: Argo CD neither syncs nor self-heals the operator's Applications")
  }
  if (o.runtime.spec.paused) return Ready.false("Paused", "spec.paused is set: no new resolution or step starts; Argo CD keeps syncing")
  const engine = engineDown(o)
  if (engine !== undefined && engine.reason !== "EngineNotResponding") return Ready.false(engine.reason, engine.message)
  if (d.open !== undefined) return Ready.false("RollingOut", rolloutProgress(d.open))
  if (d.ended !== undefined) return Ready.false("RollingOut", `rollout ${d.ended.metadata.name} stalled: it ended ${outcomeOf(d.ended) ?? ""}`)
  // A plan the planner refuses to read (a pin to a missing or malformed plan, a pinned chart gone from the registry, the
  // active plan's ConfigMap gone during deletion): Ready cannot vouch for what runs against it (operator.md §3.1).
  if (d.plan._tag === "Blocked" && d.plan.reason === "PlanUnreadable") return Ready.false("PlanUnreadable", d.plan.message)
  if (d.active !== undefined && d.active === d.target) {
    if (stack._tag === "NotReady") return Ready.false("NotReady", stack.message)
    if (deploymentValidationOf(o.runtime.spec) === "Disabled")
      return Ready.true("ValidationDisabled", `Plan ${shortDigest(d.active)} is rolled out; deployment validation is Disabled`)
    const v = validationOf(o.rollouts, d.active)
    return Ready.true(
      "RolledOut",
      `Plan ${shortDigest(d.active)} is rolled out and validated${v === undefined ? "" : ` (validation run ${v.runID ?? "?"}, evidence ${v.evidenceRef ?? "none"})`}`,
    )
  }
  if (d.target !== undefined) {
    const why = d.plan._tag === "Planned" ? "" : `: ${d.plan.message}`
    if (d.active === undefined) return Ready.false("NoActivePlan", `Nothing is rolled out yet; target plan ${shortDigest(d.target)}${why}`)
    return Ready.false("RollingOut", `Target plan ${shortDigest(d.target)} replaces ${shortDigest(d.active)}${why}`)
  }
  return d.active === undefined ? Ready.false("NoActivePlan", `Nothing is rolled out yet: ${d.plan.message}`) : Ready.false("NotReady", d.plan.message)
}

/** The validation room of the newest Succeeded rollout to `digest` that recorded a passed run. */
const validationOf = (rollouts: ReadonlyArray<RuntimeRollout>, digest: string) =>
  [...rollouts]
    .filter((r) => r.spec.toDigest === digest && outcomeOf(r) === "Succeeded" && r.status?.validation?.result === "Passed")
    .sort((a, b) => ((a.metadata.creationTimestamp ?? "") < (b.metadata.creationTimestamp ?? "") ? 1 : -1))[0]?.status?.validation

/** The step executor's `EngineAvailable=False` on the runtime: Argo CD is missing, its AppProject unreadable, the operator refused, or it stopped comparing. */
const ENGINE_DOWN = ["EngineMissing", "ProjectMissing", "Unauthorized", "EngineNotResponding"] as const
type EngineDown = (typeof ENGINE_DOWN)[number]
const engineDown = (o: Observed): { reason: EngineDown; message: string } | undefined => {
  const engine = current(o.runtime, EngineAvailable)
  const reason = ENGINE_DOWN.find((r) => r === engine.reason)
  return engine.status === "False" && reason !== undefined ? { reason, message: engine.message } : undefined
}

/**
 * The open rollout's `Progressing=False` reasons that need a human (the step executor's message names the step:
 * `step 2/4 gpu-operator (Upgrade): …`). The engine reasons come from the runtime's `EngineAvailable`; a failed,
 * revoked or expired rollout is the planner's to end (Stalled then says how it ended).
 */
const ROLLOUT_STALLS = [
  "AwaitingAcknowledgement",
  "InventoryDrift",
  "MovedReleaseMissing",
  "ForeignObject",
  "NamespaceMissing",
  "StepUnknown",
  "EngineSuspensionRefused",
  "PlanUnreadable",
] as const
type RolloutStall = (typeof ROLLOUT_STALLS)[number] | "AwaitingApproval"

/** What holds the open rollout until a person acts: its Progressing stall, else an approval still missing (`Approved=False`). */
export const rolloutStall = (open: RuntimeRollout): { reason: RolloutStall; message: string; detail: string } | undefined => {
  const name = open.metadata.name
  const progressing = current(open, Progressing)
  const reason = ROLLOUT_STALLS.find((r) => r === progressing.reason)
  if (progressing.status === "False" && reason !== undefined) return { reason, message: `rollout ${name} ${progressing.message}`, detail: progressing.message }
  const approved = current(open, Approved)
  if (approved.status === "False" && (approved.reason === "AwaitingApproval" || approved.reason === "ApprovalRefused")) {
    return {
      reason: "AwaitingApproval",
      message: `rollout ${name} awaiting approval (kubectl aicr approve ${name} --reason "…"): ${approved.message}`,
      detail: approved.message,
    }
  }
  if (approved.status === "False" && approved.reason === "AwaitingAcknowledgement")
    return { reason: "AwaitingAcknowledgement", message: `rollout ${name}: ${approved.message}`, detail: approved.message }
  return undefined
}

const STALL_REASONS_RESOLVED_WAITS = new Set(["Resolving", "NotYetReported", "Stale"])
const STALL_REASONS_MIRRORED_WAITS = new Set(["Mirroring", "AwaitingResolution", "NotYetReported", "Stale"])

const endedReason: Record<Exclude<Outcome, "Succeeded" | "Superseded">, "RolloutFailed" | "RolloutExpired" | "RolloutRevoked"> = {
  Failed: "RolloutFailed",
  Expired: "RolloutExpired",
  Revoked: "RolloutRevoked",
}

/** Stalled: progress needs a human; carries the reason and message of what stalled. */
export const stalledCondition = (o: Observed, d: Decision): ConditionIntent<"Stalled"> => {
  if (o.resolved.status === "False" && !STALL_REASONS_RESOLVED_WAITS.has(o.resolved.reason)) return Stalled.true(o.resolved.reason as never, o.resolved.message)
  if (o.mirrored.status === "False" && !STALL_REASONS_MIRRORED_WAITS.has(o.mirrored.reason)) return Stalled.true(o.mirrored.reason as never, o.mirrored.message)
  if (d.plan._tag === "Blocked") return Stalled.true(d.plan.reason, d.plan.message)
  const refused = o.runtime.spec.suspendEngine ? o.runtime.status?.engine?.suspensionRefused : undefined
  if (refused !== undefined) return Stalled.true("EngineSuspensionRefused", refused)
  const unavailable = o.runtime.metadata.deletionTimestamp ? undefined : validationUnavailable(d.open)
  if (unavailable !== undefined) return Stalled.true("ValidationUnavailable", `rollout ${d.open!.metadata.name}: ${unavailable}`)
  if (d.ended !== undefined) {
    const outcome = outcomeOf(d.ended) as keyof typeof endedReason
    const name = d.ended.metadata.name
    // A rollout that failed validation says why through Validated; any other through Progressing.
    const validated = current(d.ended, Validated)
    const why =
      validated.status === "False" && (VALIDATION_FAILURES as readonly string[]).includes(validated.reason)
        ? `${validated.reason}: ${validated.message}`
        : current(d.ended, Progressing).message
    return Stalled.true(
      endedReason[outcome],
      `rollout ${name} ended ${outcome}${why ? ` (${why})` : ""}; to retry, annotate the runtime: kubectl annotate clusterruntime cluster operator.aicr.run/retry=${name}`,
    )
  }
  const engine = engineDown(o)
  if (engine !== undefined) return Stalled.true(engine.reason, engine.message)
  const stall = d.open !== undefined ? rolloutStall(d.open) : undefined
  if (stall !== undefined) return Stalled.true(stall.reason, stall.message)
  return Stalled.false("NotStalled", "Nothing needs a human")
}

export const runtimeStatus = (o: Observed, d: Decision, stack: StackReadiness = READY): StatusWrite => {
  const conditions = materialize([plannedCondition(d), readyCondition(o, d, stack), stalledCondition(o, d)], {
    existing: o.runtime.status?.conditions,
    generation: o.generation,
    now: o.now,
  })
  const open = d.open
  const step = open !== undefined ? stepInFlight(open) : undefined
  const plans = {
    ...(d.active !== undefined ? { active: d.active } : {}),
    ...(d.target !== undefined ? { target: d.target } : {}),
    ...(d.target !== undefined && d.targetSince !== undefined ? { targetSince: new Date(d.targetSince).toISOString() } : {}),
    ...(open !== undefined ? { rollout: { name: open.metadata.name, ...(step ? { step } : {}) } } : {}),
  }
  // An empty object would reach the API server as null (server-side apply drops the last owned subfield), which the
  // schema refuses; leaving the key out removes what this room wrote there.
  return { conditions, plans: Object.keys(plans).length > 0 ? plans : undefined }
}

const succeededCondition = (outcome: Outcome | undefined, name: string): ConditionIntent<"Succeeded"> => {
  switch (outcome) {
    case undefined:
      return Succeeded.false("InProgress", `Rollout ${name} has not ended`)
    case "Succeeded":
      return Succeeded.true("RolloutSucceeded", `Every step of rollout ${name} is ready at its revision`)
    case "Superseded":
      return Succeeded.false(
        "RolloutSuperseded",
        `A newer target, or the runtime's deletion, replaced rollout ${name} before it was approved; nothing of it ran`,
      )
    default:
      return Succeeded.false(endedReason[outcome], `Rollout ${name} ended ${outcome}`)
  }
}

const count = (r: RuntimeRollout, v: string) => (r.spec.steps ?? []).filter((s) => s.verdict === v).length

/** The planner's room on one rollout, from its outcome label (or the outcome this pass gives it). */
export const rolloutStatus = (r: RuntimeRollout, outcome: Outcome | undefined, now: number): StatusWrite => ({
  conditions: materialize([succeededCondition(outcome, r.metadata.name)], { existing: r.status?.conditions, generation: r.metadata.generation, now }),
  assessment: {
    configMap: assessmentConfigMapName(r.metadata.name),
    verdicts: {
      safe: count(r, "safe"),
      manual: count(r, "manual"),
      blocked: count(r, "blocked"),
      unknown: count(r, "unknown"),
      unversioned: count(r, "unversioned"),
    },
  },
})

/**
 * The runtime's room after a defect (errors.ts): `Planned=Unknown/InternalError`; `Ready`, `Stalled` and
 * `status.plans` as this room last wrote them (left out when it never did), so the summary a person reads stays the
 * last one known.
 */
export const runtimeInternalError = (runtime: ClusterRuntime, now: number): StatusWrite => {
  const existing = runtime.status?.conditions
  const kept = (existing ?? []).filter((c) => c.type === Ready.type || c.type === Stalled.type)
  return {
    conditions: [...materialize([internalPlanned()], { existing, generation: runtime.metadata.generation, now }), ...kept],
    ...(runtime.status?.plans !== undefined ? { plans: runtime.status.plans } : {}),
  }
}
