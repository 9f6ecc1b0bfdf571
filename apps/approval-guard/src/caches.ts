/**
 * The approval-guard's informer caches, exactly its contract's watches (`informersFor`): every RuntimeRollout (the
 * root, read whole), and every ClusterRoleBinding trimmed to what "who may approve" reads (name, roleRef, subjects);
 * a binding event re-decides the open rollouts only when it binds (or bound) the approver role. Every read of a pass
 * comes from here; the one live request is the authorizer's answer (`access.ts`).
 */
import { kindKey, Rbac, type RuntimeRollout, RuntimeRolloutKind, type KubeObject } from "@aicr/api"
import type { Informer, InformerEvent, Kube } from "@aicr/kube"
import { informersFor, type Source } from "@aicr/runtime"
import { Context, Effect, type Scope } from "effect"
import { type Binding, bindingChangesApprovers } from "./access"
import { contract } from "./contract"

export interface GuardCaches {
  readonly rollouts: Informer<RuntimeRollout>
  readonly bindings: Informer<Binding>
}

export class Caches extends Context.Service<Caches, GuardCaches>()("@aicr/approval-guard/Caches") {}

/** What the guard reads of a ClusterRoleBinding, plus what the informer tells updates by. */
export const trimBinding = (b: Binding): Binding => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name: b.metadata.name, uid: b.metadata.uid, resourceVersion: b.metadata.resourceVersion },
  ...(b.roleRef !== undefined ? { roleRef: b.roleRef } : {}),
  ...(b.subjects !== undefined ? { subjects: b.subjects } : {}),
})

export const makeCaches = (
  approverRole: string,
): Effect.Effect<{ readonly caches: GuardCaches; readonly sources: ReadonlyArray<Source> }, never, Kube | Scope.Scope> =>
  Effect.gen(function* () {
    const informers = yield* informersFor(contract, (w) =>
      kindKey(w.kind) === kindKey(Rbac.ClusterRoleBinding)
        ? { transform: trimBinding as (o: KubeObject) => KubeObject, ignore: (e) => !bindingChangesApprovers(e as InformerEvent<Binding>, approverRole) }
        : {},
    )
    return {
      caches: { rollouts: informers.one<RuntimeRollout>(RuntimeRolloutKind), bindings: informers.one<Binding>(Rbac.ClusterRoleBinding) },
      sources: informers.sources,
    }
  })
