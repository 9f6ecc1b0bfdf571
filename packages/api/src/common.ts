/**
 * Bounded building blocks for the CRD schemas. Every string, list and map is bounded (operator.md §3.1 rule 8) so
 * CEL rules stay within the cost budget; patterns carry the `u` flag so they reach the generated CRDs.
 */
import { Rfc3339 } from "@aicr/conditions"
import { Schema } from "effect"

/** A CEL rule attached to a schema node; rendered as `x-kubernetes-validations` in the CRD. */
export interface CelRule {
  readonly rule: string
  readonly message: string
  /** JSONPath of the field to report, relative to the node (e.g. `.expiresAt`). */
  readonly fieldPath?: string
  readonly reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate"
}

/** Annotation that carries CEL rules into the CRD. */
export const cel = (...rules: ReadonlyArray<CelRule>) => ({ "x-kubernetes-validations": rules })
/** `x-kubernetes-list-type: map` keyed by `keys`: SSA merges entries by key and the API server refuses duplicates. */
export const listMap = (...keys: ReadonlyArray<string>) => ({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys })

export const text = (max: number, min = 0) =>
  min > 0 ? Schema.String.check(Schema.isMinLength(min), Schema.isMaxLength(max)) : Schema.String.check(Schema.isMaxLength(max))

export const DIGEST_PATTERN = /^sha256:[a-f0-9]{64}$/u
/** A `desiredStateDigest`, `inputDigest` or content digest: `sha256:` and 64 lower-case hex characters. */
export const Digest = Schema.String.check(Schema.isPattern(DIGEST_PATTERN), Schema.isMaxLength(71)).annotate({
  description: "A sha256 digest, sha256:<64 lower-case hex>.",
})

/** DNS-1123 label: release names, namespaces, AICR criteria tokens. */
export const DNS1123_LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/u
export const Dns1123Label = Schema.String.check(Schema.isPattern(DNS1123_LABEL_PATTERN), Schema.isMaxLength(63))

/** DNS-1123 subdomain: object names. */
export const DNS1123_SUBDOMAIN_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/u
export const ObjectName = Schema.String.check(Schema.isPattern(DNS1123_SUBDOMAIN_PATTERN), Schema.isMaxLength(253))

export const UID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u
export const Uid = Schema.String.check(Schema.isPattern(UID_PATTERN), Schema.isMaxLength(36)).annotate({
  description: "A Kubernetes object UID.",
})

/** RFC 3339 time (`format: date-time`, a CEL timestamp). */
export const Time = Rfc3339

/** A Kubernetes user name as the API server reports it in `request.userInfo.username`. */
export const UserName = text(512, 1)
/** Free text a human gives as a reason (approve, revoke, acknowledge); `--reason` is at most 1024 characters. */
export const HumanReason = text(1024, 1)

/** An AICR criteria/intent/platform value: a lower-case token (`eks`, `h100`, `ubuntu`, `training`, `kubeflow`). */
export const AicrToken = Dns1123Label

/** An OCI reference (`registry/repo[:tag][@sha256:…]`), no whitespace. */
export const OciReference = Schema.String.check(Schema.isPattern(/^[^\s]+$/u), Schema.isMaxLength(512))

export const NonNegativeInt = (max: number) => Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(max))

/** Label key: optional DNS-subdomain prefix and a name of at most 63 characters. */
export const LABEL_KEY_PATTERN = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/u
export const LabelKey = Schema.String.check(Schema.isPattern(LABEL_KEY_PATTERN), Schema.isMaxLength(317))
export const LABEL_VALUE_PATTERN = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/u
export const LabelValue = Schema.String.check(Schema.isPattern(LABEL_VALUE_PATTERN), Schema.isMaxLength(63))

// CEL has no access to map-key schemas, so key syntax is checked by a rule (RE2 syntax, no `u` flag needed).
const LABEL_KEY_RE2 = LABEL_KEY_PATTERN.source.replaceAll("\\/", "/").replaceAll("\\", "\\\\")
export const MAX_NODE_SELECTOR_ENTRIES = 16
export const NodeSelector = Schema.Record(LabelKey, LabelValue)
  .check(Schema.isMinProperties(1), Schema.isMaxProperties(MAX_NODE_SELECTOR_ENTRIES))
  .annotate({
    description: "Node labels that select the group (all must match).",
    ...cel({ rule: `self.all(k, k.matches('${LABEL_KEY_RE2}'))`, message: "nodeSelector keys must be valid label keys ([prefix/]name)" }),
  })

export const MAX_TOLERATIONS = 16
/** The core `Toleration` shape, with the core validation rules as CEL. */
export const Toleration = Schema.Struct({
  key: Schema.optionalKey(LabelKey),
  operator: Schema.optionalKey(Schema.Literals(["Exists", "Equal"])),
  value: Schema.optionalKey(LabelValue),
  effect: Schema.optionalKey(Schema.Literals(["NoSchedule", "PreferNoSchedule", "NoExecute"])),
  tolerationSeconds: Schema.optionalKey(Schema.Int),
}).annotate({
  description: "A core/v1 Toleration.",
  ...cel(
    {
      rule: "!has(self.operator) || self.operator != 'Exists' || !has(self.value) || self.value == ''",
      message: "a toleration with operator Exists must not set a value",
    },
    {
      rule: "(has(self.key) && self.key != '') || (has(self.operator) && self.operator == 'Exists')",
      message: "a toleration without a key must use operator Exists",
    },
    // Core allows Equal with an empty value; AICR's flags (key=value:effect, key:effect) would read it as Exists.
    {
      rule: "(has(self.operator) && self.operator == 'Exists') || (has(self.value) && self.value != '')",
      message:
        "a toleration with operator Equal (the default when operator is omitted) must set a value: to tolerate any value of the key, use operator Exists",
    },
    {
      rule: "!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",
      message: "tolerationSeconds is only allowed with effect NoExecute",
    },
  ),
})
export type Toleration = typeof Toleration.Type
export const Tolerations = Schema.Array(Toleration).check(Schema.isMaxLength(MAX_TOLERATIONS))

/** A reference to a namespaced object. */
export const NamespacedName = Schema.Struct({ namespace: Dns1123Label, name: ObjectName })
