/**
 * act: the approval-guard's one write, the rollout's room (`Approved` and `status.approval`; `applyStatus` skips an
 * unchanged room), followed by an expectation (`@aicr/runtime`'s `Expectations`): the next pass on this rollout
 * decides only once the cache shows it. A change of `Approved` is logged; a transition into `ApprovalRefused` or
 * `RolloutExpired` emits one Warning Event (none while it persists).
 */
import { type RuntimeRollout, RuntimeRolloutKind } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { type EventRecorder, Kube, type KubeError, type StatusWrite } from "@aicr/kube"
import { Expectations, warnOnTransition } from "@aicr/runtime"
import { Effect } from "effect"
import { Caches } from "./caches"
import { contract } from "./contract"

export const room = roomOn(contract, RuntimeRolloutKind)

/** Applies the room on `rollout` (nothing when unchanged) and expects the cache to show it; true when written. */
export const writeRoom = (rollout: RuntimeRollout, body: StatusWrite): Effect.Effect<boolean, KubeError, Kube | Caches | Expectations> =>
  Effect.gen(function* () {
    const { applied, object } = yield* (yield* Kube).applyStatus(room, rollout, body)
    if (applied) yield* (yield* Expectations).written((yield* Caches).rollouts, object)
    return applied
  })

const WARN = new Set(["ApprovalRefused", "RolloutExpired"])

/** Writes the report; logs a change of `Approved` and warns once on a transition into a refusal or an expiry. */
export const act = (rollout: RuntimeRollout, body: StatusWrite): Effect.Effect<void, KubeError, Kube | Caches | Expectations | EventRecorder> =>
  Effect.gen(function* () {
    const before = rollout.status?.conditions?.find((c) => c.type === "Approved")
    const after = body.conditions[0]!
    const applied = yield* writeRoom(rollout, body)
    if (!applied || (before?.status === after.status && before.reason === after.reason)) return
    yield* Effect.logInfo("Condition changed", {
      condition: "Approved",
      from: before ? `${before.status}/${before.reason}` : "none",
      to: `${after.status}/${after.reason}`,
    })
    if (WARN.has(after.reason)) yield* warnOnTransition(rollout, true, { reason: after.reason, action: "Approve", note: after.message })
  })
