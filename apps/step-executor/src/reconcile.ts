/**
 * step-executor: rolls a rollout's steps out through Argo CD, one release at a time in the rollout's order, and
 * advances only when the release is ready at the revision just written; applies suspendEngine.
 *
 * Owns:   `Progressing` and `status.steps` on the open RuntimeRollout; `EngineAvailable` and `status.engine` on the
 *         ClusterRuntime `cluster`; the Argo CD Applications it creates (runtime-uid label).
 * Reads:  `Approved`, `ValidationReady` (only when current), the rollout's spec (steps, acknowledgements), the target
 *         plan ConfigMap and its content ConfigMap, Argo CD's CRD, the AppProject and every Application in the engine
 *         namespace.
 * Leaves alone: approvals (people, approval-guard), outcomes (planner), any Application without our label.
 *
 * Crash-safe by construction: every pass rebuilds the step states from the API server only, and writes at most one
 * Application, only when its markers are not there yet, so a restart never repeats a write.
 */
import { ArgoCD, ClusterRuntimeKind, type ClusterRuntime, type ObjectKey, RuntimeRolloutKind, SINGLETON_NAME } from "@aicr/api"
import { suspensionPatch } from "@aicr/argocd"
import { roomOn } from "@aicr/contracts"
import { EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { Requeue } from "@aicr/runtime"
import { Effect, Option } from "effect"
import type { ExecutorConfig } from "./config"
import { contract } from "./contract"
import { decide, type Refusal, reported } from "./decide"
import { gather } from "./gather"
import { rolloutStatus, runtimeStatus } from "./status"

/** How soon a refused suspension is tried again. */
const REFUSAL_RETRY_MS = 10_000
const refusedByApiServer = (e: KubeError) => e.reason._tag === "Forbidden" || e.reason._tag === "Invalid"

export const runtimeRoom = roomOn(contract, ClusterRuntimeKind)
export const rolloutRoom = roomOn(contract, RuntimeRolloutKind)

export const reconcile = (key: ObjectKey): Effect.Effect<Requeue, KubeError, Kube | EventRecorder | ExecutorConfig> =>
  Effect.gen(function* () {
    if (key !== SINGLETON_NAME) return Requeue.never // the operator acts only on `cluster` (spec §3.2)
    const kube = yield* Kube
    const events = yield* EventRecorder
    const found = yield* kube.get<ClusterRuntime>(ClusterRuntimeKind, key)
    if (Option.isNone(found)) return Requeue.onChange
    const runtime = found.value
    const o = yield* gather(runtime)
    const decided = decide(o)
    const ns = o.settings.engineNamespace

    const refused: Refusal[] = []
    for (const s of decided.suspend) {
      const patch = kube.patch(ArgoCD.Application, `${ns}/${s.name}`, { type: "merge", body: suspensionPatch(s.suspend) }, { fieldManager: contract.fieldManager })
      if (!s.suspend) {
        yield* patch
        yield* Effect.logInfo("Resumed Application", { Application: `${ns}/${s.name}` })
        continue
      }
      // A refused suspension (an admission policy, RBAC) is reported, not retried in a hot loop: the next pass retries.
      const done = yield* patch.pipe(
        Effect.as(undefined),
        Effect.catchIf(refusedByApiServer, (e) => Effect.succeed(`the API server refused the suspension patch (${e.reason._tag}): ${e.reason.message}`)),
      )
      if (done === undefined) yield* Effect.logInfo("Suspended Application", { Application: `${ns}/${s.name}` })
      else {
        refused.push({ name: s.name, why: done })
        yield* Effect.logWarning("Suspension refused", { Application: `${ns}/${s.name}`, why: done })
      }
    }
    const { decision: d, refusal } = reported(o, decided, refused)
    const r = d.rollout
    const action = r?.action
    if (r !== undefined && action !== undefined) {
      const step = r.rollout.spec.steps![action.index]!
      if (action._tag === "Write") {
        yield* kube.apply(ArgoCD.Application, action.application, { fieldManager: contract.fieldManager })
        yield* Effect.logInfo("Wrote Application", { RuntimeRollout: r.rollout.metadata.name, Application: `${ns}/${step.release}`, step: action.index + 1, revision: action.application.spec.source.targetRevision })
        yield* events.event(r.rollout, { type: "Normal", reason: "StepStarted", action: "WriteApplication", note: `Step ${action.index + 1} ${step.release} (${step.action}): wrote Application ${ns}/${step.release} at ${action.application.spec.source.targetRevision}` })
      } else {
        yield* kube.delete(ArgoCD.Application, `${ns}/${action.name}`, action.uid ? { preconditions: { uid: action.uid } } : {}).pipe(Effect.catchIf((e) => e.reason._tag === "NotFound", () => Effect.void))
        yield* Effect.logInfo("Deleted Application", { RuntimeRollout: r.rollout.metadata.name, Application: `${ns}/${action.name}`, step: action.index + 1 })
        yield* events.event(r.rollout, { type: "Normal", reason: "StepStarted", action: "DeleteApplication", note: `Step ${action.index + 1} ${step.release} (Remove): deleting Application ${ns}/${step.release} with its resources` })
      }
    }
    if (r !== undefined) {
      const write = rolloutStatus(o, r)
      if (write !== undefined) yield* kube.applyStatus(rolloutRoom, r.rollout, write)
    }
    yield* kube.applyStatus(runtimeRoom, runtime, runtimeStatus(o, d, refusal))
    // Watch events on Applications drive progress; the deadline (and a slow safety poll) bound the wait.
    // While Applications exist, come back in time to notice an Argo CD that stopped comparing them. A refusal clears by
    // itself (an operation ends: a watch event) or by a change no watch here sees (a policy or role edited): come back
    // soon.
    const staleCheck = d.ours > 0 ? Requeue.after(Math.max(1_000, o.settings.engineStaleAfterMs / 2)) : Requeue.onChange
    const watchdog = refusal !== undefined ? Requeue.min(staleCheck, Requeue.after(REFUSAL_RETRY_MS)) : staleCheck
    if (r?.deadline !== undefined) return Requeue.min(watchdog, Requeue.after(Math.max(50, Math.min(r.deadline - o.now + 50, 30_000))))
    return Requeue.min(watchdog, r !== undefined && r.progress._tag === "InProgress" ? Requeue.after(30_000) : Requeue.onChange)
  }).pipe(Effect.withSpan("step-executor.reconcile"))
