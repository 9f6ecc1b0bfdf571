import { Approved, Rbac, RuntimeRolloutKind } from "@aicr/api"
import { Contract, Watch } from "./contract"

/**
 * approval-guard: decides whether a rollout may proceed now (approval, expiry, revocation, acknowledgements).
 * It reads every RuntimeRollout and the approver ClusterRoleBindings (for "who may approve") from its informer caches,
 * and asks the API server's authorizer with a SubjectAccessReview (create, not stored, so nothing to cache; only while
 * an otherwise valid approval is present) whether the approver holds the `approve` verb; a change of a binding to the
 * approver role re-decides every open rollout, so both answers follow the bindings as they change. It writes only its
 * room on the rollout (and Warning Events).
 */
export const approvalGuard = Contract.make({
  controller: "approval-guard",
  fieldManager: "aicr-approval-guard",
  reconciles: RuntimeRolloutKind,
  watches: [
    Watch.self(RuntimeRolloutKind),
    Watch.mapped(
      Rbac.ClusterRoleBinding,
      "open-rollouts",
      "a binding to the approver ClusterRole appears, changes or goes: who may approve, and whether an approval still counts",
    ),
  ],
  reads: { conditions: [], kinds: [Rbac.ClusterRoleBinding] },
  writes: [{ kind: RuntimeRolloutKind, conditions: [Approved], statusKeys: ["approval"] }],
  creates: [],
})
