/**
 * decide: pure. From what the caches show, the one thing to do next and what to report, by concern: `steps.ts` (one
 * step from its Application), `gates.ts` (what holds a new step back), `rollout.ts` (the rollout's next action) and
 * `suspension.ts` (suspendEngine).
 */
import type { Observed } from "./gather"
import { decideRollout, type RolloutDecision } from "./rollout"
import { isOurs } from "./steps"
import { decideSuspension, type Refusal } from "./suspension"

export type { Action, Progress, RolloutDecision } from "./rollout"
export type { Blocked } from "./gates"
export { reported, type Refusal, type Reported } from "./suspension"
export { GATE_BUFFER_MS, GATE_MAX_WAIT_DEFAULT_MS, iso, revisionText, stepLabel, type StepState, type StepView, timeoutOf } from "./steps"

export interface Decision {
  readonly suspend: ReadonlyArray<{ readonly name: string; readonly suspend: boolean }>
  /** While suspendEngine is set: the Applications with a sync operation in flight (Argo CD finishes it). */
  readonly busy: ReadonlyArray<Refusal>
  readonly ours: number
  readonly suspendedCount: number
  readonly rollout: RolloutDecision | undefined
}

export const decide = (o: Observed): Decision => {
  const ours = o.applications.filter((a) => isOurs(o, a))
  const live = ours.filter((a) => a.metadata.deletionTimestamp === undefined)
  const { suspend, busy, suspendedCount } = decideSuspension(o, live)
  const rollout = o.rollout === undefined ? undefined : decideRollout(o, o.rollout)
  // Counted as after this pass's action, so the next pass reports the same.
  const action = rollout?.action
  const created = action?._tag === "Write" && !o.applications.some((a) => a.metadata.name === action.application.metadata.name) ? 1 : 0
  return { suspend, busy, ours: ours.length + created, suspendedCount, rollout }
}
