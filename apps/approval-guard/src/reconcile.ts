/**
 * approval-guard: decides whether a rollout may proceed now.
 *
 * Owns:   condition `Approved`; `status.approval` on every RuntimeRollout.
 * Reads:  the rollout's spec (approval, revocation, acknowledgements, deadline, requestedBy), `status.steps` (which
 *         steps wait for an acknowledgement), the approver ClusterRoleBindings, the authorizer (SubjectAccessReview).
 * Leaves alone: everything else. It never writes spec (approvals are people's, under admission policy) and never
 *         starts or stops steps itself (the step-executor reads `Approved`).
 */
import { RuntimeRolloutKind, type ObjectKey, type RuntimeRollout } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { Requeue } from "@aicr/runtime"
import { Clock, Effect, Option } from "effect"
import type { Access } from "./access"
import type { GuardConfig } from "./config"
import { contract } from "./contract"
import { decide } from "./decide"
import { gather } from "./gather"
import { report, reportInternalError, requeueOf } from "./status"

export const room = roomOn(contract, RuntimeRolloutKind)

export const reconcile = (key: ObjectKey): Effect.Effect<Requeue, KubeError, Kube | EventRecorder | Access | GuardConfig> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const found = yield* kube.get<RuntimeRollout>(RuntimeRolloutKind, key)
    if (Option.isNone(found)) return Requeue.onChange // gone: nothing left to own
    const rollout = found.value
    const observed = yield* gather(rollout).pipe(
      Effect.catchDefect((defect) =>
        Effect.gen(function* () {
          yield* Effect.logError("Deciding the approval failed unexpectedly", { err: String(defect), stack: (defect as Error | undefined)?.stack })
          yield* kube.applyStatus(room, rollout, reportInternalError({ rollout, generation: rollout.metadata.generation, now: yield* Clock.currentTimeMillis }))
          return undefined
        }),
      ),
    )
    if (observed === undefined) return Requeue.after("30 seconds")
    const decision = decide(observed)
    yield* Effect.logDebug("Decided", { decision: decision._tag })
    const before = rollout.status?.conditions?.find((c) => c.type === "Approved")
    const body = report(observed, decision)
    const { applied } = yield* kube.applyStatus(room, rollout, body)
    const after = body.conditions[0]!
    if (applied && (before?.status !== after.status || before.reason !== after.reason)) {
      yield* Effect.logInfo("Condition changed", { condition: "Approved", from: before ? `${before.status}/${before.reason}` : "none", to: `${after.status}/${after.reason}` })
      if (after.reason === "ApprovalRefused" || after.reason === "RolloutExpired") {
        yield* (yield* EventRecorder).event(rollout, { type: "Warning", reason: after.reason, action: "Approve", note: after.message })
      }
    }
    return requeueOf(observed, decision)
  }).pipe(Effect.withSpan("approval-guard.reconcile"))
