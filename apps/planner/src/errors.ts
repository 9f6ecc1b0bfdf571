/**
 * How a failed pass ends (design/style.md §B.5): the one table that classes every failure of the planner's API calls
 * and its own failures, and the defect path. A new `KubeError` reason or a new planner error does not compile until it
 * has a row here.
 *
 * - transient: the API server is busy or unreachable, or the pass read a view that moved since (`Conflict`,
 *   `AlreadyExists`, `NotFound`, `Gone`, the finalizer patch's test refused), or a transient failure whose condition
 *   the pass already wrote (`RetryAfterTransientFailure`: the registry did not answer, an upgrade-check Job failed
 *   transiently): the pass fails and the driver retries with backoff; nothing more is reported.
 * - defect: a request the API server should never refuse, or a bug (a thrown exception, an apply into another
 *   controller's fields, RBAC the chart grants missing): `Planned=Unknown/InternalError` on the runtime (`Ready`,
 *   `Stalled` and `status.plans` as they were), one Warning Event per transition, the detail in the log, and the
 *   driver's backoff.
 *
 * The planner has no terminal errors: everything that waits for a person (a blocked transition, an unreadable plan, a
 * refused adoption, charts gone from the registry, an upgrade-check that failed for good) is a decision
 * (`Planned=False/<reason>`, decide.ts) written by a pass that succeeds.
 */
import { Planned } from "@aicr/api"
import { type ConditionIntent, INTERNAL_ERROR_MESSAGE } from "@aicr/conditions"
import type { KubeError, KubeErrorTag } from "@aicr/kube"
import type { FailureClass } from "@aicr/runtime"
import { Cause, Data, Option } from "effect"

/** A transient failure after its condition was written: the driver's backoff retries the key. */
export class RetryAfterTransientFailure extends Data.TaggedError("RetryAfterTransientFailure")<{ readonly message: string }> {}

/**
 * The runtime's finalizers (or, for the first one, its resourceVersion) changed since the pass read it: the JSON
 * patch's `test` operation refused the write (422). The next pass reads the runtime again.
 */
export class FinalizerMovedError extends Data.TaggedError("FinalizerMovedError")<{ readonly message: string }> {}

/** The planner's own failures. */
export type PlannerError = RetryAfterTransientFailure | FinalizerMovedError

/** What a pass can fail with. */
export type PassError = KubeError | PlannerError

/** The pass failed on a defect; `Planned=Unknown/InternalError` is written. The driver backs off and logs it. */
export class InternalError extends Data.TaggedError("InternalError")<{ readonly message: string }> {}

type Class = Exclude<FailureClass, "terminal">

/** Every `KubeError` reason, classed. */
export const kubeErrorClass = {
  Unavailable: "transient",
  Timeout: "transient",
  TooManyRequests: "transient",
  // A write decided on a view that moved: a rollout label or status applied on a rollout that changed or went, a
  // create that raced (every create of the planner takes an existing object as done), the runtime gone mid-pass.
  Conflict: "transient",
  AlreadyExists: "transient",
  NotFound: "transient",
  Gone: "transient",
  // The planner applies its rooms and labels without force; admission lets its identity change its finalizer only
  // (a refusal is a bug); RBAC comes with the chart.
  FieldManagerConflict: "defect",
  Invalid: "defect",
  Forbidden: "defect",
  Unauthorized: "defect",
} as const satisfies { readonly [K in KubeErrorTag]: Class }

/** Every planner error, classed. */
export const plannerErrorClass = {
  RetryAfterTransientFailure: "transient",
  FinalizerMovedError: "transient",
} as const satisfies { readonly [K in PlannerError["_tag"]]: Class }

export const classOf = (e: PassError): Class => (e._tag === "KubeError" ? kubeErrorClass[e.reason._tag] : plannerErrorClass[e._tag])

export type Failure =
  { readonly class: "transient"; readonly error: PassError } | { readonly class: "defect"; readonly message: string; readonly cause: Cause.Cause<unknown> }

/** Classes the cause of a failed pass. */
export const classify = (cause: Cause.Cause<PassError>): Failure => {
  const error = Cause.findErrorOption(cause)
  if (Option.isSome(error) && !Cause.hasDies(cause) && classOf(error.value) === "transient") return { class: "transient", error: error.value }
  const squashed = Cause.squash(cause)
  const message = Option.isSome(error) ? error.value.message : squashed instanceof Error ? squashed.message : String(squashed)
  return { class: "defect", message, cause }
}

export const internalPlanned = (): ConditionIntent<"Planned"> => Planned.unknown("InternalError", INTERNAL_ERROR_MESSAGE)
