/**
 * decide: pure. What this pass should do for one rollout, from what gather observed. No I/O, no clock.
 *
 * - An ended rollout (outcome label), one whose runtime is gone or another's, and a `Remove` rollout (the runtime's
 *   deletion: nothing is left to validate; the step executor and the planner exempt it the same way) → leave alone.
 * - `spec.validation.deployment: Disabled` → ValidationReady and Validated True/`ValidationDisabled`.
 * - Required and not installed (launcher, its rights, the validators' identity) → `ValidationUnavailable` on both,
 *   naming what is missing and both ways out.
 * - A verdict already reached (our own `Validated`: passed, or a terminal not-validated reason) → keep it: a
 *   rollout is validated once, never re-run on a later pass.
 * - Steps not all ready (`Progressing` not current True/`StepsCompleted`) → `AwaitingSteps`.
 * - Otherwise → validate (act runs the snapshot, `aicr validate`, reads the report and pushes the evidence).
 */
import { LABEL_OUTCOME } from "@aicr/api"
import type { Observed } from "./gather"

/** `Validated=False` reasons that end the rollout (the planner closes it Failed). */
export const TERMINAL_REASONS = ["ValidationFailed", "ValidationIncomplete", "ValidationEmpty", "ValidationUnverified", "EvidenceUnsigned"] as const
export type TerminalReason = (typeof TERMINAL_REASONS)[number]

export type Decision =
  | { readonly _tag: "LeaveAlone"; readonly why: string }
  | { readonly _tag: "Disabled" }
  | { readonly _tag: "Unavailable"; readonly message: string }
  | { readonly _tag: "Keep"; readonly status: "True" | "False"; readonly reason: "ValidationPassed" | TerminalReason; readonly message: string }
  | { readonly _tag: "AwaitSteps"; readonly message: string }
  | { readonly _tag: "Validate" }

/** The message of `ValidationUnavailable`: what is missing and the two ways out. */
export const unavailableMessage = (missing: ReadonlyArray<string>): string =>
  `Deployment validation is Required but not installed: ${missing.join("; ")}. ` +
  `Either install it with the chart value validation.enabled: true, or set spec.validation.deployment: Disabled on ClusterRuntime cluster`

export const decide = (o: Observed): Decision => {
  const r = o.rollout
  if (r.metadata.labels?.[LABEL_OUTCOME] !== undefined) return { _tag: "LeaveAlone", why: "the rollout has ended" }
  if (o.runtime === undefined) return { _tag: "LeaveAlone", why: "its runtime is gone" }
  if (r.spec.kind === "Remove") return { _tag: "LeaveAlone", why: "a Remove rollout leaves nothing to validate" }
  if (o.mode === "Disabled") return { _tag: "Disabled" }
  // Asked whenever the runtime exists and validation is Required (gather), which every path reaching here is.
  if (o.missing !== undefined && o.missing.length > 0) return { _tag: "Unavailable", message: unavailableMessage(o.missing) }
  const own = r.status?.conditions?.find((c) => c.type === "Validated")
  if (own?.status === "True" && own.reason === "ValidationPassed" && o.validation?.result === "Passed")
    return { _tag: "Keep", status: "True", reason: "ValidationPassed", message: own.message }
  if (own?.status === "False" && (TERMINAL_REASONS as readonly string[]).includes(own.reason))
    return { _tag: "Keep", status: "False", reason: own.reason as TerminalReason, message: own.message }
  if (o.progressing.status !== "True" || o.progressing.reason !== "StepsCompleted") {
    return { _tag: "AwaitSteps", message: `Waiting for every step to be ready: Progressing is ${o.progressing.status} (${o.progressing.reason})` }
  }
  return { _tag: "Validate" }
}
