import { Approved, Core, RuntimeRolloutKind } from "@aicr/api"
import { Contract, Watch } from "./contract"

/** approval-guard: decides whether a rollout may proceed now (approval, expiry, revocation, acknowledgements). */
export const approvalGuard = Contract.make({
  controller: "approval-guard",
  fieldManager: "aicr-approval-guard",
  reconciles: RuntimeRolloutKind,
  watches: [Watch.self(RuntimeRolloutKind)],
  reads: { conditions: [], kinds: [Core.ConfigMap] },
  writes: [{ kind: RuntimeRolloutKind, conditions: [Approved], statusKeys: ["approval"] }],
  creates: [],
})
