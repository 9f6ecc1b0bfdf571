/**
 * How a failed pass ends (design/style.md §B.5): the one table that classes every failure of the approval-guard's API
 * calls, and the defect path. A new `KubeError` reason does not compile until it has a row here.
 *
 * - transient: the API server is busy or unreachable, or the cache was stale (`Conflict`, `NotFound`, `Gone`): the
 *   pass fails and the driver retries with backoff; nothing is reported (the next pass decides from fresh state).
 * - defect: a request the API server should never refuse, or a bug (a thrown exception, an apply into another
 *   controller's fields, RBAC the chart grants missing): `Approved=Unknown/InternalError` on the rollout (its
 *   `status.approval` kept), one Warning Event per transition, the detail in the log, and the driver's backoff.
 */
import type { KubeError, KubeErrorTag } from "@aicr/kube"
import type { FailureClass } from "@aicr/runtime"
import { Cause, Data, Option } from "effect"

/** Every `KubeError` reason, classed. */
export const kubeErrorClass = {
  Unavailable: "transient",
  Timeout: "transient",
  TooManyRequests: "transient",
  // A status apply against a rollout that changed or went since the cache showed it: decide again from the cache.
  Conflict: "transient",
  NotFound: "transient",
  Gone: "transient",
  // The guard applies its own room without force and creates only SubjectAccessReviews; RBAC comes with the chart.
  FieldManagerConflict: "defect",
  AlreadyExists: "defect",
  Invalid: "defect",
  Forbidden: "defect",
  Unauthorized: "defect",
} as const satisfies { readonly [K in KubeErrorTag]: Exclude<FailureClass, "terminal"> }

/** The pass failed on a defect; `Approved=Unknown/InternalError` is written. The driver backs off and logs it. */
export class InternalError extends Data.TaggedError("InternalError")<{ readonly message: string }> {}

export type Failure =
  { readonly class: "transient"; readonly error: KubeError } | { readonly class: "defect"; readonly message: string; readonly cause: Cause.Cause<unknown> }

/** Classes the cause of a failed pass. */
export const classify = (cause: Cause.Cause<KubeError>): Failure => {
  const error = Cause.findErrorOption(cause)
  if (Option.isSome(error) && !Cause.hasDies(cause) && kubeErrorClass[error.value.reason._tag] === "transient")
    return { class: "transient", error: error.value }
  const squashed = Cause.squash(cause)
  const message = Option.isSome(error) ? error.value.message : squashed instanceof Error ? squashed.message : String(squashed)
  return { class: "defect", message, cause }
}
