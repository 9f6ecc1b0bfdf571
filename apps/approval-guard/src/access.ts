/**
 * Who may approve, as the API server sees it: the subjects bound to the approver ClusterRole (for the message that
 * says who may approve) and the authorizer's answer for one approver (a SubjectAccessReview of the custom verb
 * `approve` on this rollout, the same question admission asked when the approval was written).
 */
import { Rbac, Reviews, type KubeObject } from "@aicr/api"
import { type InformerEvent, Kube, type KubeError } from "@aicr/kube"
import { Context, Effect } from "effect"

export interface Approvers {
  readonly users: ReadonlyArray<string>
  readonly groups: ReadonlyArray<string>
  readonly serviceAccounts: ReadonlyArray<string>
}

export interface AccessShape {
  readonly approvers: (role: string) => Effect.Effect<Approvers, KubeError>
  readonly mayApprove: (rollout: string, user: string, groups: ReadonlyArray<string>) => Effect.Effect<boolean, KubeError>
}

export class Access extends Context.Service<Access, AccessShape>()("@aicr/approval-guard/Access") {}

export type Binding = KubeObject & { readonly roleRef?: { readonly kind?: string; readonly name?: string }; readonly subjects?: ReadonlyArray<{ readonly kind: string; readonly name: string; readonly namespace?: string }> }

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort()

/** The subjects of every ClusterRoleBinding to `role`, sorted and de-duplicated (pure). */
export const approversOf = (bindings: ReadonlyArray<Binding>, role: string): Approvers => {
  const subjects = bindings.filter((b) => b.roleRef?.kind === "ClusterRole" && b.roleRef.name === role).flatMap((b) => b.subjects ?? [])
  return {
    users: sorted(subjects.filter((s) => s.kind === "User").map((s) => s.name)),
    groups: sorted(subjects.filter((s) => s.kind === "Group").map((s) => s.name)),
    serviceAccounts: sorted(subjects.filter((s) => s.kind === "ServiceAccount").map((s) => `${s.namespace ?? "default"}/${s.name}`)),
  }
}

const bindsRole = (b: Binding, role: string) => b.roleRef?.kind === "ClusterRole" && b.roleRef.name === role

/**
 * Whether a ClusterRoleBinding event can change who may approve (pure): it binds the approver role, before or after.
 * RoleBindings never can: rollouts are cluster-scoped, and a namespaced binding grants nothing on them.
 */
export const bindingChangesApprovers = (e: InformerEvent<Binding>, role: string): boolean =>
  bindsRole(e.object, role) || (e.type === "update" && bindsRole(e.old, role))

/** The live access checks: a list of ClusterRoleBindings and one SubjectAccessReview per approval. */
export const liveAccess = Effect.gen(function* () {
  const kube = yield* Kube
  return {
    approvers: (role) => kube.list<Binding>(Rbac.ClusterRoleBinding).pipe(Effect.map((l) => approversOf(l.items, role))),
    mayApprove: (rollout, user, groups) =>
      kube
        .create<KubeObject & { status?: { allowed?: boolean } }>(Reviews.SubjectAccessReview, {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          metadata: { name: "" },
          spec: { user, groups: [...groups], resourceAttributes: { group: "operator.aicr.run", resource: "runtimerollouts", name: rollout, verb: "approve" } },
        } as KubeObject)
        .pipe(Effect.map((r) => r.status?.allowed === true)),
  } satisfies AccessShape
})
