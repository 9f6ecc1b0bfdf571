/**
 * gather: the reads this pass needs, into one `Observed` value: the rollout, the clock, the approver bindings (only
 * while an approval is awaited, for the message) and the authorizer's answer for the approver (only when an
 * approval is present and otherwise valid).
 */
import { LABEL_OUTCOME, type RuntimeRollout } from "@aicr/api"
import type { KubeError } from "@aicr/kube"
import { Clock, Effect } from "effect"
import { Access, type Approvers } from "./access"
import { GuardConfig } from "./config"
import { approvalCheck } from "./decide"

export interface Observed {
  readonly rollout: RuntimeRollout
  readonly generation: number | undefined
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
  readonly approverRole: string
  readonly operatorNamespaces: ReadonlyArray<string>
  /** Read only while an approval is awaited. */
  readonly approvers: Approvers | undefined
  /** The authorizer's answer for spec.approval's approver; undefined when not asked. */
  readonly approverAllowed: boolean | undefined
}

export const gather = (rollout: RuntimeRollout): Effect.Effect<Observed, KubeError, Access | GuardConfig> =>
  Effect.gen(function* () {
    const access = yield* Access
    const config = yield* GuardConfig
    const now = yield* Clock.currentTimeMillis
    const base = { rollout, generation: rollout.metadata.generation, now, approverRole: config.approverRole, operatorNamespaces: config.operatorNamespaces }
    const closed = rollout.metadata.labels?.[LABEL_OUTCOME] !== undefined
    const approval = rollout.spec.approval
    const awaiting =
      !closed && rollout.spec.requiresApproval && approval === undefined && rollout.spec.revocation === undefined && now < Date.parse(rollout.spec.deadline)
    const approvers = awaiting ? yield* access.approvers(config.approverRole) : undefined
    const ask = !closed && approval !== undefined && rollout.spec.revocation === undefined && approvalCheck({ ...base, approverAllowed: true })._tag === "Valid"
    const approverAllowed = ask ? yield* access.mayApprove(rollout.metadata.name, approval.approvedBy, approval.groups ?? []) : undefined
    return { ...base, approvers, approverAllowed } satisfies Observed
  })
