/**
 * act: the step-executor's writes, each followed by an expectation (`@aicr/runtime`'s `Expectations`): the next pass
 * decides only once the caches show it, so a stale cache never makes it write again (ADR 20261203-informer-caches).
 *
 * - suspension patches (JSON merge patch of `spec.syncPolicy.automated.enabled` on each operator Application); one
 *   refused by the API server (`Forbidden`/`Invalid`: an admission policy, RBAC) is reported, not retried in a hot loop;
 * - the rollout's one action: the step's Application written as decided (`@aicr/kube`'s `writeAsDecided`, field
 *   manager `aicr-step-executor`): created when the caches showed none, else server-side applied at the
 *   resourceVersion the caches showed; or the delete of a Remove step's Application with uid and resourceVersion
 *   preconditions. A write decided on a view that is stale fails (`AlreadyExists`, `Conflict`) instead of landing
 *   twice, whatever a restarted process's cache has seen; the pass decides again. A Normal `StepStarted` Event each;
 * - the status rooms (`applyStatus`, skipped when nothing changed); on the rollout, a rewrite that changes only
 *   messages (what the step in flight still waits for, with each Argo CD status update) is paced: at most one per
 *   10 s (`@aicr/runtime`'s `StatusPacer`), the latest written once the interval is over; on the runtime, so is a
 *   rewrite that changes only `status.engine.applications` (the count grows by one with each Install step).
 */
import { ArgoCD, type KubeObject, type Room } from "@aicr/api"
import { suspensionPatch } from "@aicr/argocd"
import { EventRecorder, type Informer, Kube, type KubeError, onlyMessagesChange, type StatusWrite, writeAsDecided } from "@aicr/kube"
import { Expectations, StatusPacer } from "@aicr/runtime"
import { Effect } from "effect"
import { Caches } from "./caches"
import { contract } from "./contract"
import type { Decision, Refusal, RolloutDecision } from "./decide"

const refusedByApiServer = (e: KubeError) => e.reason._tag === "Forbidden" || e.reason._tag === "Invalid"

/**
 * Writes this pass's suspension patches, `SUSPEND_CONCURRENCY` at a time (each a merge patch of its own Application's
 * automated-sync field, independent of the others: `suspendEngine` reaches 13 Applications in about one round trip,
 * not 13); returns the Applications whose patch the API server refused, and why, in the decision's order.
 */
export const suspend = (d: Decision, engineNamespace: string): Effect.Effect<ReadonlyArray<Refusal>, KubeError, Kube | Caches | Expectations> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const { applications } = yield* Caches
    const expect = yield* Expectations
    const outcomes = yield* Effect.forEach(
      d.suspend,
      (s) =>
        Effect.gen(function* () {
          const key = `${engineNamespace}/${s.name}`
          const patch = kube
            .patch(ArgoCD.Application, key, { type: "merge", body: suspensionPatch(s.suspend) }, { fieldManager: contract.fieldManager })
            .pipe(Effect.tap((written) => expect.written(applications, written)))
          if (!s.suspend) {
            yield* patch
            yield* Effect.logInfo("Resumed Application", { Application: key })
            return undefined
          }
          const done = yield* patch.pipe(
            Effect.as(undefined),
            Effect.catchIf(refusedByApiServer, (e) => Effect.succeed(`the API server refused the suspension patch (${e.reason._tag}): ${e.reason.message}`)),
          )
          if (done === undefined) {
            yield* Effect.logInfo("Suspended Application", { Application: key })
            return undefined
          }
          yield* Effect.logWarning("Suspension refused", { Application: key, why: done })
          return { name: s.name, why: done } satisfies Refusal
        }),
      { concurrency: SUSPEND_CONCURRENCY },
    )
    return outcomes.filter((r): r is Refusal => r !== undefined)
  })

/** Suspension patches in flight at once: a whole stack's (13–17 Applications) in one go, within the client's burst. */
export const SUSPEND_CONCURRENCY = 16

/** The rollout's one action: write the step's Application, or delete a Remove step's Application. */
export const step = (r: RolloutDecision, engineNamespace: string): Effect.Effect<void, KubeError, Kube | EventRecorder | Caches | Expectations> =>
  Effect.gen(function* () {
    const action = r.action
    if (action === undefined) return
    const kube = yield* Kube
    const events = yield* EventRecorder
    const { applications } = yield* Caches
    const expect = yield* Expectations
    const s = r.rollout.spec.steps![action.index]!
    if (action._tag === "Write") {
      const written = yield* writeAsDecided(kube, ArgoCD.Application, action.application, action.seen, { fieldManager: contract.fieldManager })
      yield* expect.written(applications, written)
      const revision = action.application.spec.source.targetRevision
      yield* Effect.logInfo("Wrote Application", {
        RuntimeRollout: r.rollout.metadata.name,
        Application: `${engineNamespace}/${s.release}`,
        step: action.index + 1,
        revision,
      })
      yield* events.event(r.rollout, {
        type: "Normal",
        reason: "StepStarted",
        action: "WriteApplication",
        note: `Step ${action.index + 1} ${s.release} (${s.action}): wrote Application ${engineNamespace}/${s.release} at ${revision}`,
      })
      return
    }
    const key = `${engineNamespace}/${action.name}`
    yield* kube.delete(ArgoCD.Application, key, { preconditions: { uid: action.uid, resourceVersion: action.resourceVersion } }).pipe(
      Effect.catchIf(
        (e) => e.reason._tag === "NotFound",
        () => Effect.void,
      ),
    )
    yield* expect.deleted(applications, key, action.uid)
    yield* Effect.logInfo("Deleted Application", { RuntimeRollout: r.rollout.metadata.name, Application: key, step: action.index + 1 })
    yield* events.event(r.rollout, {
      type: "Normal",
      reason: "StepStarted",
      action: "DeleteApplication",
      note: `Step ${action.index + 1} ${s.release} (Remove): deleting Application ${key} with its resources`,
    })
  })

/** Applies a status room on `obj` (nothing when unchanged) and expects the cache to show it; true when written. */
export const writeStatus = <T extends KubeObject>(
  room: Room,
  obj: T,
  write: StatusWrite,
  cache: Informer<T>,
): Effect.Effect<boolean, KubeError, Kube | Expectations> =>
  Effect.gen(function* () {
    const { applied, object } = yield* (yield* Kube).applyStatus(room, obj, write)
    if (applied) yield* (yield* Expectations).written(cache, object)
    return applied
  })

/**
 * `writeStatus` with changes of messages only (and of the informational fields in `also`) paced (`StatusPacer`,
 * keyed by the object's uid): the ms until a deferred rewrite is due, 0 when nothing was deferred. The caller comes
 * back then, so the latest is written.
 */
export const writePacedStatus = <T extends KubeObject>(
  room: Room,
  obj: T,
  write: StatusWrite,
  cache: Informer<T>,
  also: ReadonlyArray<string> = [],
): Effect.Effect<number, KubeError, Kube | Expectations | StatusPacer> =>
  Effect.gen(function* () {
    const pacer = yield* StatusPacer
    return yield* pacer.pace(
      `${room.kind.kind}/${obj.metadata.uid ?? obj.metadata.name}`,
      onlyMessagesChange(room, obj, write, also),
      writeStatus(room, obj, write, cache),
    )
  })
