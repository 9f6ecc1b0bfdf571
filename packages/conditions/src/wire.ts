/**
 * The wire limits of `metav1.Condition` and the plain types of a condition, without effect's Schema (the decoder is
 * in ./condition): building and comparing conditions needs only these.
 */

/** `metav1.Condition.type`: an optional DNS-subdomain prefix and a name, at most 316 characters. */
export const CONDITION_TYPE_PATTERN = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/u
/** `metav1.Condition.reason`: CamelCase-ish, 1..1024 characters. */
export const CONDITION_REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/u
/** RFC 3339 date-time as the API server accepts it; we always *write* UTC whole seconds with "Z". */
export const RFC3339_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$/u

export const MAX_CONDITION_TYPE_LENGTH = 316
export const MAX_REASON_LENGTH = 1024
export const MAX_MESSAGE_LENGTH = 32768

/** `metav1.Condition.status`. */
export type ConditionStatus = "True" | "False" | "Unknown"

/** What a controller decides for one condition; `materialize` turns it into a wire `Condition`. */
export interface ConditionIntent<T extends string = string> {
  readonly type: T
  readonly status: ConditionStatus
  readonly reason: string
  readonly message: string
}
