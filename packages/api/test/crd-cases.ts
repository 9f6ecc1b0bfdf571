/**
 * Objects and edits the API server must refuse (status 422), with the message that must explain why: the CEL
 * rule's message or the schema's field path. Used by crds.int.test.ts.
 */
import { eksClusterRuntime, installRollout, samplePlan } from "../src/samples"

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw objects sent to the API server
type Obj = any

const D1 = samplePlan().desiredStateDigest
const D0 = `sha256:${"0".repeat(64)}`
const T = (h: number) => `2026-12-02T${String(h).padStart(2, "0")}:00:00Z`

export const runtime = (spec: Obj = {}, name = "cluster"): Obj => {
  const r = eksClusterRuntime()
  return { ...r, metadata: { name }, spec: { ...r.spec, ...spec } }
}
const placement = (p: Obj): Obj => runtime({ placement: p })
const accelerated = (g: Obj): Obj => placement({ accelerated: { nodeSelector: { pool: "gpu" }, ...g } })
const tol = (t: Obj): Obj => accelerated({ tolerations: [t] })

export const rollout = (spec: Obj = {}, name = "cluster-rollout"): Obj => {
  const r = installRollout(D1)
  return { ...r, metadata: { name }, spec: { ...r.spec, ...spec } }
}
export const approval = (a: Obj = {}): Obj => ({ approvedBy: "bob", reason: "Maintenance window", approvedAt: T(10), expiresAt: T(12), toDigest: D1, ...a })
const ack = (step: string, a: Obj = {}): Obj => ({ step, acknowledgedBy: "bob", at: T(11), ...a })
export const revocation = (r: Obj = {}): Obj => ({ revokedBy: "bob", reason: "Incident", revokedAt: T(11), ...r })
const upgrade = (spec: Obj = {}): Obj => rollout({ kind: "Upgrade", fromDigest: D0, ...spec })

export interface CreateCase {
  readonly name: string
  readonly plural: "clusterruntimes" | "runtimerollouts"
  readonly body: Obj
  readonly want: RegExp
}

const rt = (name: string, body: Obj, want: RegExp): CreateCase => ({ name, plural: "clusterruntimes", body, want })
const ro = (name: string, body: Obj, want: RegExp): CreateCase => ({ name, plural: "runtimerollouts", body, want })

export const refusedCreates: ReadonlyArray<CreateCase> = [
  rt("a ClusterRuntime not named cluster", runtime({}, "other"), /ClusterRuntime is a singleton: metadata.name must be 'cluster'/),
  rt("a ClusterRuntime without spec", { ...runtime(), spec: undefined }, /spec: Required value/),
  rt("an upper-case intent", runtime({ intent: "Training" }), /spec\.intent in body should match/),
  rt("a criteria value that is not a token", runtime({ criteria: { service: "eks!" } }), /spec\.criteria\.service in body should match/),
  rt(
    "a validation mode other than Required or Disabled",
    runtime({ validation: { deployment: "Optional" } }),
    /spec\.validation\.deployment: Unsupported value: "Optional"/,
  ),
  rt(
    "suspendEngine that is not a boolean",
    runtime({ suspendEngine: "yes" }),
    /spec\.suspendEngine: Invalid value: "string": spec\.suspendEngine in body must be of type boolean/,
  ),
  rt("a placement without any node group", placement({}), /spec\.placement must name at least one node group/),
  rt(
    "system and accelerated groups with the same nodeSelector",
    placement({ system: { nodeSelector: { pool: "a" } }, accelerated: { nodeSelector: { pool: "a" } } }),
    /must not use the same nodeSelector/,
  ),
  rt(
    "an empty nodeSelector",
    placement({ system: { nodeSelector: {} } }),
    /spec\.placement\.system\.nodeSelector: Invalid value: 0: spec\.placement\.system\.nodeSelector in body should have at least 1 properties/,
  ),
  rt("a nodeSelector key that is not a label key", accelerated({ nodeSelector: { "bad key": "x" } }), /nodeSelector keys must be valid label keys/),
  rt(
    "a nodeSelector value that is not a label value",
    accelerated({ nodeSelector: { pool: "g p u" } }),
    /spec\.placement\.accelerated\.nodeSelector\.pool in body should match/,
  ),
  rt(
    "more than 16 nodeSelector entries",
    accelerated({ nodeSelector: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }),
    /spec\.placement\.accelerated\.nodeSelector: Too many: 17: must have at most 16 items/,
  ),
  rt("a group without nodeSelector", placement({ accelerated: { tolerations: [] } }), /spec\.placement\.accelerated\.nodeSelector: Required value/),
  rt(
    "a toleration with operator Exists and a value",
    tol({ key: "nvidia.com/gpu", operator: "Exists", value: "x" }),
    /a toleration with operator Exists must not set a value/,
  ),
  rt("a toleration without key that is not Exists", tol({ operator: "Equal", value: "x" }), /a toleration without a key must use operator Exists/),
  rt(
    "a toleration with operator Equal and no value",
    tol({ key: "nvidia.com/gpu", operator: "Equal", effect: "NoSchedule" }),
    /spec\.placement\.accelerated\.tolerations\[0\]: Invalid value: a toleration with operator Equal \(the default when operator is omitted\) must set a value/,
  ),
  rt(
    "a toleration with operator Equal and an empty value",
    tol({ key: "nvidia.com/gpu", operator: "Equal", value: "", effect: "NoSchedule" }),
    /spec\.placement\.accelerated\.tolerations\[0\]: .*must set a value: to tolerate any value of the key, use operator Exists/,
  ),
  rt(
    "a toleration with a key, no operator and no value (Equal by default)",
    tol({ key: "nvidia.com/gpu", effect: "NoSchedule" }),
    /spec\.placement\.accelerated\.tolerations\[0\]: .*operator Equal \(the default when operator is omitted\) must set a value/,
  ),
  rt(
    "an empty nodeSelector for the accelerated group",
    placement({ accelerated: { nodeSelector: {} } }),
    /spec\.placement\.accelerated\.nodeSelector: Invalid value: 0: spec\.placement\.accelerated\.nodeSelector in body should have at least 1 properties/,
  ),
  rt(
    "tolerationSeconds with an effect other than NoExecute",
    tol({ key: "k", operator: "Exists", effect: "NoSchedule", tolerationSeconds: 30 }),
    /tolerationSeconds is only allowed with effect NoExecute/,
  ),
  rt("an unknown toleration effect", tol({ key: "k", operator: "Exists", effect: "Never" }), /tolerations\[0\]\.effect: Unsupported value: "Never"/),
  rt(
    "more than 16 tolerations",
    accelerated({ tolerations: Array.from({ length: 17 }, (_, i) => ({ key: `k${i}`, operator: "Exists" })) }),
    /tolerations: Too many: 17: must have at most 16 items/,
  ),
  rt(
    "a pin that is not a sha256 digest",
    runtime({ pin: { desiredStateDigest: "sha256:abc" } }),
    /spec\.pin\.desiredStateDigest in body should match '\^sha256:\[a-f0-9\]\{64\}\$'/,
  ),
  rt(
    "an override path without a component",
    runtime({ overrides: [{ path: "driver.version", value: "1" }] }),
    /spec\.overrides\[0\]\.path in body should match/,
  ),
  rt(
    "an override value over 4096 characters",
    runtime({ overrides: [{ path: "gpuoperator:a", value: "x".repeat(4097) }] }),
    /spec\.overrides\[0\]\.value: Too long: may not be more than 4096/,
  ),
  rt("an override value over 4096 bytes in UTF-8", runtime({ overrides: [{ path: "gpuoperator:a", value: "é".repeat(2100) }] }), /MaxOverrideValueBytes/),
  rt(
    "two overrides of the same path",
    runtime({
      overrides: [
        { path: "c:a", value: "1" },
        { path: "c:a", value: "2" },
      ],
    }),
    /spec\.overrides\[1\]: Duplicate value/,
  ),
  rt(
    "more than 64 overrides",
    runtime({ overrides: Array.from({ length: 65 }, (_, i) => ({ path: `c:p${i}`, value: "1" })) }),
    /spec\.overrides: Too many: 65: must have at most 64 items/,
  ),
  rt("an adoption UID that is not a UID", runtime({ adoption: { fromRuntimeUID: "cluster" } }), /spec\.adoption\.fromRuntimeUID in body should match/),
  ro("an unknown rollout kind", rollout({ kind: "Reinstall" }), /spec\.kind: Unsupported value: "Reinstall"/),
  ro("an Install with a fromDigest", rollout({ fromDigest: D0 }), /spec\.fromDigest must be absent for an Install/),
  ro("an Upgrade without a fromDigest", rollout({ kind: "Upgrade" }), /spec\.fromDigest is required for an Upgrade or a Rollback/),
  ro("a toDigest that is not a sha256 digest", rollout({ toDigest: "latest" }), /spec\.toDigest in body should match/),
  ro("a runtimeUID that is not a UID", rollout({ runtimeUID: "cluster" }), /spec\.runtimeUID in body should match/),
  ro("a deadline that is not RFC 3339", rollout({ deadline: "tomorrow" }), /spec\.deadline in body must be of type date-time/),
  ro("an approval for another target plan", rollout({ approval: approval({ toDigest: D0 }) }), /an approval binds to the exact target plan/),
  ro(
    "an approval that expires before it was given",
    rollout({ approval: approval({ expiresAt: T(9) }) }),
    /spec\.approval\.expiresAt must be after spec\.approval\.approvedAt/,
  ),
  ro(
    "an approval that outlives the deadline",
    rollout({ approval: approval({ expiresAt: "2026-12-04T00:00:00Z" }) }),
    /spec\.approval\.expiresAt must not be after spec\.deadline/,
  ),
  ro("an approval without a reason", rollout({ approval: approval({ reason: "" }) }), /spec\.approval\.reason in body should be at least 1 chars long/),
  ro(
    "an approval reason over 1024 characters",
    rollout({ approval: approval({ reason: "x".repeat(1025) }) }),
    /spec\.approval\.reason: Too long: may not be more than 1024/,
  ),
  ro("acknowledgements without an approval", rollout({ acknowledgements: [ack("gpu-operator")] }), /spec\.acknowledgements need an approval first/),
  ro(
    "two acknowledgements of the same step",
    rollout({ approval: approval(), acknowledgements: [ack("a"), ack("a")] }),
    /spec\.acknowledgements\[1\]: Duplicate value/,
  ),
]

export interface EditCase {
  readonly name: string
  readonly initial: Obj
  /** A JSON merge patch. */
  readonly patch: Obj
  readonly want: RegExp
}

const approved = (spec: Obj = {}): Obj => rollout({ approval: approval(), ...spec })

export const refusedEdits: ReadonlyArray<EditCase> = [
  {
    name: "changing runtimeUID",
    initial: rollout(),
    patch: { spec: { runtimeUID: "11111111-2222-3333-4444-555555555555" } },
    want: /spec\.runtimeUID is immutable/,
  },
  { name: "changing toDigest", initial: rollout(), patch: { spec: { toDigest: D0 } }, want: /spec\.toDigest is immutable/ },
  { name: "changing kind", initial: upgrade(), patch: { spec: { kind: "Rollback" } }, want: /spec\.kind is immutable/ },
  { name: "changing deadline", initial: rollout(), patch: { spec: { deadline: "2026-12-05T00:00:00Z" } }, want: /spec\.deadline is immutable/ },
  { name: "changing requiresApproval", initial: rollout(), patch: { spec: { requiresApproval: false } }, want: /spec\.requiresApproval is immutable/ },
  { name: "changing fromDigest", initial: upgrade(), patch: { spec: { fromDigest: `sha256:${"9".repeat(64)}` } }, want: /spec\.fromDigest is immutable/ },
  { name: "removing fromDigest", initial: upgrade(), patch: { spec: { fromDigest: null, kind: "Upgrade" } }, want: /spec\.fromDigest is immutable/ },
  { name: "changing requestedBy", initial: rollout(), patch: { spec: { requestedBy: "mallory" } }, want: /spec\.requestedBy is immutable/ },
  { name: "removing requestedBy", initial: rollout(), patch: { spec: { requestedBy: null } }, want: /spec\.requestedBy is immutable/ },
  {
    name: "changing the approval's reason",
    initial: approved(),
    patch: { spec: { approval: { reason: "Another reason" } } },
    want: /spec\.approval is set-once/,
  },
  { name: "extending the approval", initial: approved(), patch: { spec: { approval: { expiresAt: T(13) } } }, want: /spec\.approval is set-once/ },
  { name: "removing the approval", initial: approved(), patch: { spec: { approval: null } }, want: /spec\.approval is set-once/ },
  {
    name: "changing the revocation",
    initial: approved({ revocation: revocation() }),
    patch: { spec: { revocation: { reason: "Changed my mind" } } },
    want: /spec\.revocation is set-once/,
  },
  {
    name: "removing the revocation",
    initial: approved({ revocation: revocation() }),
    patch: { spec: { revocation: null } },
    want: /spec\.revocation is set-once/,
  },
  {
    name: "changing an acknowledgement",
    initial: approved({ acknowledgements: [ack("a")] }),
    patch: { spec: { acknowledgements: [ack("a", { reason: "edited" })] } },
    want: /an acknowledgement cannot be changed once written/,
  },
  {
    name: "removing an acknowledgement",
    initial: approved({ acknowledgements: [ack("a"), ack("b")] }),
    patch: { spec: { acknowledgements: [ack("b")] } },
    want: /spec\.acknowledgements is append-only/,
  },
  {
    name: "removing all acknowledgements",
    initial: approved({ acknowledgements: [ack("a")] }),
    patch: { spec: { acknowledgements: null } },
    want: /spec\.acknowledgements is append-only/,
  },
]

/** Edits approvers are allowed to make. */
export const allowedEdits: ReadonlyArray<{ readonly name: string; readonly initial: Obj; readonly patch: Obj }> = [
  { name: "setting the approval once", initial: rollout(), patch: { spec: { approval: approval() } } },
  { name: "revoking an approved rollout", initial: approved(), patch: { spec: { revocation: revocation() } } },
  { name: "appending an acknowledgement", initial: approved({ acknowledgements: [ack("a")] }), patch: { spec: { acknowledgements: [ack("a"), ack("b")] } } },
  { name: "re-sending an identical approval", initial: approved(), patch: { spec: { approval: approval() } } },
  {
    name: "labelling a revoked rollout with its outcome",
    initial: approved({ revocation: revocation() }),
    patch: { metadata: { labels: { "operator.aicr.run/outcome": "Revoked" } } },
  },
]
