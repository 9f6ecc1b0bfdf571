// Rollouts and runtimes as the planner and a runtime editor write them, for tests on the real API server (the
// planner does not exist yet: tests create rollouts with the fields and labels it would set).
import { ANNOTATION_EDITED_BY, LABEL_PLAN, LABEL_RUNTIME_UID, planKey } from "@aicr/api"
import { eventually, expectOk, type HarnessInfo, kubeRequest, type KubeTarget } from "@aicr/testing/harness"

export const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
export const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
export const FROM_DIGEST = `sha256:${"1".repeat(64)}`
export const TO_DIGEST = `sha256:${"3f2a9c1d0e4b".padEnd(64, "5")}`

export interface RolloutOptions {
  readonly name: string
  readonly runtimeUID: string
  readonly requestedBy?: string | undefined
  readonly deadline?: string
  readonly requiresApproval?: boolean
  readonly toDigest?: string
}

/** A rollout as the planner creates it: undecided, bound to the runtime, requestedBy copied from the runtime's editor. */
export const plannedRollout = (o: RolloutOptions) => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "RuntimeRollout",
  metadata: { name: o.name, labels: { [LABEL_RUNTIME_UID]: o.runtimeUID, [LABEL_PLAN]: planKey(o.toDigest ?? TO_DIGEST) } },
  spec: {
    runtimeUID: o.runtimeUID,
    kind: "Upgrade",
    fromDigest: FROM_DIGEST,
    toDigest: o.toDigest ?? TO_DIGEST,
    deadline: o.deadline ?? new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, "Z"),
    requiresApproval: o.requiresApproval ?? true,
    ...(o.requestedBy !== undefined ? { requestedBy: o.requestedBy } : {}),
  },
})

export const runtimeSpec = (intent = "training") => ({ intent, platform: "kubeflow", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } })

/**
 * Waits until the rollout creation policy accepts a rollout of runtime `uid` requested by `requestedBy` (a dry-run
 * create). The policy reads the runtime through its paramRef from the API server's own cache, which can lag a create
 * or an edit of the runtime by a moment: until then a rollout created at once is refused ("no params found", or
 * "spec.requestedBy must be" the previous editor). Without the policies installed the first try passes.
 */
export const untilCreationPolicySees = (info: KubeTarget, uid: string, requestedBy: string) =>
  eventually(
    async () =>
      (
        await kubeRequest(info, {
          method: "POST",
          path: `${ROLLOUTS}?dryRun=All`,
          body: plannedRollout({ name: "creation-policy-probe", runtimeUID: uid, requestedBy }),
        })
      ).status === 201,
    { what: `the rollout creation policy seeing runtime ${uid} edited by ${requestedBy}` },
  )

/**
 * Creates the `cluster` runtime as `user` (admin by default), naming that user as the editor; returns its UID once
 * the rollout creation policy sees it (`untilCreationPolicySees`), so a test may create rollouts of it at once.
 */
export const createRuntime = async (info: KubeTarget, user = "admin"): Promise<string> => {
  const name = info.users[user]!.user
  const res = await kubeRequest(info, {
    method: "POST",
    path: "/apis/operator.aicr.run/v1alpha1/clusterruntimes",
    user,
    body: {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: name } },
      spec: runtimeSpec(),
    },
  })
  const uid = expectOk(res, "create runtime").metadata.uid as string
  await untilCreationPolicySees(info, uid, name)
  return uid
}

/** A runtime spec edit by `user`, with the editor annotation it must carry. */
export const editRuntime = async (info: KubeTarget, user: string, intent: string) =>
  kubeRequest(info, {
    method: "PATCH",
    path: RUNTIME,
    user,
    body: { metadata: { annotations: { [ANNOTATION_EDITED_BY]: info.users[user]!.user } }, spec: { intent } },
  })

export const deleteRuntime = async (info: HarnessInfo) => {
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
}

export const isoIn = (ms: number): string => new Date(Date.now() + ms).toISOString().replace(/\.\d+Z$/, "Z")

/** The approval `kubectl aicr approve` writes. */
export const approval = (by: string, o: { expiresInMs?: number; groups?: string[]; toDigest?: string } = {}) => ({
  approvedBy: by,
  ...(o.groups ? { groups: o.groups } : {}),
  reason: "Maintenance window",
  approvedAt: isoIn(0),
  expiresAt: isoIn(o.expiresInMs ?? 1_800_000),
  toDigest: o.toDigest ?? TO_DIGEST,
})

export const clusterRoleBinding = (
  name: string,
  role: string,
  subjects: Array<{ kind: "User" | "Group" | "ServiceAccount"; name: string; namespace?: string }>,
) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: subjects.map((s) =>
    s.kind === "ServiceAccount" ? { kind: s.kind, name: s.name, namespace: s.namespace } : { apiGroup: "rbac.authorization.k8s.io", ...s },
  ),
})
