/**
 * The refusals the API server enforces around approvals (operator.md §5.3; ADR 20261202-approval-admission):
 * ValidatingAdmissionPolicies with CEL and their bindings, and the approver/viewer RBAC roles with the custom verbs
 * `approve`, `revoke` and `acknowledge` on `runtimerollouts`. No webhooks. One optional MutatingAdmissionPolicy
 * (`policies/editor-stamp/`, for API servers that serve it) records the editor of a runtime spec change, so a plain
 * `kubectl apply -f clusterruntime.yaml` is admitted; the validating policy still checks that record, with or without
 * it (ADR 20261203-runtime-editor-stamp). `renderPolicies` writes them to `policies/` (golden-tested); the umbrella
 * chart ships the same objects.
 *
 * Gotchas: a policy is enforced a moment after it is created (the API server's policy informer); `oldObject` is
 * null on CREATE, so every rule that reads it is guarded by the operation or lives in a CREATE-only policy.
 */
import { stringify } from "yaml"
import { GENERATED_HEADER } from "./crd"
import { ANNOTATION_EDITED_BY, APPROVAL_VERBS, APPROVER_ROLE, FINALIZER_CLEANUP, LABEL_OUTCOME, PLAN_READER_ROLE, VIEWER_ROLE } from "./names"

export { APPROVAL_VERBS, APPROVER_ROLE, PLAN_READER_ROLE, VIEWER_ROLE }
import { GROUP, SINGLETON_NAME, VERSION } from "./resource"

export const POLICY_ROLLOUT_DECISIONS = "aicr-rollout-decisions"
export const POLICY_ROLLOUT_CREATION = "aicr-rollout-creation"
export const POLICY_RUNTIME_EDITS = "aicr-runtime-edits"
export const POLICY_EDITOR_STAMP = "aicr-runtime-editor-stamp"

/**
 * The API versions that serve MutatingAdmissionPolicy: `v1beta1` on Kubernetes 1.34 and 1.35 with the feature gate
 * `MutatingAdmissionPolicy=true` and `--runtime-config=admissionregistration.k8s.io/v1beta1=true` (both off by
 * default); `v1` from 1.36 (GA, on by default).
 */
export const EDITOR_STAMP_VERSIONS = ["v1beta1", "v1"] as const
export type EditorStampVersion = (typeof EDITOR_STAMP_VERSIONS)[number]
/** File under `policies/` holding the editor stamp for one API version. */
export const editorStampFile = (v: EditorStampVersion) => `editor-stamp/${v}.yaml`

export interface PolicyOptions {
  /** Where the operator runs (chart release namespace): its ServiceAccounts are operator identities. */
  readonly operatorNamespace: string
  /** Further namespaces whose ServiceAccounts are operator identities (AICR Jobs, validation). */
  readonly operatorIdentityNamespaces: ReadonlyArray<string>
}

export const DEFAULT_POLICY_OPTIONS: PolicyOptions = { operatorNamespace: "aicr-system", operatorIdentityNamespaces: ["aicr-validation"] }

const quote = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`
const list = (xs: ReadonlyArray<string>) => `[${xs.map(quote).join(", ")}]`

/** CEL: true when the request comes from a ServiceAccount of one of the operator's namespaces. */
export const operatorIdentityCel = (o: PolicyOptions): string => {
  const namespaces = [o.operatorNamespace, ...o.operatorIdentityNamespaces]
  return (
    `${list(namespaces)}.exists(ns, request.userInfo.username.startsWith('system:serviceaccount:' + ns + ':') || ` +
    `(has(request.userInfo.groups) && ('system:serviceaccounts:' + ns) in request.userInfo.groups))`
  )
}

const annotationOf = (obj: string, key: string) =>
  `has(${obj}.metadata.annotations) && ${quote(key)} in ${obj}.metadata.annotations ? ${obj}.metadata.annotations[${quote(key)}] : ''`
const labelsOf = (obj: string) => `has(${obj}.metadata.labels) ? ${obj}.metadata.labels : {}`
const finalizersOf = (obj: string) => `has(${obj}.metadata.finalizers) ? ${obj}.metadata.finalizers : []`
const verbCheck = (verb: string) => `authorizer.group(${quote(GROUP)}).resource('runtimerollouts').name(object.metadata.name).check(${quote(verb)}).allowed()`

interface Validation {
  readonly expression: string
  readonly messageExpression: string
  readonly reason: "Forbidden" | "Invalid"
}

const policy = (name: string, description: string, spec: Record<string, unknown>) => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicy",
  metadata: { name, labels: { "app.kubernetes.io/part-of": "aicr-operator" }, annotations: { "operator.aicr.run/description": description } },
  spec: { failurePolicy: "Fail", ...spec },
})

const binding = (name: string, paramRef?: Record<string, unknown>) => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: { name, labels: { "app.kubernetes.io/part-of": "aicr-operator" } },
  spec: { policyName: name, validationActions: ["Deny"], ...(paramRef ? { paramRef } : {}) },
})

const rules = (resource: string, operations: ReadonlyArray<string>) => ({
  resourceRules: [{ apiGroups: [GROUP], apiVersions: [VERSION], operations: [...operations], resources: [resource] }],
})

/**
 * Approvals, revocations and acknowledgements on RuntimeRollout UPDATE: the custom verb for each (refusal 1), the
 * writer's own name and groups (3), never the requester (2), never an operator identity (4); people change no
 * labels or finalizers (the outcome label is the operator's record).
 */
export const rolloutDecisionsPolicy = (o: PolicyOptions) => {
  const me = "request.userInfo.username"
  const validations: Validation[] = [
    {
      expression: "!(variables.approving || variables.revoking || size(variables.addedAcks) > 0) || !variables.operator",
      messageExpression: `'the operator\\'s own identity ' + ${me} + ' may not approve, revoke or acknowledge rollout ' + object.metadata.name + ': only people with the ClusterRole ${APPROVER_ROLE} decide'`,
      reason: "Forbidden",
    },
    ...APPROVAL_VERBS.map((verb): Validation => {
      const when = verb === "approve" ? "variables.approving" : verb === "revoke" ? "variables.revoking" : "size(variables.addedAcks) > 0"
      const doing = verb === "approve" ? "approve" : verb === "revoke" ? "revoke" : "acknowledge a step of"
      return {
        expression: `!(${when}) || ${verbCheck(verb)}`,
        messageExpression: `${me} + ' may not ${doing} rollout ' + object.metadata.name + ': that needs the verb "${verb}" on runtimerollouts.${GROUP}, which the ClusterRole ${APPROVER_ROLE} grants'`,
        reason: "Forbidden",
      }
    }),
    {
      expression: `!variables.approving || object.spec.approval.approvedBy == ${me}`,
      messageExpression: `'spec.approval.approvedBy is ' + object.spec.approval.approvedBy + ' but the request comes from ' + ${me} + ': approve in your own name (kubectl aicr approve fills it in)'`,
      reason: "Forbidden",
    },
    {
      expression: "!variables.approving || !has(object.spec.approval.groups) || object.spec.approval.groups.all(g, g in variables.groups)",
      messageExpression: `'spec.approval.groups may name only groups ' + ${me} + ' belongs to (' + variables.groups.join(', ') + ')'`,
      reason: "Forbidden",
    },
    {
      expression: `!variables.approving || !has(object.spec.requestedBy) || object.spec.requestedBy != ${me}`,
      messageExpression: `${me} + ' made the runtime edit that produced rollout ' + object.metadata.name + ' (spec.requestedBy): nobody approves their own change, ask another approver'`,
      reason: "Forbidden",
    },
    {
      expression: `!variables.revoking || object.spec.revocation.revokedBy == ${me}`,
      messageExpression: `'spec.revocation.revokedBy is ' + object.spec.revocation.revokedBy + ' but the request comes from ' + ${me} + ': revoke in your own name'`,
      reason: "Forbidden",
    },
    {
      expression: `variables.addedAcks.all(a, a.acknowledgedBy == ${me})`,
      messageExpression: `'spec.acknowledgements may only add entries with acknowledgedBy ' + ${me} + ': acknowledge in your own name'`,
      reason: "Forbidden",
    },
    {
      expression: `variables.operator || ((${labelsOf("object")}) == (${labelsOf("oldObject")}) && (${finalizersOf("object")}) == (${finalizersOf("oldObject")}))`,
      messageExpression: `${me} + ' may not change the labels or finalizers of rollout ' + object.metadata.name + ': the operator sets them (${LABEL_OUTCOME} is its record of the outcome)'`,
      reason: "Forbidden",
    },
  ]
  return policy(POLICY_ROLLOUT_DECISIONS, "Who may approve, revoke and acknowledge a RuntimeRollout, and in whose name (operator.md §5.3)", {
    matchConstraints: rules("runtimerollouts", ["UPDATE"]),
    variables: [
      { name: "operator", expression: operatorIdentityCel(o) },
      { name: "groups", expression: "has(request.userInfo.groups) ? request.userInfo.groups : []" },
      { name: "approving", expression: "has(object.spec.approval) && !has(oldObject.spec.approval)" },
      { name: "revoking", expression: "has(object.spec.revocation) && !has(oldObject.spec.revocation)" },
      { name: "oldAcks", expression: "has(oldObject.spec.acknowledgements) ? oldObject.spec.acknowledgements : []" },
      {
        name: "addedAcks",
        expression: "(has(object.spec.acknowledgements) ? object.spec.acknowledgements : []).filter(a, !variables.oldAcks.exists(o, o.step == a.step))",
      },
    ],
    validations,
  })
}

/**
 * RuntimeRollout CREATE, with the `cluster` ClusterRuntime as parameter: a rollout starts undecided, belongs to the
 * runtime, and its `requestedBy` is the editor the API server vouched for on the runtime (refusal 2's source).
 */
export const rolloutCreationPolicy = () => {
  const editedBy = `variables.editedBy`
  return policy(POLICY_ROLLOUT_CREATION, "A RuntimeRollout starts undecided and names the runtime's recorded editor as requestedBy", {
    paramKind: { apiVersion: `${GROUP}/${VERSION}`, kind: "ClusterRuntime" },
    matchConstraints: rules("runtimerollouts", ["CREATE"]),
    variables: [{ name: "editedBy", expression: annotationOf("params", ANNOTATION_EDITED_BY) }],
    validations: [
      {
        expression:
          "!has(object.spec.approval) && !has(object.spec.revocation) && (!has(object.spec.acknowledgements) || size(object.spec.acknowledgements) == 0)",
        messageExpression:
          "'rollout ' + object.metadata.name + ' must be created without spec.approval, spec.revocation and spec.acknowledgements: approvers add them later'",
        reason: "Forbidden",
      },
      {
        expression: "object.spec.runtimeUID == params.metadata.uid",
        messageExpression: `'spec.runtimeUID ' + object.spec.runtimeUID + ' is not the UID of ClusterRuntime ${SINGLETON_NAME} (' + params.metadata.uid + ')'`,
        reason: "Invalid",
      },
      {
        expression: `${editedBy} == '' ? !has(object.spec.requestedBy) : (has(object.spec.requestedBy) && object.spec.requestedBy == ${editedBy})`,
        messageExpression:
          `${editedBy} == '' ? 'spec.requestedBy must be absent: ClusterRuntime ${SINGLETON_NAME} records no editor (annotation ${ANNOTATION_EDITED_BY})' : ` +
          `'spec.requestedBy must be ' + ${editedBy} + ', the editor the API server recorded on ClusterRuntime ${SINGLETON_NAME} (annotation ${ANNOTATION_EDITED_BY})'`,
        reason: "Forbidden",
      },
    ],
  })
}

/**
 * ClusterRuntime CREATE/UPDATE: a spec change (or a change of the editor annotation) must name the requester as
 * the editor, so the name the planner copies into `spec.requestedBy` is the API server's; the operator's own
 * identities change nothing but their cleanup finalizer (refusal 6 of §5.3): not the spec, labels, annotations or
 * anyone else's finalizers.
 */
export const runtimeEditsPolicy = (o: PolicyOptions) => {
  const me = "request.userInfo.username"
  return policy(
    POLICY_RUNTIME_EDITS,
    "Spec edits of ClusterRuntime record the API server's view of the editor; the operator only manages its cleanup finalizer",
    {
      matchConstraints: rules("clusterruntimes", ["CREATE", "UPDATE"]),
      variables: [
        { name: "operator", expression: operatorIdentityCel(o) },
        { name: "editedBy", expression: annotationOf("object", ANNOTATION_EDITED_BY) },
        {
          name: "unchanged",
          expression: `request.operation == 'UPDATE' && object.spec == oldObject.spec && variables.editedBy == (${annotationOf("oldObject", ANNOTATION_EDITED_BY)})`,
        },
      ],
      validations: [
        {
          expression: `variables.operator || variables.unchanged || variables.editedBy == ${me}`,
          // Reached only where the editor stamp is not installed: the message gives the command to run. On UPDATE,
          // annotating first works because kubectl apply/edit/patch keep an annotation the change does not mention.
          messageExpression:
            `'a change to the spec of ClusterRuntime ' + object.metadata.name + ' must set metadata.annotations["${ANNOTATION_EDITED_BY}"] to your user name "' + ${me} + '" in the same request ` +
            `(it becomes spec.requestedBy of the rollout it produces, which you may not approve), and this cluster does not record it for you (MutatingAdmissionPolicy ${POLICY_EDITOR_STAMP} is not installed). ' + ` +
            `(request.operation == 'CREATE' ? 'Run: kubectl annotate --local --overwrite -o yaml -f clusterruntime.yaml ${ANNOTATION_EDITED_BY}=' + ${me} + ' | kubectl apply -f - (with your file in place of clusterruntime.yaml)' : ` +
            `'Run: kubectl annotate --overwrite clusterruntime ' + object.metadata.name + ' ${ANNOTATION_EDITED_BY}=' + ${me} + ' and then your command again')`,
          reason: "Forbidden",
        },
        {
          expression:
            `!variables.operator || (request.operation == 'UPDATE' && object.spec == oldObject.spec && (${labelsOf("object")}) == (${labelsOf("oldObject")}) && ` +
            `(has(object.metadata.annotations) ? object.metadata.annotations : {}) == (has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}) && ` +
            `(${finalizersOf("object")}).filter(f, f != ${quote(FINALIZER_CLEANUP)}) == (${finalizersOf("oldObject")}).filter(f, f != ${quote(FINALIZER_CLEANUP)}))`,
          messageExpression: `'the operator\\'s identity ' + ${me} + ' may change only its finalizer ${FINALIZER_CLEANUP} of ClusterRuntime ' + object.metadata.name + ' (and its status)'`,
          reason: "Forbidden",
        },
      ],
    },
  )
}

/**
 * The editor stamp (MutatingAdmissionPolicy, CEL, in the API server; no webhook): on a ClusterRuntime CREATE, or an
 * UPDATE that changes `spec` or the editor annotation, by anyone but an operator identity, it sets the annotation
 * `operator.aicr.run/edited-by` to `request.userInfo.username`, overwriting whatever the client sent. Mutation runs
 * before validation, so `aicr-runtime-edits` then sees the API server's name and admits the change; it stays the
 * rule, so a cluster without this policy refuses instead (with the command to run). Operator identities are not
 * stamped: the validating policy refuses their spec and annotation changes.
 */
export const editorStampPolicy = (o: PolicyOptions, version: EditorStampVersion) => {
  const oldEditor = `(${annotationOf("oldObject", ANNOTATION_EDITED_BY)})`
  const newEditor = `(${annotationOf("object", ANNOTATION_EDITED_BY)})`
  return {
    apiVersion: `admissionregistration.k8s.io/${version}`,
    kind: "MutatingAdmissionPolicy",
    metadata: {
      name: POLICY_EDITOR_STAMP,
      labels: { "app.kubernetes.io/part-of": "aicr-operator" },
      annotations: {
        "operator.aicr.run/description": "Records the API server's name for the editor of a ClusterRuntime spec change (it becomes the rollout's requestedBy)",
      },
    },
    spec: {
      failurePolicy: "Fail",
      reinvocationPolicy: "Never",
      matchConstraints: rules("clusterruntimes", ["CREATE", "UPDATE"]),
      matchConditions: [
        { name: "not-operator", expression: `!(${operatorIdentityCel(o)})` },
        { name: "spec-or-editor-changed", expression: `request.operation == 'CREATE' || object.spec != oldObject.spec || ${newEditor} != ${oldEditor}` },
      ],
      mutations: [
        {
          patchType: "ApplyConfiguration",
          applyConfiguration: { expression: `Object{metadata: Object.metadata{annotations: {${quote(ANNOTATION_EDITED_BY)}: request.userInfo.username}}}` },
        },
      ],
    },
  }
}

export const editorStampBinding = (version: EditorStampVersion) => ({
  apiVersion: `admissionregistration.k8s.io/${version}`,
  kind: "MutatingAdmissionPolicyBinding",
  metadata: { name: POLICY_EDITOR_STAMP, labels: { "app.kubernetes.io/part-of": "aicr-operator" } },
  spec: { policyName: POLICY_EDITOR_STAMP },
})

/** The editor stamp and its binding for one API version (policy before binding). */
export const editorStampObjects = (version: EditorStampVersion, o: PolicyOptions = DEFAULT_POLICY_OPTIONS) => [
  editorStampPolicy(o, version),
  editorStampBinding(version),
]

const clusterRole = (name: string, description: string, rules: ReadonlyArray<Record<string, unknown>>) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name, labels: { "app.kubernetes.io/part-of": "aicr-operator" }, annotations: { "operator.aicr.run/description": description } },
  rules,
})

const READ = ["get", "list", "watch"]

/** The roles people are bound to (by the chart from `approvers.users`/`approvers.groups`, or by hand). None aggregates into admin/edit/view. */
export const roles = (o: PolicyOptions) => [
  clusterRole(VIEWER_ROLE, "Read the runtime and its rollouts (kubectl aicr describe; bind aicr-operator-plan-reader in the operator namespace for plans)", [
    { apiGroups: [GROUP], resources: ["clusterruntimes", "runtimerollouts"], verbs: READ },
  ]),
  clusterRole(APPROVER_ROLE, "Approve, revoke and acknowledge rollouts (kubectl aicr approve/revoke/acknowledge)", [
    { apiGroups: [GROUP], resources: ["clusterruntimes"], verbs: READ },
    { apiGroups: [GROUP], resources: ["runtimerollouts"], verbs: [...READ, "patch", "update", ...APPROVAL_VERBS] },
  ]),
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: PLAN_READER_ROLE, namespace: o.operatorNamespace, labels: { "app.kubernetes.io/part-of": "aicr-operator" } },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: READ }],
  },
]

/** Every policy object with its binding, in apply order (policy before binding). */
export const policyObjects = (o: PolicyOptions = DEFAULT_POLICY_OPTIONS) => [
  rolloutDecisionsPolicy(o),
  binding(POLICY_ROLLOUT_DECISIONS),
  rolloutCreationPolicy(),
  binding(POLICY_ROLLOUT_CREATION, { name: SINGLETON_NAME, parameterNotFoundAction: "Deny" }),
  runtimeEditsPolicy(o),
  binding(POLICY_RUNTIME_EDITS),
]

const yamlOf = (objs: ReadonlyArray<unknown>) => GENERATED_HEADER + objs.map((x) => stringify(x, { lineWidth: 0, aliasDuplicateObjects: false })).join("---\n")

/** File name under `policies/` → YAML. */
export const renderPolicies = (o: PolicyOptions = DEFAULT_POLICY_OPTIONS): ReadonlyArray<{ readonly file: string; readonly yaml: string }> => [
  { file: "admission-policies.yaml", yaml: yamlOf(policyObjects(o)) },
  { file: "approver-roles.yaml", yaml: yamlOf(roles(o)) },
  ...EDITOR_STAMP_VERSIONS.map((v) => ({ file: editorStampFile(v), yaml: yamlOf(editorStampObjects(v, o)) })),
]
