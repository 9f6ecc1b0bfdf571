/**
 * approval-guard: decides whether a rollout may proceed now.
 *
 * Owns:   condition `Approved`; `status.approval` on every RuntimeRollout.
 * Reads:  the rollout's spec (approval, revocation, acknowledgements, deadline, requestedBy), `status.steps` (which
 *         steps wait for an acknowledgement), the approver ClusterRoleBindings, all from its informer caches
 *         (`caches.ts`); the authorizer's answer for an approver (SubjectAccessReview, `access.ts`).
 * Leaves alone: everything else. It never writes spec (approvals are people's, under admission policy) and never
 *         starts or stops steps itself (the step-executor reads `Approved`).
 *
 * gather → decide → act → report: `gather.ts` (what the pass reads), `decide.ts` (pure), `status.ts` (the room, pure),
 * `act.ts` (the write), `errors.ts` (how a failed pass ends). A pass starts only once the cache shows this process's
 * earlier writes (expectations).
 */
import type { ObjectKey, RuntimeRollout } from "@aicr/api"
import type { EventRecorder, Kube, KubeError } from "@aicr/kube"
import { Expectations, failedPass, fromCache, type InternalError, type Requeue, rooted } from "@aicr/runtime"
import { type Cause, Clock, Effect } from "effect"
import type { Access } from "./access"
import { act, room, writeRoom } from "./act"
import { Caches } from "./caches"
import type { GuardConfig } from "./config"
import { decide } from "./decide"
import { classOf } from "./errors"
import { gather } from "./gather"
import { report, reportInternalError, requeueOf } from "./status"

export { room }

type Services = Kube | EventRecorder | Access | GuardConfig | Caches | Expectations

const pass = (rollout: RuntimeRollout): Effect.Effect<Requeue, KubeError, Services> =>
  Effect.gen(function* () {
    const observed = yield* gather(rollout)
    const decision = decide(observed)
    yield* Effect.logDebug("Decided", { decision: decision._tag })
    yield* act(rollout, report(observed, decision))
    return requeueOf(observed, decision)
  })

/**
 * A failed pass (`errors.ts`): a transient failure goes back to the driver as it is; a defect writes
 * `Approved=Unknown/InternalError`, emits one Warning Event when that is a transition, and fails with `InternalError`.
 */
const failed = (rollout: RuntimeRollout, cause: Cause.Cause<KubeError>): Effect.Effect<never, KubeError | InternalError, Services> =>
  failedPass(cause, {
    classOf,
    log: "Deciding the approval failed unexpectedly",
    report: Effect.flatMap(Clock.currentTimeMillis, (now) =>
      writeRoom(rollout, reportInternalError({ rollout, generation: rollout.metadata.generation, now })),
    ),
    warning: { object: rollout, action: "Approve", note: "The approval-guard failed unexpectedly" },
  })

export const reconcile = (key: ObjectKey): Effect.Effect<Requeue, KubeError | InternalError, Services> =>
  Effect.gen(function* () {
    const caches = yield* Caches
    return yield* rooted({
      get: fromCache(caches.rollouts),
      expectations: yield* Expectations,
      pass: (rollout: RuntimeRollout) => pass(rollout).pipe(Effect.catchCause((cause) => failed(rollout, cause))),
    })(key)
  }).pipe(Effect.withSpan("approval-guard.reconcile"))
