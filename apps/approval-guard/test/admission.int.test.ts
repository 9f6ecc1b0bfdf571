// The refusals of "nobody approves their own change" (operator.md §5.3), enforced by the real kube-apiserver with the
// policies and roles of policies/ (RBAC, ValidatingAdmissionPolicies with CEL and the custom approve/revoke/
// acknowledge verbs): each refusal with several variants and its message, and each allowed path. No controller
// runs here: the API server alone holds the line.
import { ANNOTATION_EDITED_BY, APPROVER_ROLE, LABEL_OUTCOME, PLAN_READER_ROLE, VIEWER_ROLE } from "@aicr/api"
import {
  applyManifests,
  createNamespace,
  createServiceAccountToken,
  eventually,
  expectOk,
  type HarnessInfo,
  installApprovalPolicies,
  kubeRequest,
  type KubeResponse,
  type KubeTarget,
  removeApprovalPolicies,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import {
  approval,
  clusterRoleBinding,
  createRuntime,
  deleteRuntime,
  editRuntime,
  isoIn,
  plannedRollout,
  ROLLOUTS,
  RUNTIME,
  untilCreationPolicySees,
} from "./support/rollouts"

const info: HarnessInfo = inject("harness")
let uid = ""
/** info plus ServiceAccount identities (token users). */
let target: KubeTarget
let seq = 0

const planner = "system:serviceaccount:aicr-system:aicr-planner"
const validator = "system:serviceaccount:aicr-validation:aicr-validator"

const create = async (requestedBy = "alice", extra: Record<string, unknown> = {}) => {
  const name = `adm-${++seq}`
  const body = plannedRollout({ name, runtimeUID: uid, requestedBy })
  expectOk(await kubeRequest(info, { method: "POST", path: ROLLOUTS, body: { ...body, spec: { ...body.spec, ...extra } } }), `create ${name}`)
  return name
}
const patch = (user: string, name: string, body: unknown): Promise<KubeResponse> =>
  kubeRequest(target, { method: "PATCH", path: `${ROLLOUTS}/${name}`, user, body })
const approve = (user: string, name: string, by = target.users[user]!.user, o: Parameters<typeof approval>[1] = {}) =>
  patch(user, name, { spec: { approval: approval(by, o) } })
const revoke = (user: string, name: string, by = target.users[user]!.user) =>
  patch(user, name, { spec: { revocation: { revokedBy: by, reason: "Stop", revokedAt: isoIn(0) } } })
const acknowledge = (user: string, name: string, by = target.users[user]!.user, step = "gpu-operator") =>
  kubeRequest(target, {
    method: "PATCH",
    path: `${ROLLOUTS}/${name}`,
    user,
    contentType: "application/json-patch+json",
    body: [{ op: "add", path: "/spec/acknowledgements", value: [{ step, acknowledgedBy: by, at: isoIn(0) }] }],
  })

const refused = (res: KubeResponse, status: number, message: string | RegExp) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body.message).toMatch(message)
}
const ok = (res: KubeResponse) => expect(res.status, JSON.stringify(res.body?.message)).toBe(200)

beforeAll(async () => {
  await deleteRuntime(info)
  // An earlier file (the chart's uninstall) may still be deleting aicr-validation: objects cannot be created there
  // until it is gone (or it is active again).
  await eventually(
    async () => {
      const r = await kubeRequest(info, { method: "GET", path: "/api/v1/namespaces/aicr-validation" })
      return r.status === 404 || (r.body as { status?: { phase?: string } }).status?.phase === "Active"
    },
    { timeoutMs: 180_000, intervalMs: 500, what: "namespace aicr-validation not terminating" },
  )
  await installApprovalPolicies(info)
  await applyManifests(info, [
    // Who edits the runtime: alice and carol. Who approves: alice, the aicr-approvers group, and (to prove the
    // policy refuses them even with the role) the operator's planner and a validator ServiceAccount.
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "test-runtime-editor" },
      rules: [{ apiGroups: ["operator.aicr.run"], resources: ["clusterruntimes"], verbs: ["get", "list", "watch", "patch", "update"] }],
    },
    {
      // Someone who may patch rollouts but was never given the approve verb.
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "test-rollout-patcher" },
      rules: [{ apiGroups: ["operator.aicr.run"], resources: ["runtimerollouts"], verbs: ["get", "patch", "update"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "test-operator-runtime" },
      rules: [{ apiGroups: ["operator.aicr.run"], resources: ["clusterruntimes"], verbs: ["get", "patch", "update"] }],
    },
    clusterRoleBinding("test-runtime-editors", "test-runtime-editor", [
      { kind: "User", name: "alice" },
      { kind: "User", name: "carol" },
    ]),
    clusterRoleBinding("test-rollout-patchers", "test-rollout-patcher", [{ kind: "User", name: "bob" }]),
    clusterRoleBinding("test-approvers", APPROVER_ROLE, [
      { kind: "User", name: "alice" },
      { kind: "Group", name: "aicr-approvers" },
      { kind: "ServiceAccount", name: "aicr-planner", namespace: "aicr-system" },
      { kind: "ServiceAccount", name: "aicr-validator", namespace: "aicr-validation" },
    ]),
    clusterRoleBinding("test-validator-admin", "cluster-admin", [{ kind: "ServiceAccount", name: "aicr-validator", namespace: "aicr-validation" }]),
    clusterRoleBinding("test-operator-runtime", "test-operator-runtime", [{ kind: "ServiceAccount", name: "aicr-planner", namespace: "aicr-system" }]),
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "aicr-validation" } },
  ])
  const plannerToken = await createServiceAccountToken(info, "aicr-system", "aicr-planner")
  const validatorToken = await createServiceAccountToken(info, "aicr-validation", "aicr-validator")
  target = {
    ...info,
    users: {
      ...info.users,
      planner: { token: plannerToken, user: planner, groups: [] },
      validator: { token: validatorToken, user: validator, groups: [] },
    },
  }
  uid = await createRuntime(info)
  // alice's edit produces the rollouts below (retried while her fresh RoleBinding reaches the authorizer's cache).
  await eventually(async () => (await editRuntime(info, "alice", "inference")).status === 200, { what: "alice's runtime edit" })
  // Until the creation policy's view of the runtime has alice's edit, a rollout she requested is refused as "must be
  // admin": the first test must not race it.
  await untilCreationPolicySees(info, uid, "alice")
})

afterAll(async () => {
  const names = ["test-runtime-editors", "test-rollout-patchers", "test-approvers", "test-validator-admin", "test-operator-runtime"]
  for (const n of names) await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${n}` })
  for (const n of ["test-runtime-editor", "test-rollout-patcher", "test-operator-runtime"])
    await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${n}` })
  await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}?labelSelector=${encodeURIComponent(`operator.aicr.run/runtime-uid=${uid}`)}` })
  await deleteRuntime(info)
  await removeApprovalPolicies(info)
})

describe("refusal 1: approving without the approver role", () => {
  it("refuses a user with no role at all (RBAC: forbidden, naming the missing verb)", async () => {
    const name = await create()
    refused(await approve("carol", name), 403, /User "carol" cannot patch resource "runtimerollouts" in API group "operator.aicr.run"/)
  })

  it("refuses a user who may patch rollouts but lacks the approve verb, and names the role that grants it", async () => {
    const name = await create()
    refused(
      await approve("bob", name),
      403,
      `bob may not approve rollout ${name}: that needs the verb "approve" on runtimerollouts.operator.aicr.run, which the ClusterRole ${APPROVER_ROLE} grants`,
    )
  })

  it("refuses revoking and acknowledging without their verbs", async () => {
    const name = await create()
    refused(await revoke("bob", name), 403, `bob may not revoke rollout ${name}: that needs the verb "revoke"`)
    ok(await approve("approver", name))
    refused(await acknowledge("bob", name), 403, `bob may not acknowledge a step of rollout ${name}: that needs the verb "acknowledge"`)
  })

  it("refuses a viewer (read-only role) with RBAC", async () => {
    await applyManifests(info, [clusterRoleBinding("test-viewer", VIEWER_ROLE, [{ kind: "User", name: "carol" }])])
    try {
      const name = await create()
      expect((await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${name}`, user: "carol" })).status).toBe(200)
      refused(await approve("carol", name), 403, /cannot patch resource "runtimerollouts"/)
    } finally {
      await kubeRequest(info, { method: "DELETE", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/test-viewer" })
    }
  })
})

describe("refusal 2: approving a rollout produced by your own runtime edit", () => {
  it("refuses the editor even though they hold the approver role", async () => {
    const name = await create("alice")
    refused(
      await approve("alice", name),
      403,
      `alice made the runtime edit that produced rollout ${name} (spec.requestedBy): nobody approves their own change, ask another approver`,
    )
  })

  it("refuses a spec edit that does not name its editor, or names someone else", async () => {
    refused(
      await kubeRequest(info, { method: "PATCH", path: RUNTIME, user: "carol", body: { spec: { intent: "training" } } }),
      403,
      'a change to the spec of ClusterRuntime cluster must set metadata.annotations["operator.aicr.run/edited-by"] to your user name "carol" in the same request',
    )
    refused(
      await kubeRequest(info, {
        method: "PATCH",
        path: RUNTIME,
        user: "carol",
        body: { metadata: { annotations: { [ANNOTATION_EDITED_BY]: "bob" } }, spec: { intent: "training" } },
      }),
      403,
      /to your user name "carol"/,
    )
  })

  it("refuses shifting the editor annotation to someone else without a spec change", async () => {
    refused(
      await kubeRequest(info, { method: "PATCH", path: RUNTIME, user: "alice", body: { metadata: { annotations: { [ANNOTATION_EDITED_BY]: "bob" } } } }),
      403,
      /to your user name "alice"/,
    )
  })

  it("refuses a rollout whose requestedBy is not the editor the API server recorded", async () => {
    const res = await kubeRequest(info, {
      method: "POST",
      path: ROLLOUTS,
      body: plannedRollout({ name: "adm-forged", runtimeUID: uid, requestedBy: "mallory" }),
    })
    refused(res, 403, "spec.requestedBy must be alice, the editor the API server recorded on ClusterRuntime cluster (annotation operator.aicr.run/edited-by)")
    refused(
      await kubeRequest(info, { method: "POST", path: ROLLOUTS, body: plannedRollout({ name: "adm-anon", runtimeUID: uid }) }),
      403,
      /spec.requestedBy must be alice/,
    )
  })

  it("refuses a rollout created already approved, or for another runtime", async () => {
    const pre = plannedRollout({ name: "adm-preapproved", runtimeUID: uid, requestedBy: "alice" })
    refused(
      await kubeRequest(info, { method: "POST", path: ROLLOUTS, body: { ...pre, spec: { ...pre.spec, approval: approval("approver") } } }),
      403,
      "rollout adm-preapproved must be created without spec.approval, spec.revocation and spec.acknowledgements",
    )
    refused(
      await kubeRequest(info, {
        method: "POST",
        path: ROLLOUTS,
        body: plannedRollout({ name: "adm-other", runtimeUID: "00000000-0000-0000-0000-000000000000", requestedBy: "alice" }),
      }),
      422,
      /is not the UID of ClusterRuntime cluster/,
    )
  })

  it("lets carol's later edit make carol the requester, whom alice may then approve", async () => {
    ok(await editRuntime(info, "carol", "training"))
    try {
      // The creation policy reads the runtime through the API server's parameter cache, which may lag the edit a moment.
      const name = await eventually(() => create("carol").catch(() => undefined), { what: "a rollout requested by carol once the policy sees her edit" })
      refused(
        await kubeRequest(info, { method: "POST", path: ROLLOUTS, body: plannedRollout({ name: "adm-stale", runtimeUID: uid, requestedBy: "alice" }) }),
        403,
        /spec.requestedBy must be carol/,
      )
      ok(await approve("alice", name))
    } finally {
      ok(await editRuntime(info, "alice", "inference"))
      // The next tests create rollouts requested by alice: wait until the policy's parameter cache has her edit too.
      await untilCreationPolicySees(info, uid, "alice")
    }
  })
})

describe("refusal 3: approving in someone else's name", () => {
  it("refuses approvedBy, revokedBy and acknowledgedBy naming another user", async () => {
    const name = await create()
    refused(await approve("approver", name, "alice"), 403, "spec.approval.approvedBy is alice but the request comes from approver: approve in your own name")
    refused(await revoke("approver", name, "carol"), 403, "spec.revocation.revokedBy is carol but the request comes from approver: revoke in your own name")
    ok(await approve("approver", name))
    refused(
      await acknowledge("approver", name, "alice"),
      403,
      "spec.acknowledgements may only add entries with acknowledgedBy approver: acknowledge in your own name",
    )
  })

  it("refuses approval groups the approver does not belong to", async () => {
    const name = await create()
    refused(
      await approve("approver", name, "approver", { groups: ["aicr-approvers", "system:masters"] }),
      403,
      "spec.approval.groups may name only groups approver belongs to (aicr-approvers, system:authenticated)",
    )
  })

  it("refuses an admin approving as someone else, too", async () => {
    const name = await create()
    refused(
      await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, body: { spec: { approval: approval("approver") } } }),
      403,
      /approvedBy is approver but the request comes from admin/,
    )
  })
})

describe("refusal 4: the operator approving, revoking or acknowledging", () => {
  it("refuses the planner's ServiceAccount even when it is bound to the approver role", async () => {
    const name = await create()
    const msg = `the operator's own identity ${planner} may not approve, revoke or acknowledge rollout ${name}: only people with the ClusterRole ${APPROVER_ROLE} decide`
    refused(await approve("planner", name), 403, msg)
    refused(await revoke("planner", name), 403, msg)
    ok(await approve("approver", name))
    refused(await acknowledge("planner", name), 403, msg)
  })

  it("refuses a cluster-admin validator ServiceAccount of the validation namespace", async () => {
    const name = await create()
    refused(await approve("validator", name), 403, /the operator's own identity system:serviceaccount:aicr-validation:aicr-validator may not approve/)
  })

  it("refuses an operator identity reached by impersonation (admin impersonating the planner)", async () => {
    const name = await create()
    const res = await kubeRequest(info, {
      method: "PATCH",
      path: `${ROLLOUTS}/${name}`,
      impersonate: { user: planner, groups: ["system:serviceaccounts", "system:serviceaccounts:aicr-system"] },
      body: { spec: { approval: approval(planner) } },
    })
    refused(res, 403, /the operator's own identity/)
  })

  it("lets the operator change only the cleanup finalizer of the runtime", async () => {
    ok(await kubeRequest(target, { method: "PATCH", path: RUNTIME, user: "planner", body: { metadata: { finalizers: ["operator.aicr.run/cleanup"] } } }))
    refused(
      await kubeRequest(target, {
        method: "PATCH",
        path: RUNTIME,
        user: "planner",
        body: { metadata: { annotations: { [ANNOTATION_EDITED_BY]: planner } }, spec: { intent: "training" } },
      }),
      403,
      `the operator's identity ${planner} may change only its finalizer operator.aicr.run/cleanup of ClusterRuntime cluster (and its status)`,
    )
    refused(
      await kubeRequest(target, { method: "PATCH", path: RUNTIME, user: "planner", body: { metadata: { labels: { x: "y" } } } }),
      403,
      /may change only its finalizer/,
    )
    refused(
      await kubeRequest(target, {
        method: "PATCH",
        path: RUNTIME,
        user: "planner",
        body: { metadata: { finalizers: ["operator.aicr.run/cleanup", "example.com/other"] } },
      }),
      403,
      /may change only its finalizer/,
    )
    ok(await kubeRequest(target, { method: "PATCH", path: RUNTIME, user: "planner", body: { metadata: { finalizers: null } } }))
  })
})

describe("refusal 5: tenants reaching admin resources", () => {
  let tenantNs = ""
  beforeAll(async () => {
    tenantNs = await createNamespace(info, "tenant")
    await applyManifests(info, [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "tenant-admin", namespace: tenantNs },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "tenants" }],
      },
    ])
  })

  it("gives a namespace admin tenant nothing on runtimes, rollouts and plans", async () => {
    const name = await create()
    expect((await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${tenantNs}/configmaps`, user: "tenant" })).status).toBe(200)
    refused(await kubeRequest(info, { method: "GET", path: RUNTIME, user: "tenant" }), 403, /User "tenant" cannot get resource "clusterruntimes"/)
    refused(await kubeRequest(info, { method: "GET", path: ROLLOUTS, user: "tenant" }), 403, /User "tenant" cannot list resource "runtimerollouts"/)
    refused(await approve("tenant", name), 403, /User "tenant" cannot patch resource "runtimerollouts"/)
    refused(
      await kubeRequest(info, {
        method: "GET",
        path: "/api/v1/namespaces/aicr-system/configmaps?labelSelector=operator.aicr.run%2Frole%3Dplan",
        user: "tenant",
      }),
      403,
      /cannot list resource "configmaps" in API group "" in the namespace "aicr-system"/,
    )
    refused(
      await kubeRequest(info, { method: "PATCH", path: RUNTIME, user: "tenant", body: { spec: { paused: true } } }),
      403,
      /cannot patch resource "clusterruntimes"/,
    )
  })

  it("gives tenants no access to the engine's Applications and AppProject, nor our roles (SubjectAccessReview)", async () => {
    const sar = async (attrs: Record<string, string>) => {
      const res = await kubeRequest(info, {
        method: "POST",
        path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: { user: "tenant", groups: ["tenants", "system:authenticated"], resourceAttributes: attrs },
        },
      })
      return expectOk(res, "SubjectAccessReview").status.allowed as boolean
    }
    expect(await sar({ group: "", resource: "configmaps", verb: "create", namespace: tenantNs })).toBe(true)
    for (const verb of ["get", "list", "create", "patch", "delete"]) {
      expect(await sar({ group: "argoproj.io", resource: "applications", verb, namespace: "argocd" }), `applications ${verb}`).toBe(false)
    }
    expect(await sar({ group: "argoproj.io", resource: "appprojects", verb: "patch", namespace: "argocd", name: "aicr" })).toBe(false)
    expect(await sar({ group: "operator.aicr.run", resource: "runtimerollouts", verb: "approve" })).toBe(false)
    expect(await sar({ group: "", resource: "configmaps", verb: "get", namespace: "aicr-system" })).toBe(false)
    expect(await sar({ group: "rbac.authorization.k8s.io", resource: "clusterrolebindings", verb: "create" })).toBe(false)
  })

  it("keeps the tenant out even with a RoleBinding to the plan reader role in its own namespace", async () => {
    await applyManifests(info, [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "tenant-viewer", namespace: tenantNs },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: VIEWER_ROLE },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "tenants" }],
      },
    ])
    // A namespaced binding of a ClusterRole cannot reach cluster-scoped kinds; the plan reader Role lives only in aicr-system.
    refused(await kubeRequest(info, { method: "GET", path: ROLLOUTS, user: "tenant" }), 403, /cannot list resource "runtimerollouts"/)
    expect(
      (await kubeRequest(info, { method: "GET", path: `/apis/rbac.authorization.k8s.io/v1/namespaces/aicr-system/roles/${PLAN_READER_ROLE}` })).status,
    ).toBe(200)
  })
})

describe("the API server these policies rely on", () => {
  it("serves ValidatingAdmissionPolicy (GA) and, with the harness's feature gate, MutatingAdmissionPolicy v1beta1 (the editor stamp; not installed in this file)", async () => {
    const group = expectOk(await kubeRequest(info, { method: "GET", path: "/apis/admissionregistration.k8s.io" }), "discovery")
    const resources: string[] = []
    for (const v of group.versions as Array<{ groupVersion: string }>) {
      resources.push(
        ...(expectOk(await kubeRequest(info, { method: "GET", path: `/apis/${v.groupVersion}` }), v.groupVersion).resources as Array<{ name: string }>).map(
          (r) => `${v.groupVersion}/${r.name}`,
        ),
      )
    }
    expect(resources).toContain("admissionregistration.k8s.io/v1/validatingadmissionpolicies")
    // 1.35: beta only (v1 comes with 1.36), so the harness installs policies/editor-stamp/v1beta1.yaml.
    expect(resources.filter((r) => /mutatingadmissionpolicies$/.test(r))).toEqual(["admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies"])
    const stamps = expectOk(await kubeRequest(info, { method: "GET", path: "/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies" }), "list")
      .items as unknown[]
    expect(stamps).toEqual([])
  })
})

describe("allowed paths", () => {
  it("an approver (by group) approves, acknowledges and revokes in their own name", async () => {
    const name = await create()
    ok(await approve("approver", name, "approver", { groups: ["aicr-approvers"] }))
    ok(await acknowledge("approver", name))
    ok(await revoke("approver", name))
    const r = expectOk(await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${name}` }), "get")
    expect([r.spec.approval.approvedBy, r.spec.approval.groups, r.spec.acknowledgements[0].acknowledgedBy, r.spec.revocation.revokedBy]).toEqual([
      "approver",
      ["aicr-approvers"],
      "approver",
      "approver",
    ])
  })

  it("the requester may revoke their own change (stopping is never self-dealing), and an admin may approve", async () => {
    const a = await create()
    ok(await approve("approver", a))
    ok(await revoke("alice", a))
    const b = await create()
    ok(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${b}`, body: { spec: { approval: approval("admin") } } }))
  })

  it("keeps approvals set-once and acknowledgements append-only for approvers too (CRD rules)", async () => {
    const name = await create()
    ok(await approve("approver", name))
    refused(await approve("approver", name, "approver", { expiresInMs: 60_000 }), 422, /spec.approval is set-once/)
    ok(await acknowledge("approver", name))
    const replace = await kubeRequest(target, {
      method: "PATCH",
      path: `${ROLLOUTS}/${name}`,
      user: "approver",
      contentType: "application/json-patch+json",
      body: [{ op: "replace", path: "/spec/acknowledgements", value: [] }],
    })
    refused(replace, 422, /append-only/)
  })

  it("refuses people changing the operator's outcome label or finalizers, while the planner may", async () => {
    const name = await create()
    refused(
      await patch("approver", name, { metadata: { labels: { [LABEL_OUTCOME]: "Succeeded" } } }),
      403,
      `approver may not change the labels or finalizers of rollout ${name}: the operator sets them`,
    )
    await applyManifests(info, [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "test-operator-runtime" },
        rules: [{ apiGroups: ["operator.aicr.run"], resources: ["clusterruntimes", "runtimerollouts"], verbs: ["get", "patch", "update"] }],
      },
    ])
    await expect
      .poll(async () => (await patch("planner", name, { metadata: { labels: { [LABEL_OUTCOME]: "Expired" } } })).status, { timeout: 10_000 })
      .toBe(200)
  })
})
