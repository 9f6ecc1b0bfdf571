/**
 * How a failed pass ends (design/style.md §B.5): the one table that classes every failure of the step-executor's API
 * calls, and the conditions of the defect path (`InternalError` and the Warning Event are `failedPass` of
 * @aicr/runtime). A new `KubeError` reason does not compile until it has a row here.
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
import { kubeClassOf, type KubeErrorClasses } from "@aicr/runtime"

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
} as const satisfies KubeErrorClasses

export const classOf = kubeClassOf(kubeErrorClass)

export const internalProgressing = (): ConditionIntent<"Progressing"> => Progressing.unknown("InternalError", INTERNAL_ERROR_MESSAGE)
export const internalEngine = (): ConditionIntent<"EngineAvailable"> => EngineAvailable.unknown("InternalError", INTERNAL_ERROR_MESSAGE)
