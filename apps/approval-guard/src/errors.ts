/**
 * How a failed pass ends (design/style.md §B.5): the one table that classes every failure of the approval-guard's API
 * calls (the defect path, `InternalError` and the Warning Event are `failedPass` of @aicr/runtime). A new `KubeError`
 * reason does not compile until it has a row here.
 *
 * - transient: the API server is busy or unreachable, or the cache was stale (`Conflict`, `NotFound`, `Gone`): the
 *   pass fails and the driver retries with backoff; nothing is reported (the next pass decides from fresh state).
 * - defect: a request the API server should never refuse, or a bug (a thrown exception, an apply into another
 *   controller's fields, RBAC the chart grants missing): `Approved=Unknown/InternalError` on the rollout (its
 *   `status.approval` kept), one Warning Event per transition, the detail in the log, and the driver's backoff.
 */
import { kubeClassOf, type KubeErrorClasses } from "@aicr/runtime"

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
} as const satisfies KubeErrorClasses

export const classOf = kubeClassOf(kubeErrorClass)
