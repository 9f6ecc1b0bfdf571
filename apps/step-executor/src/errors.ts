/**
 * How a failed pass ends (design/style.md §B.5): the one table that classes every failure of the step-executor's API
 * calls, and the defect path. A new `KubeError` reason does not compile until it has a row here.
 *
 * - transient: the API server is busy or unreachable, or the cache was stale (`Conflict`, `AlreadyExists`, `NotFound`, `Gone`): the
 *   pass fails and the driver retries with backoff; nothing is reported (the next pass decides from fresh state).
 * - defect: a request the API server should never refuse, or a bug (a thrown exception, an apply into another
 *   controller's fields, RBAC the chart grants missing): `Progressing=Unknown/InternalError` on the open rollout and
 *   `EngineAvailable=Unknown/InternalError` on the runtime, one Warning Event per transition, the detail in the
 *   log, and the driver's backoff.
 *
 * Refusals the executor expects are not failures and never reach this table: a suspension patch refused by an
 * admission policy (`EngineSuspensionRefused`), a Remove step's Application already gone.
 */
import { EngineAvailable, Progressing } from "@aicr/api"
import { type ConditionIntent, INTERNAL_ERROR_MESSAGE } from "@aicr/conditions"
import type { KubeError, KubeErrorTag } from "@aicr/kube"
import { Cause, Data, Option } from "effect"

export type FailureClass = "transient" | "defect"

/** Every `KubeError` reason, classed. */
export const kubeErrorClass = {
  Unavailable: "transient",
  Timeout: "transient",
  TooManyRequests: "transient",
  // A write decided on a stale view (the Application moved since its resourceVersion, or was created since the cache
  // showed it absent), or an object gone since the cache saw it: decide again from the cache.
  Conflict: "transient",
  AlreadyExists: "transient",
  NotFound: "transient",
  Gone: "transient",
  // The executor applies without force into its own fields; RBAC comes with the chart.
  FieldManagerConflict: "defect",
  Invalid: "defect",
  Forbidden: "defect",
  Unauthorized: "defect",
} as const satisfies { readonly [K in KubeErrorTag]: FailureClass }

/** The pass failed on a defect; its conditions are written. The driver backs off and logs it. */
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

export const internalProgressing = (): ConditionIntent<"Progressing"> => Progressing.unknown("InternalError", INTERNAL_ERROR_MESSAGE)
export const internalEngine = (): ConditionIntent<"EngineAvailable"> => EngineAvailable.unknown("InternalError", INTERNAL_ERROR_MESSAGE)
