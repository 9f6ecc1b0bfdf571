/**
 * Who may approve, as the API server sees it: the subjects bound to the approver ClusterRole (for the message that
 * says who may approve; from the binding cache) and the authorizer's answer for one approver (a SubjectAccessReview of the custom verb
 * `approve` on this rollout, the same question admission asked when the approval was written).
 */
import { Reviews, type KubeObject } from "@aicr/api"
import { type Informer, type InformerEvent, Kube, type KubeError } from "@aicr/kube"
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

export type Binding = KubeObject & {
  readonly roleRef?: { readonly kind?: string; readonly name?: string }
  readonly subjects?: ReadonlyArray<{ readonly kind: string; readonly name: string; readonly namespace?: string }>
}

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

/**
 * The access checks: who is bound to the approver role, from the ClusterRoleBinding cache; whether one approver holds
 * `approve`, from the authorizer (a SubjectAccessReview: a question, not a stored object, so there is nothing to cache;
 * it is asked only while an otherwise valid approval is present, and its answer follows binding changes because a
 * binding event re-decides the open rollouts).
 */
export const accessFrom = (bindings: Informer<Binding>) =>
  Effect.gen(function* () {
    const kube = yield* Kube
    return {
      approvers: (role) => Effect.sync(() => approversOf(bindings.list(), role)),
      mayApprove: (rollout, user, groups) =>
        kube
          .create<KubeObject & { status?: { allowed?: boolean } }>(Reviews.SubjectAccessReview, {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            metadata: { name: "" },
            spec: {
              user,
              groups: [...groups],
              resourceAttributes: { group: "operator.aicr.run", resource: "runtimerollouts", name: rollout, verb: "approve" },
            },
          } as KubeObject)
          .pipe(Effect.map((r) => r.status?.allowed === true)),
    } satisfies AccessShape
  })
