/**
 * How a failed pass ends (design/style.md §B.5): the one table that classes every failure of the planner's API calls
 * and its own failures (the defect path, `InternalError` and the Warning Event are `failedPass` of @aicr/runtime). A
 * new `KubeError` reason or a new planner error does not compile until it has a row here.
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
import type { KubeError } from "@aicr/kube"
import { type ErrorTable, type KubeErrorClasses, outcomeOf, type PassFailureClass, type RetryAfterTransientFailure } from "@aicr/runtime"
import { Data } from "effect"

/**
 * The runtime's finalizers (or, for the first one, its resourceVersion) changed since the pass read it: the JSON
 * patch's `test` operation refused the write (422). The next pass reads the runtime again.
 */
export class FinalizerMovedError extends Data.TaggedError("FinalizerMovedError")<{ readonly message: string }> {}

/** The planner's own failures (`RetryAfterTransientFailure`: a transient failure after its condition was written). */
export type PlannerError = RetryAfterTransientFailure | FinalizerMovedError

/** What a pass can fail with. */
export type PassError = KubeError | PlannerError

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
} as const satisfies KubeErrorClasses

/** Every planner error, classed. */
export const plannerErrorClass = {
  RetryAfterTransientFailure: () => "transient",
  FinalizerMovedError: () => "transient",
} as const satisfies ErrorTable<PlannerError, PassFailureClass>

export const classOf = (e: PassError): PassFailureClass => (e._tag === "KubeError" ? kubeErrorClass[e.reason._tag] : outcomeOf(plannerErrorClass, e))

export const internalPlanned = (): ConditionIntent<"Planned"> => Planned.unknown("InternalError", INTERNAL_ERROR_MESSAGE)
