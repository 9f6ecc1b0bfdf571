/**
 * The wire `Condition`: a mirror of `metav1.Condition` and of its OpenAPI validation, so our decoder refuses exactly
 * what the API server refuses (design/style.md §B.3).
 *
 * Patterns carry the `u` flag so that `Schema.toJsonSchemaDocument` exports them into the generated CRDs.
 */
import { Schema } from "effect"

/** `metav1.Condition.type`: an optional DNS-subdomain prefix and a name, at most 316 characters. */
export const CONDITION_TYPE_PATTERN =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/u
/** `metav1.Condition.reason`: CamelCase-ish, 1..1024 characters. */
export const CONDITION_REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/u
/** RFC 3339 date-time as the API server accepts it; we always *write* UTC whole seconds with "Z". */
export const RFC3339_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$/u

export const MAX_CONDITION_TYPE_LENGTH = 316
export const MAX_REASON_LENGTH = 1024
export const MAX_MESSAGE_LENGTH = 32768

export const ConditionStatus = Schema.Literals(["True", "False", "Unknown"])
export type ConditionStatus = typeof ConditionStatus.Type

export const ConditionType = Schema.String.check(
  Schema.isPattern(CONDITION_TYPE_PATTERN),
  Schema.isMaxLength(MAX_CONDITION_TYPE_LENGTH),
).annotate({ description: "Type of condition in CamelCase or in foo.example.com/CamelCase." })

export const ConditionReason = Schema.String.check(
  Schema.isPattern(CONDITION_REASON_PATTERN),
  Schema.isMinLength(1),
  Schema.isMaxLength(MAX_REASON_LENGTH),
).annotate({ description: "A programmatic identifier for the reason of the last transition, in CamelCase." })

export const ConditionMessage = Schema.String.check(Schema.isMaxLength(MAX_MESSAGE_LENGTH)).annotate({
  description: "A human-readable message with details about the transition; deterministic, no trailing period.",
})

/** Any RFC 3339 time (decoding); bounded so CEL cost estimates stay small. */
export const Rfc3339 = Schema.String.check(Schema.isPattern(RFC3339_PATTERN), Schema.isMaxLength(64)).annotate({
  format: "date-time",
})

export const ObservedGeneration = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
  description: "The metadata.generation the writer read when it set this condition.",
})

export const Condition = Schema.Struct({
  type: ConditionType,
  status: ConditionStatus,
  observedGeneration: Schema.optionalKey(ObservedGeneration),
  lastTransitionTime: Rfc3339.annotate({ description: "When the status last changed (whole seconds, UTC)." }),
  reason: ConditionReason,
  message: ConditionMessage,
}).annotate({ description: "A metav1.Condition." })
export type Condition = typeof Condition.Type

/** What a controller decides for one condition; `materialize` turns it into a wire `Condition`. */
export interface ConditionIntent<T extends string = string> {
  readonly type: T
  readonly status: ConditionStatus
  readonly reason: string
  readonly message: string
}

export const decodeCondition = Schema.decodeUnknownResult(Condition)
