/**
 * planner: composes the immutable plan of the current resolution (or takes the pinned one), waits out the
 * stabilization window, assesses the transition, creates the RuntimeRollout, closes rollouts (outcome label) and
 * summarises the runtime in `Ready` and `Stalled`.
 *
 * Owns:   conditions `Planned`, `Ready`, `Stalled`, `status.plans` and the cleanup finalizer on ClusterRuntime `cluster`; `Succeeded`,
 *         `status.assessment` and the outcome label on RuntimeRollouts; plan and assessment ConfigMaps; rollout
 *         creation.
 * Reads:  `Resolved`, `Mirrored` (via `current` only), `status.resolution`, `status.mirror`, the content ConfigMap,
 *         the rollouts' `Approved`, `Progressing`, `Validated`; the registry (a pinned plan's charts, by digest);
 *         the runtime's Argo CD Applications (re-adoption; after a rollout, whether each release of the active plan is
 *         still ready at its revision: `Ready=False/NotReady`, readiness.ts).
 * Runs:   `aicr upgrade-check` Jobs (AICR 1.x) and their input ConfigMaps, owned by the Job.
 * Leaves alone: approvals (people), steps (step-executor), Applications (read only).
 */
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  ClusterRuntimeKind,
  Core,
  encodePlan,
  FINALIZER_CLEANUP,
  Ready,
  LABEL_OUTCOME,
  LABEL_ROLE,
  LABEL_ROLLOUT,
  LABEL_RUNTIME_UID,
  type ClusterRuntime,
  type ObjectKey,
  type Plan,
  planConfigMapName,
  PLAN_DATA_KEY,
  ROLE_CONTENT,
  ROLE_PLAN,
  type RuntimeRollout,
  RuntimeRolloutKind,
} from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { current } from "@aicr/conditions"
import { EventRecorder, Kube, type KubeError, onlyMessagesChange } from "@aicr/kube"
import { Requeue, singleton, StatusPacer } from "@aicr/runtime"
import { Data, Effect, Option } from "effect"
import type { Assessment } from "./assess"
import { ChartRegistry, chartsOf } from "./charts"
import { PlannerConfig } from "./config"
import { contract } from "./contract"
import { decide, type Need } from "./decide"
import { gather, type Observed } from "./gather"
import { judgeStack, NotReadySince, releasesNotReady, sinceKey, type StackReadiness } from "./readiness"
import { finalizerPatch } from "./teardown"
import { runUpgradeCheck } from "./upgrade-check"
import { outcomeOf } from "./rollouts"
import { assessmentConfigMapName, rolloutStatus, runtimeStatus, watchedPlan } from "./status"

export const runtimeRoom = roomOn(contract, ClusterRuntimeKind)
/** How soon a blocked adoption (orphans, or Applications that do not rebuild) is looked at again. */
export const ADOPTION_RECHECK_MS = 5_000
export const rolloutRoom = roomOn(contract, RuntimeRolloutKind)

const ignoreExists = <A>(e: Effect.Effect<A, KubeError>) =>
  e.pipe(
    Effect.asVoid,
    Effect.catchIf(
      (err) => err.reason._tag === "AlreadyExists",
      () => Effect.void,
    ),
  )

export const planConfigMap = (plan: Plan, namespace: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: planConfigMapName(plan.desiredStateDigest),
    namespace,
    labels: { [LABEL_ROLE]: ROLE_PLAN, [LABEL_RUNTIME_UID]: plan.runtimeUID },
    annotations: { [ANNOTATION_DESIRED_STATE_DIGEST]: plan.desiredStateDigest },
  },
  immutable: true,
  data: { [PLAN_DATA_KEY]: encodePlan(plan) },
})

export const assessmentConfigMap = (rollout: RuntimeRollout, assessment: Assessment, namespace: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: assessmentConfigMapName(rollout.metadata.name),
    namespace,
    labels: { [LABEL_ROLE]: ROLE_CONTENT, [LABEL_ROLLOUT]: rollout.metadata.name, [LABEL_RUNTIME_UID]: rollout.spec.runtimeUID },
  },
  immutable: true,
  data: { "assessment.json": JSON.stringify(assessment, null, 2) },
})

/** How soon a pin refused for missing charts is checked again (pushing them back sends no watch event). */
export const RECHECK = "1 minute"

/** A transient failure after its condition was written: the driver's backoff retries the key. */
export class RetryAfterTransientFailure extends Data.TaggedError("RetryAfterTransientFailure")<{ readonly message: string }> {}

/** Does the I/O a decision asked for and returns what it observed. */
const satisfy = (need: Need): Effect.Effect<Partial<Observed>, KubeError, Kube | PlannerConfig | ChartRegistry> =>
  Effect.gen(function* () {
    if (need._tag === "PinCharts") {
      const check = yield* (yield* ChartRegistry).check(chartsOf(need.plan))
      return { pinCharts: { digest: need.plan.desiredStateDigest, check } }
    }
    return { upgradeCheck: yield* runUpgradeCheck(need.request, yield* PlannerConfig, contract.fieldManager) }
  })

type Services = Kube | EventRecorder | PlannerConfig | ChartRegistry | NotReadySince | StatusPacer

/**
 * After a rollout, the active plan's releases as Argo CD shows them (readiness.ts): each one not ready is remembered
 * from the first pass that saw it, and counts once it stayed so for the grace period.
 */
const watchStack = (o: Observed, d: ReturnType<typeof decide>): Effect.Effect<StackReadiness, never, NotReadySince | PlannerConfig> =>
  Effect.gen(function* () {
    const plan = watchedPlan(o, d)
    const notReady = plan === undefined ? [] : releasesNotReady(plan, o.applications, o.runtime.metadata.uid!, o.engineNamespace)
    const since = yield* (yield* NotReadySince).observe(plan === undefined ? [] : notReady.map((r) => sinceKey(plan, r.release)))
    return plan === undefined ? { _tag: "Ready" } : judgeStack(plan, notReady, since, o.now, (yield* PlannerConfig).notReadyGraceMs)
  })

/** One pass over the runtime `cluster` (the frame, `singleton`, reads it and guards the name). */
const pass = (runtime: ClusterRuntime): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Services> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const events = yield* EventRecorder
    let o = yield* gather(runtime)
    let d = decide(o)
    // At most one chart check and one upgrade-check step per pass; each answer is decided on again.
    for (let i = 0; i < 2 && d.needs !== undefined; i++) {
      o = { ...o, ...(yield* satisfy(d.needs)) }
      d = decide(o)
    }
    const finalizer = d.finalizer === undefined ? undefined : finalizerPatch(runtime, d.finalizer)
    const patchFinalizer = (ops: NonNullable<typeof finalizer>, what: string) =>
      kube
        .patch(ClusterRuntimeKind, runtime.metadata.name, { type: "json", ops }, { fieldManager: contract.fieldManager })
        .pipe(Effect.tap(() => Effect.logInfo(what, { finalizer: FINALIZER_CLEANUP })))
    // Added before any other write of the pass: its precondition is the resourceVersion just read.
    if (finalizer !== undefined && d.finalizer === "Add") yield* patchFinalizer(finalizer, "Added finalizer")

    if (d.writePlan !== undefined) {
      yield* ignoreExists(kube.create(Core.ConfigMap, planConfigMap(d.writePlan, o.namespace) as never))
      yield* Effect.logInfo("Wrote plan", { plan: d.writePlan.desiredStateDigest, releases: d.writePlan.releases.length })
    }
    const outcomes = new Map<string, (typeof d.closes)[number]["outcome"]>()
    for (const c of d.closes) {
      yield* kube.apply(
        RuntimeRolloutKind,
        {
          apiVersion: "operator.aicr.run/v1alpha1",
          kind: "RuntimeRollout",
          metadata: { name: c.rollout.metadata.name, labels: { [LABEL_OUTCOME]: c.outcome } },
        },
        { fieldManager: contract.fieldManager },
      )
      outcomes.set(c.rollout.metadata.name, c.outcome)
      yield* Effect.logInfo("Closed rollout", { rollout: c.rollout.metadata.name, outcome: c.outcome })
      yield* events.event(runtime, {
        type: c.outcome === "Succeeded" || c.outcome === "Superseded" ? "Normal" : "Warning",
        reason: `Rollout${c.outcome}`,
        action: "Close",
        note: `Rollout ${c.rollout.metadata.name} ended ${c.outcome}`,
      })
    }
    const rollouts = [...o.rollouts.filter((r) => r.spec.runtimeUID === runtime.metadata.uid)]
    if (d.create !== undefined) {
      yield* ignoreExists(kube.create(Core.ConfigMap, assessmentConfigMap(d.create.rollout, d.create.assessment, o.namespace) as never))
      const created = yield* kube.create(RuntimeRolloutKind, d.create.rollout).pipe(
        Effect.map(Option.some),
        Effect.catchIf(
          (err) => err.reason._tag === "AlreadyExists",
          () => Effect.succeed(Option.none<RuntimeRollout>()),
        ),
      )
      if (Option.isSome(created)) {
        rollouts.push(created.value)
        yield* Effect.logInfo("Created rollout", {
          rollout: created.value.metadata.name,
          kind: created.value.spec.kind,
          steps: created.value.spec.steps?.length ?? 0,
        })
        yield* events.event(runtime, {
          type: "Normal",
          reason: "RolloutCreated",
          action: "Plan",
          note: `Rollout ${created.value.metadata.name} (${created.value.spec.kind}, ${created.value.spec.steps?.length ?? 0} steps) awaits approval`,
        })
      }
    }
    for (const r of rollouts) {
      yield* kube.applyStatus(rolloutRoom, r, rolloutStatus(r, outcomes.get(r.metadata.name) ?? outcomeOf(r), o.now))
    }
    const stack = yield* watchStack(o, d)
    const write = runtimeStatus(o, d, stack)
    // While Ready stays NotReady, a new message alone (a resource's health text, a count) is written at most once per
    // pacer interval: an Application that flaps between words is not a write per Argo CD status update.
    const before = current(runtime, Ready)
    const wasNotReady = before.status === "False" && before.reason === "NotReady"
    const messageOnly = wasNotReady && stack._tag === "NotReady" && onlyMessagesChange(runtimeRoom, runtime, write)
    let applied = false
    const messageDue = yield* (yield* StatusPacer).pace(
      `ClusterRuntime/${runtime.metadata.uid ?? runtime.metadata.name}`,
      messageOnly,
      kube.applyStatus(runtimeRoom, runtime, write).pipe(Effect.map((r) => (applied = r.applied))),
    )
    if (applied && stack._tag === "NotReady" && !wasNotReady)
      yield* events.event(runtime, { type: "Warning", reason: "ReleaseNotReady", action: "Watch", note: stack.message.slice(0, 1024) })
    if (applied && stack._tag === "Ready" && wasNotReady)
      yield* events.event(runtime, {
        type: "Normal",
        reason: "ReleasesReady",
        action: "Watch",
        note: "Every release of the active plan is ready at its revision again",
      })
    // A blip is looked at again when its grace ends; a deferred message when the pacer lets it through.
    const again = Requeue.min(
      stack._tag === "Blip" ? Requeue.after(stack.dueMs + 50) : Requeue.onChange,
      messageDue > 0 ? Requeue.after(messageDue) : Requeue.onChange,
    )
    // Removed last: without it the runtime is gone, and nothing more is written to it.
    if (finalizer !== undefined && d.finalizer === "Remove") {
      yield* patchFinalizer(finalizer, "Removed finalizer")
      yield* events.event(runtime, {
        type: "Normal",
        reason: "FinalizerRemoved",
        action: "Delete",
        note: `Removed the finalizer ${FINALIZER_CLEANUP}: ${d.plan.message}`,
      })
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

export const reconcile = (key: ObjectKey): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Services> =>
  Effect.flatMap(Kube, (kube) => singleton({ get: (k) => kube.get<ClusterRuntime>(ClusterRuntimeKind, k), pass })(key)).pipe(
    Effect.withSpan("planner.reconcile"),
  )
