/**
 * The wire `Condition`: a mirror of `metav1.Condition` and of its OpenAPI validation, so our decoder refuses exactly
 * what the API server refuses (design/style.md §B.3).
 *
 * Patterns carry the `u` flag so that `Schema.toJsonSchemaDocument` exports them into the generated CRDs. The
 * patterns, limits and plain types live in ./wire, which loads no Schema: code that only builds conditions
 * (every controller at run time) does not load effect's Schema module (docs/benchmarks.md).
 */
import { Schema } from "effect"
import { CONDITION_REASON_PATTERN, CONDITION_TYPE_PATTERN, MAX_CONDITION_TYPE_LENGTH, MAX_MESSAGE_LENGTH, MAX_REASON_LENGTH, RFC3339_PATTERN } from "./wire"

export {
  CONDITION_REASON_PATTERN,
  CONDITION_TYPE_PATTERN,
  type ConditionIntent,
  MAX_CONDITION_TYPE_LENGTH,
  MAX_MESSAGE_LENGTH,
  MAX_REASON_LENGTH,
  RFC3339_PATTERN,
} from "./wire"

export const ConditionStatus = Schema.Literals(["True", "False", "Unknown"])
export type ConditionStatus = typeof ConditionStatus.Type

export const ConditionType = Schema.String.check(Schema.isPattern(CONDITION_TYPE_PATTERN), Schema.isMaxLength(MAX_CONDITION_TYPE_LENGTH)).annotate({
  description: "Type of condition in CamelCase or in foo.example.com/CamelCase.",
})

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

export const decodeCondition = Schema.decodeUnknownResult(Condition)
