/**
 * rollouts: pure. What the runtime's RuntimeRollouts say: which one ended how (the durable outcome label, or the
 * outcome their conditions now imply), which one is in flight, and which plan is active — the target of the newest
 * rollout that ended Succeeded. Conditions count only when current (`current`), so a stale one never closes anything.
 */
import { Approved, LABEL_OUTCOME, type Outcome, OUTCOMES, Progressing, type RuntimeRollout, Validated } from "@aicr/api"
import { current } from "@aicr/conditions"

export const outcomeOf = (r: RuntimeRollout): Outcome | undefined => {
  const v = r.metadata.labels?.[LABEL_OUTCOME]
  return (OUTCOMES as readonly string[]).includes(v ?? "") ? (v as Outcome) : undefined
}

const created = (r: RuntimeRollout) => r.metadata.creationTimestamp ?? ""
/** Newest first; the attempt number breaks ties (names end in -<n>). */
export const newestFirst = (rs: ReadonlyArray<RuntimeRollout>): RuntimeRollout[] =>
  [...rs].sort((a, b) => (created(a) === created(b) ? attempt(b) - attempt(a) : created(a) < created(b) ? 1 : -1))

export const attempt = (r: RuntimeRollout): number => Number(/-(\d+)$/u.exec(r.metadata.name ?? "")?.[1] ?? "0")

/**
 * The outcome a not-yet-closed rollout has reached, if any:
 * - Failed: the executor reports `Progressing=False/RolloutFailed`;
 * - Revoked / Expired: the guard reports `Approved=False/RolloutRevoked|RolloutExpired` and the step-executor's
 *   current `Progressing` says no step is in flight (False: nothing may start; or True/StepsCompleted). A revocation
 *   is a spec edit: it bumps the rollout's generation, so until the executor's next pass its `Progressing` is stale
 *   (Unknown), which says nothing about the step in flight — the rollout stays open until the executor reports again;
 * - Succeeded: every step is ready (`Progressing=True/StepsCompleted`) and validation passed, or is Disabled; a
 *   `Remove` rollout (nothing left to validate) once it was approved and every step is done;
 * - Failed too: the validation gate reports a terminal not-validated reason (a failed or incomplete check, no check
 *   run, a faked pass, evidence without the configured signature).
 */
/** The validation gate's terminal `Validated=False` reasons: the rollout ends Failed. */
export const VALIDATION_FAILURES = ["ValidationFailed", "ValidationIncomplete", "ValidationEmpty", "ValidationUnverified", "EvidenceUnsigned"] as const

export const reachedOutcome = (r: RuntimeRollout, validationDisabled: boolean): Outcome | undefined => {
  const progressing = current(r, Progressing)
  const approved = current(r, Approved)
  if (progressing.status === "False" && progressing.reason === "RolloutFailed") return "Failed"
  const idle = progressing.status === "False" || (progressing.status === "True" && progressing.reason === "StepsCompleted")
  if (approved.status === "False" && idle) {
    if (approved.reason === "RolloutRevoked") return "Revoked"
    if (approved.reason === "RolloutExpired") return "Expired"
  }
  if (progressing.status === "True" && progressing.reason === "StepsCompleted") {
    if (r.spec.kind === "Remove") return isApproved(r) ? "Succeeded" : undefined
    if (validationDisabled) return "Succeeded"
    const validated = current(r, Validated)
    if (validated.status === "True") return "Succeeded"
    if (validated.status === "False" && (VALIDATION_FAILURES as readonly string[]).includes(validated.reason)) return "Failed"
  }
  return undefined
}

/** Whether anyone approved it yet (a superseded rollout must never have started). */
export const isApproved = (r: RuntimeRollout): boolean => r.spec.approval !== undefined

export interface RolloutView {
  /** The runtime's rollouts, newest first. */
  readonly all: ReadonlyArray<RuntimeRollout>
  /** The one not closed yet (at most one by construction). */
  readonly open: RuntimeRollout | undefined
  /** desiredStateDigest of the newest Succeeded rollout's target; none after a Succeeded Remove. */
  readonly active: string | undefined
}

export const viewRollouts = (rs: ReadonlyArray<RuntimeRollout>, runtimeUID: string): RolloutView => {
  const mine = newestFirst(rs.filter((r) => r.spec.runtimeUID === runtimeUID))
  const succeeded = mine.find((r) => outcomeOf(r) === "Succeeded")
  return {
    all: mine,
    open: mine.find((r) => outcomeOf(r) === undefined),
    active: succeeded?.spec.kind === "Remove" ? undefined : succeeded?.spec.toDigest,
  }
}

/** Rollouts towards a target so far, of any runtime (names are cluster-wide), for the next attempt's name. */
export const attemptsFor = (rs: ReadonlyArray<RuntimeRollout>, toDigest: string): number =>
  Math.max(0, ...rs.filter((r) => r.spec.toDigest === toDigest).map(attempt))
