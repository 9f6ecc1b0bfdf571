/**
 * step-executor: rolls a rollout's steps out through Argo CD, one release at a time in the rollout's order, and
 * advances only when the release is ready at the revision just written; applies suspendEngine.
 *
 * Owns:   `Progressing` and `status.steps` on the open RuntimeRollout; `EngineAvailable` and `status.engine` on the
 *         ClusterRuntime `cluster`; the Argo CD Applications it creates (runtime-uid label).
 * Reads:  `Approved`, `ValidationReady` (only when current), the rollout's spec (steps, acknowledgements), the target
 *         plan ConfigMap and its content ConfigMap, Argo CD's CRD, the AppProject and every Application in the engine
 *         namespace, all from its informer caches (`caches.ts`).
 * Leaves alone: approvals (people, approval-guard), outcomes (planner), any Application without our label.
 *
 * gather → decide → act → report. Exactly-once writes from caches: a pass decides only once the caches show every
 * write of the passes before (expectations), writes at most one Application, and only when its markers are not there
 * yet; a restarted executor starts from fresh lists, so a restart never repeats a write either.
 */
import { ClusterRuntimeKind, type ClusterRuntime, type ObjectKey, RuntimeRolloutKind } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import type { EventRecorder, Kube, KubeError } from "@aicr/kube"
import { Expectations, failedPass, fromCache, type InternalError, Requeue, singleton, type StatusPacer } from "@aicr/runtime"
import { type Cause, Clock, Effect } from "effect"
import { step, suspend, writePacedStatus, writeStatus } from "./act"
import { Caches } from "./caches"
import type { ExecutorConfig } from "./config"
import { contract } from "./contract"
import { decide, reported } from "./decide"
import { classOf } from "./errors"
import { gather, openRollout, type PlanReads } from "./gather"
import { rolloutInternalError, rolloutStatus, runtimeInternalError, runtimeStatus } from "./status"

/** How soon a refused suspension is tried again. */
const REFUSAL_RETRY_MS = 10_000
/** While the caches have not shown this controller's last writes: look again at the latest then (the event comes first). */
const EXPECTATION_RECHECK_MS = 5_000

export const runtimeRoom = roomOn(contract, ClusterRuntimeKind)
export const rolloutRoom = roomOn(contract, RuntimeRolloutKind)

type Services = Kube | EventRecorder | Caches | Expectations | StatusPacer | PlanReads | ExecutorConfig

/** One pass over what the caches show. */
const pass = (runtime: ClusterRuntime): Effect.Effect<Requeue, KubeError, Services> =>
  Effect.gen(function* () {
    const caches = yield* Caches
    const o = yield* gather(runtime)
    const decided = decide(o)
    const ns = o.settings.engineNamespace
    const refused = yield* suspend(decided, ns)
    const { decision: d, refusal } = reported(o, decided, refused)
    const r = d.rollout
    // A rewrite deferred by the pacer (messages only; on the runtime, the Application count): come back when it is due.
    let messageDue = 0
    if (r !== undefined) {
      yield* step(r, ns)
      const write = rolloutStatus(o, r)
      if (write !== undefined) messageDue = yield* writePacedStatus(rolloutRoom, r.rollout, write, caches.rollouts)
    }
    const countDue = yield* writePacedStatus(runtimeRoom, runtime, runtimeStatus(o, d, refusal), caches.runtimes, ["engine.applications"])
    const due = [messageDue, countDue].filter((ms) => ms > 0)
    // Watch events on Applications drive progress; the deadline (and a slow safety poll) bound the wait.
    // While Applications exist, come back in time to notice an Argo CD that stopped comparing them. A refusal clears by
    // itself (an operation ends: a watch event) or by a change no watch here sees (a policy or role edited): come back
    // soon. Every timer reads the caches only.
    const staleCheck = d.ours > 0 ? Requeue.after(Math.max(1_000, o.settings.engineStaleAfterMs / 2)) : Requeue.onChange
    const refusalRetry = refusal !== undefined ? Requeue.min(staleCheck, Requeue.after(REFUSAL_RETRY_MS)) : staleCheck
    const watchdog = due.length > 0 ? Requeue.min(refusalRetry, Requeue.after(Math.min(...due))) : refusalRetry
    if (r?.deadline !== undefined) return Requeue.min(watchdog, Requeue.after(Math.max(50, Math.min(r.deadline - o.now + 50, 30_000))))
    return Requeue.min(watchdog, r !== undefined && r.progress._tag === "InProgress" ? Requeue.after(30_000) : Requeue.onChange)
  })

/**
 * A failed pass (`errors.ts`): a transient failure goes back to the driver as it is; a defect writes `InternalError`
 * into both rooms, emits one Warning Event when that is a transition, and fails with `InternalError`.
 */
const failed = (runtime: ClusterRuntime, cause: Cause.Cause<KubeError>): Effect.Effect<never, KubeError | InternalError, Services> =>
  failedPass(cause, {
    classOf,
    log: "Step-executor pass failed unexpectedly",
    report: Effect.gen(function* () {
      const caches = yield* Caches
      const now = yield* Clock.currentTimeMillis
      const rollout = openRollout(caches, runtime.metadata.uid)
      if (rollout !== undefined) yield* writeStatus(rolloutRoom, rollout, rolloutInternalError(rollout, now), caches.rollouts)
      return yield* writeStatus(runtimeRoom, runtime, runtimeInternalError(runtime, now), caches.runtimes)
    }),
    warning: { object: runtime, action: "Reconcile", note: "The step-executor failed unexpectedly" },
  })

export const reconcile = (key: ObjectKey): Effect.Effect<Requeue, KubeError | InternalError, Services> =>
  Effect.gen(function* () {
    const caches = yield* Caches
    return yield* singleton({
      get: fromCache(caches.runtimes),
      expectations: yield* Expectations,
      recheck: Requeue.after(EXPECTATION_RECHECK_MS),
      pass: (runtime: ClusterRuntime) => pass(runtime).pipe(Effect.catchCause((cause) => failed(runtime, cause))),
    })(key)
  }).pipe(Effect.withSpan("step-executor.reconcile"))
