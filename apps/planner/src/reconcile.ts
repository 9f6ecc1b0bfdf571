/**
 * planner: composes the immutable plan of the current resolution (or takes the pinned one), waits out the
 * stabilization window, assesses the transition, creates the RuntimeRollout, closes rollouts (outcome label) and
 * summarises the runtime in `Ready` and `Stalled`.
 *
 * Owns:   conditions `Planned`, `Ready`, `Stalled`, `status.plans` and the cleanup finalizer on ClusterRuntime `cluster`; `Succeeded`,
 *         `status.assessment` and the outcome label on RuntimeRollouts; plan and assessment ConfigMaps; rollout
 *         creation.
 * Reads:  `Resolved`, `Mirrored` (via `current` only), `EngineAvailable`, `status.resolution`, `status.mirror`,
 *         `status.engine`, the content ConfigMap, the rollouts' `Approved`, `Progressing`, `ValidationReady`,
 *         `Validated`; the registry (a pinned plan's charts, by digest);
 *         the runtime's Argo CD Applications (re-adoption; after a rollout, whether each release of the active plan is
 *         still ready at its revision: `Ready=False/NotReady`, readiness.ts).
 * Runs:   `aicr upgrade-check` Jobs (AICR 1.x) and their input ConfigMaps, owned by the Job.
 * Leaves alone: approvals (people), steps (step-executor), Applications (read only).
 *
 * gather → decide → act → report: `gather.ts` reads, `decide.ts` (with `rollouts.ts`, `teardown.ts`, `adopt.ts`,
 * `steps.ts`, `assess.ts`, `compose.ts`) decides, `act.ts` writes, `status.ts` says what to report, `errors.ts`
 * classes a failed pass (a defect writes `Planned=Unknown/InternalError`).
 */
import { ClusterRuntimeKind, type ClusterRuntime, type ObjectKey, Ready, type RuntimeRollout, RuntimeRolloutKind } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { current } from "@aicr/conditions"
import { type EventRecorder, Kube } from "@aicr/kube"
import { failedPass, type InternalError, Requeue, RetryAfterTransientFailure, singleton, type StatusPacer } from "@aicr/runtime"
import { type Cause, Clock, Effect, Option } from "effect"
import { addFinalizer, closeRollouts, createRollout, removeFinalizer, satisfy, writePlan, writeRuntimeStatus, writeStatus } from "./act"
import type { ChartRegistry } from "./charts"
import { PlannerConfig } from "./config"
import { contract } from "./contract"
import { decide, type Decision } from "./decide"
import { classOf, type PassError } from "./errors"
import { gather, type Observed } from "./gather"
import { judgeStack, NotReadySince, releasesNotReady, sinceKey, type StackReadiness } from "./readiness"
import { outcomeOf } from "./rollouts"
import { rolloutStatus, runtimeInternalError, runtimeStatus, watchedPlan } from "./status"
import { finalizerPatch } from "./teardown"

export const runtimeRoom = roomOn(contract, ClusterRuntimeKind)
/** How soon a blocked adoption (orphans, or Applications that do not rebuild) is looked at again. */
export const ADOPTION_RECHECK_MS = 5_000
export const rolloutRoom = roomOn(contract, RuntimeRolloutKind)

/** How soon a pin refused for missing charts is checked again (pushing them back sends no watch event). */
export const RECHECK = "1 minute"

type Services = Kube | EventRecorder | PlannerConfig | ChartRegistry | NotReadySince | StatusPacer

/**
 * After a rollout, the active plan's releases as Argo CD shows them (readiness.ts): each one not ready is remembered
 * from the first pass that saw it, and counts once it stayed so for the grace period.
 */
const watchStack = (o: Observed, d: Decision): Effect.Effect<StackReadiness, never, NotReadySince | PlannerConfig> =>
  Effect.gen(function* () {
    const plan = watchedPlan(o, d)
    const notReady = plan === undefined ? [] : releasesNotReady(plan, o.applications, o.runtime.metadata.uid!, o.engineNamespace)
    const since = yield* (yield* NotReadySince).observe(plan === undefined ? [] : notReady.map((r) => sinceKey(plan, r.release)))
    return plan === undefined ? { _tag: "Ready" } : judgeStack(plan, notReady, since, o.now, (yield* PlannerConfig).notReadyGraceMs)
  })

/** One pass over the runtime `cluster` (the frame, `singleton`, reads it and guards the name). */
const pass = (runtime: ClusterRuntime): Effect.Effect<Requeue, PassError, Services> =>
  Effect.gen(function* () {
    let o = yield* gather(runtime)
    let d = decide(o)
    // At most one chart check and one upgrade-check step per pass; each answer is decided on again.
    for (let i = 0; i < 2 && d.needs !== undefined; i++) {
      o = { ...o, ...(yield* satisfy(d.needs)) }
      d = decide(o)
    }
    const finalizer = d.finalizer === undefined ? undefined : finalizerPatch(runtime, d.finalizer)
    // Added before any other write of the pass: its precondition is the view just read.
    if (finalizer !== undefined && d.finalizer === "Add") yield* addFinalizer(runtime, finalizer)
    if (d.writePlan !== undefined) yield* writePlan(d.writePlan, o.namespace)
    const outcomes = yield* closeRollouts(runtime, d.closes)
    const rollouts: RuntimeRollout[] = [...o.rollouts.filter((r) => r.spec.runtimeUID === runtime.metadata.uid)]
    if (d.create !== undefined) {
      const created = yield* createRollout(runtime, d.create, o.namespace)
      if (Option.isSome(created)) rollouts.push(created.value)
    }
    for (const r of rollouts) yield* writeStatus(rolloutRoom, r, rolloutStatus(r, outcomes.get(r.metadata.name) ?? outcomeOf(r), o.now))
    const stack = yield* watchStack(o, d)
    const before = current(runtime, Ready)
    const wasNotReady = before.status === "False" && before.reason === "NotReady"
    const messageDue = yield* writeRuntimeStatus(runtimeRoom, runtime, runtimeStatus(o, d, stack), stack, wasNotReady)
    // A blip is looked at again when its grace ends; a deferred message when the pacer lets it through.
    const again = Requeue.min(
      stack._tag === "Blip" ? Requeue.after(stack.dueMs + 50) : Requeue.onChange,
      messageDue > 0 ? Requeue.after(messageDue) : Requeue.onChange,
    )
    // Removed last: without it the runtime is gone, and nothing more is written to it.
    if (finalizer !== undefined && d.finalizer === "Remove") {
      yield* removeFinalizer(runtime, finalizer, d.plan.message)
      return Requeue.onChange
    }
    if (d.plan._tag === "Assessing" && d.plan.retry === true) return yield* Effect.fail(new RetryAfterTransientFailure({ message: d.plan.message }))
    if (d.plan._tag === "Blocked" && d.plan.recheck === true) return Requeue.min(again, Requeue.after(RECHECK))
    if (d.plan._tag === "Stabilizing") return Requeue.min(again, Requeue.after(Math.max(0, d.plan.until - o.now) + 50))
    // A blocked adoption is also looked at again shortly: the Application watch starts only once Argo CD's CRD is
    // listable (with backoff), and a re-read costs little while nothing rolls out.
    if (d.plan._tag === "Blocked" && (d.plan.reason === "AdoptionBlocked" || d.plan.reason === "OrphanedObjectsPresent"))
      return Requeue.min(again, Requeue.after(ADOPTION_RECHECK_MS))
    return again
  })

/**
 * A failed pass (`errors.ts`): a transient failure goes back to the driver as it is; a defect writes
 * `Planned=Unknown/InternalError` into the runtime's room, emits one Warning Event when that is a transition, and fails
 * with `InternalError`.
 */
const failed = (runtime: ClusterRuntime, cause: Cause.Cause<PassError>): Effect.Effect<never, PassError | InternalError, Services> =>
  failedPass(cause, {
    classOf,
    log: "Planner pass failed unexpectedly",
    report: Effect.flatMap(Clock.currentTimeMillis, (now) => writeStatus(runtimeRoom, runtime, runtimeInternalError(runtime, now))),
    warning: { object: runtime, action: "Plan", note: "The planner failed unexpectedly" },
  })

export const reconcile = (key: ObjectKey): Effect.Effect<Requeue, PassError | InternalError, Services> =>
  Effect.flatMap(Kube, (kube) =>
    singleton({
      get: (k) => kube.get<ClusterRuntime>(ClusterRuntimeKind, k),
      pass: (runtime: ClusterRuntime) => pass(runtime).pipe(Effect.catchCause((cause) => failed(runtime, cause))),
    })(key),
  ).pipe(Effect.withSpan("planner.reconcile"))
