/**
 * Names, labels and annotations on the wire (operator.md §3.5). [D]/[C] values are exact; the [I] ones are
 * decided in ADR 20261202-plan-document.
 */
import { shortDigest } from "@aicr/conditions"

export const LABEL_PREFIX = "operator.aicr.run/"

/** [D] `operator.aicr.run/role=plan` on plan ConfigMaps; `content` on content ConfigMaps [I]. */
export const LABEL_ROLE = "operator.aicr.run/role"
export const ROLE_PLAN = "plan"
export const ROLE_CONTENT = "content"
/** [I] AICR Jobs and their run-scoped objects (inputs, output ConfigMap, per-run credential Secret). */
export const ROLE_AICR_JOB = "aicr-job"
/** [I] Labels on every engine object: the basis of inventory and adoption. */
export const LABEL_RUNTIME_UID = "operator.aicr.run/runtime-uid"
export const LABEL_RELEASE = "operator.aicr.run/release"
/** [I] On objects made for one rollout (validation Jobs, per-run Secrets): the rollout's name. */
export const LABEL_ROLLOUT = "operator.aicr.run/rollout"
/** [I] Value: `planKey(desiredStateDigest)` (a label value holds at most 63 characters). */
export const LABEL_PLAN = "operator.aicr.run/plan"
/** [I] The full digest, where a label is too short. */
export const ANNOTATION_DESIRED_STATE_DIGEST = "operator.aicr.run/desired-state-digest"
/** [I] Durable outcome of a rollout, set by the planner when it ends. */
export const LABEL_OUTCOME = "operator.aicr.run/outcome"
export const OUTCOMES = ["Succeeded", "Failed", "Expired", "Revoked", "Superseded"] as const
export type Outcome = (typeof OUTCOMES)[number]

/** [D] ECR token expiry on the Argo CD repo-creds Secret. */
export const ANNOTATION_TOKEN_EXPIRES_AT = "operator.aicr.run/token-expires-at"
/** [I] Who last edited the runtime spec; admission requires it to be the editor. Copied into `spec.requestedBy`. */
export const ANNOTATION_EDITED_BY = "operator.aicr.run/edited-by"
/** [I] Ask for a new rollout for the same transition after a terminal one: value = the terminal rollout's name. */
export const ANNOTATION_RETRY = "operator.aicr.run/retry"
/** [D] The approver ClusterRole (chart `approvers.users`/`approvers.groups`); [I] the viewer and plan-reader roles. */
export const APPROVER_ROLE = "aicr-operator-approver"
export const VIEWER_ROLE = "aicr-operator-viewer"
export const PLAN_READER_ROLE = "aicr-operator-plan-reader"
/** [I] Custom verbs on `runtimerollouts`, checked by admission with CEL's `authorizer` (ADR 20261202-approval-admission). */
export const APPROVAL_VERBS = ["approve", "revoke", "acknowledge"] as const
/** [I] The cleanup finalizer on ClusterRuntime (operator.md §3.2). */
export const FINALIZER_CLEANUP = "operator.aicr.run/cleanup"

/** [C] Plan ConfigMap prefix and data key; [C] `MaxConfigMapBytes`. */
export const PLAN_CONFIGMAP_PREFIX = "aicr-plan-"
export const PLAN_DATA_KEY = "plan.json"
export const MAX_CONFIGMAP_BYTES = 1024 * 1024
/** [C] Content ConfigMap data keys. */
export const CONTENT_KEYS = ["recipe.json", "values.json", "snapshot.json", "assessment.json"] as const
export type ContentKey = (typeof CONTENT_KEYS)[number]
export const CONTENT_CONFIGMAP_PREFIX = "aicr-content-"

const hexOf = (digest: string): string => {
  const m = /^sha256:([a-f0-9]{64})$/u.exec(digest)
  if (m === null) throw new Error(`Not a sha256 digest: ${digest}`)
  return m[1] as string
}

/** [I] 32 hex characters (128 bits): fits a label value and keeps names short. */
export const planKey = (desiredStateDigest: string): string => hexOf(desiredStateDigest).slice(0, 32)
/** [I] `aicr-plan-<planKey>`: one immutable plan ConfigMap per desiredStateDigest. */
export const planConfigMapName = (desiredStateDigest: string): string => `${PLAN_CONFIGMAP_PREFIX}${planKey(desiredStateDigest)}`
/** [I] `aicr-content-<32 hex of inputDigest>`: the resolver's content ConfigMap for one resolution. */
export const contentConfigMapName = (inputDigest: string): string => `${CONTENT_CONFIGMAP_PREFIX}${hexOf(inputDigest).slice(0, 32)}`
/** [I] `cluster-<12 hex of toDigest>-<n>`: the n-th rollout towards a target plan (n ≥ 1). */
export const rolloutName = (toDigest: string, n: number): string => {
  if (!Number.isInteger(n) || n < 1) throw new Error(`Rollout attempt must be a positive integer, got ${n}`)
  hexOf(toDigest)
  return `cluster-${shortDigest(toDigest)}-${n}`
}
export { shortDigest }
