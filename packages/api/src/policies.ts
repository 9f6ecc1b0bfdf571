/**
 * The refusals the API server enforces around approvals (operator.md §5.3; ADR 20261202-approval-admission):
 * ValidatingAdmissionPolicies with CEL and their bindings, and the approver/viewer RBAC roles with the custom verbs
 * `approve`, `revoke` and `acknowledge` on `runtimerollouts`. No webhooks, no mutation. `renderPolicies` writes them
 * to `policies/` (golden-tested); the umbrella chart ships the same objects.
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

const annotationOf = (obj: string, key: string) => `has(${obj}.metadata.annotations) && ${quote(key)} in ${obj}.metadata.annotations ? ${obj}.metadata.annotations[${quote(key)}] : ''`
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
      { name: "addedAcks", expression: "(has(object.spec.acknowledgements) ? object.spec.acknowledgements : []).filter(a, !variables.oldAcks.exists(o, o.step == a.step))" },
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
        expression: "!has(object.spec.approval) && !has(object.spec.revocation) && (!has(object.spec.acknowledgements) || size(object.spec.acknowledgements) == 0)",
        messageExpression: "'rollout ' + object.metadata.name + ' must be created without spec.approval, spec.revocation and spec.acknowledgements: approvers add them later'",
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
  return policy(POLICY_RUNTIME_EDITS, "Spec edits of ClusterRuntime record the API server's view of the editor; the operator only manages its cleanup finalizer", {
    matchConstraints: rules("clusterruntimes", ["CREATE", "UPDATE"]),
    variables: [
      { name: "operator", expression: operatorIdentityCel(o) },
      { name: "editedBy", expression: annotationOf("object", ANNOTATION_EDITED_BY) },
      { name: "unchanged", expression: `request.operation == 'UPDATE' && object.spec == oldObject.spec && variables.editedBy == (${annotationOf("oldObject", ANNOTATION_EDITED_BY)})` },
    ],
    validations: [
      {
        expression: `variables.operator || variables.unchanged || variables.editedBy == ${me}`,
        messageExpression:
          `'a change to the spec of ClusterRuntime ' + object.metadata.name + ' must set metadata.annotations["${ANNOTATION_EDITED_BY}"] to your user name "' + ${me} + '" in the same request ` +
          `(it becomes spec.requestedBy of the rollout it produces, which you may not approve)'`,
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
  })
}

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
]
