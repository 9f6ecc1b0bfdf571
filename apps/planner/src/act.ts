/**
 * act: the planner's writes, in the order a pass makes them (reconcile.ts), each as decide asked for it:
 *
 * - the cleanup finalizer (`finalizerPatch`, teardown.ts): a JSON patch whose `test` operation holds it to the view
 *   the pass read (a moved view fails with `FinalizerMovedError`, retried); added before any other write of the pass,
 *   removed after the last one;
 * - the target plan's immutable ConfigMap, created once (one already there is the same document: its name is the
 *   plan's digest);
 * - closing rollouts: the `operator.aicr.run/outcome` label applied (field manager `aicr-planner`), a Normal or
 *   Warning Event each;
 * - the new rollout: its assessment ConfigMap, then the RuntimeRollout, created (an `AlreadyExists` means a pass
 *   before created it), a Normal `RolloutCreated` Event;
 * - the rooms (`applyStatus`, skipped when nothing changed): `Succeeded` and `status.assessment` on each rollout;
 *   `Planned`, `Ready`, `Stalled` and `status.plans` on the runtime, where a rewrite of messages only while `Ready`
 *   stays `NotReady` is paced (`@aicr/runtime`'s `StatusPacer`), with a Warning `ReleaseNotReady` or Normal
 *   `ReleasesReady` Event on the transitions; after a defect, `Planned=Unknown/InternalError` (errors.ts);
 * - the I/O a decision needs before it can decide again (`satisfy`): the pinned plan's charts checked in the
 *   registry (reads), and one step of the transition's `aicr upgrade-check` Job (`runAicrJob`, `@aicr/aicr`: the Job
 *   created suspended, its input ConfigMap owned by it, resumed; then how it ended).
 */
import { type JobState, runAicrJob, upgradeCheckInput, upgradeCheckJob, upgradeCheckJobName } from "@aicr/aicr"
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  ClusterRuntimeKind,
  type ClusterRuntime,
  Core,
  encodePlan,
  FINALIZER_CLEANUP,
  type KubeObject,
  LABEL_OUTCOME,
  LABEL_ROLE,
  LABEL_ROLLOUT,
  LABEL_RUNTIME_UID,
  type Outcome,
  type Plan,
  planConfigMapName,
  PLAN_DATA_KEY,
  ROLE_CONTENT,
  ROLE_PLAN,
  type Room,
  type RuntimeRollout,
  RuntimeRolloutKind,
} from "@aicr/api"
import { EventRecorder, type JsonPatchOp, Kube, type KubeError, onlyMessagesChange, type StatusWrite } from "@aicr/kube"
import { StatusPacer } from "@aicr/runtime"
import { Effect, Option } from "effect"
import type { Assessment } from "./assess"
import { ChartRegistry, chartsOf } from "./charts"
import { PlannerConfig, type PlannerSettings } from "./config"
import { contract } from "./contract"
import type { Close, Need, NewRollout } from "./decide"
import { FinalizerMovedError } from "./errors"
import { type Observed, readRecipe } from "./gather"
import type { StackReadiness } from "./readiness"
import { assessmentConfigMapName } from "./status"
import type { UpgradeCheckRequest, UpgradeCheckRun } from "./upgrade-check"

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

/** Applies the finalizer patch; a `test` operation the runtime no longer passes (422) is a moved view, not a defect. */
const patchFinalizer = (runtime: ClusterRuntime, ops: ReadonlyArray<JsonPatchOp>, what: string): Effect.Effect<void, KubeError | FinalizerMovedError, Kube> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    yield* kube.patch(ClusterRuntimeKind, runtime.metadata.name, { type: "json", ops }, { fieldManager: contract.fieldManager }).pipe(
      Effect.catchIf(
        (e) => e.reason._tag === "Invalid",
        (e) => Effect.fail(new FinalizerMovedError({ message: `the runtime's finalizers changed since it was read: ${e.message}` })),
      ),
    )
    yield* Effect.logInfo(what, { finalizer: FINALIZER_CLEANUP })
  })

/** Adds the cleanup finalizer (`ops` from `finalizerPatch(runtime, "Add")`). */
export const addFinalizer = (runtime: ClusterRuntime, ops: ReadonlyArray<JsonPatchOp>) => patchFinalizer(runtime, ops, "Added finalizer")

/** Removes the cleanup finalizer, the pass's last write: without it the runtime is gone. */
export const removeFinalizer = (
  runtime: ClusterRuntime,
  ops: ReadonlyArray<JsonPatchOp>,
  why: string,
): Effect.Effect<void, KubeError | FinalizerMovedError, Kube | EventRecorder> =>
  Effect.gen(function* () {
    yield* patchFinalizer(runtime, ops, "Removed finalizer")
    yield* (yield* EventRecorder).event(runtime, {
      type: "Normal",
      reason: "FinalizerRemoved",
      action: "Delete",
      note: `Removed the finalizer ${FINALIZER_CLEANUP}: ${why}`,
    })
  })

/** Creates the target plan's immutable ConfigMap. */
export const writePlan = (plan: Plan, namespace: string): Effect.Effect<void, KubeError, Kube> =>
  Effect.gen(function* () {
    yield* ignoreExists((yield* Kube).create(Core.ConfigMap, planConfigMap(plan, namespace) as never))
    yield* Effect.logInfo("Wrote plan", { plan: plan.desiredStateDigest, releases: plan.releases.length })
  })

/** Labels each closing rollout with its outcome; returns the outcomes by rollout name. */
export const closeRollouts = (
  runtime: ClusterRuntime,
  closes: ReadonlyArray<Close>,
): Effect.Effect<ReadonlyMap<string, Outcome>, KubeError, Kube | EventRecorder> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const events = yield* EventRecorder
    const outcomes = new Map<string, Outcome>()
    for (const c of closes) {
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
    return outcomes
  })

/** Creates the new rollout after its assessment ConfigMap; the rollout as created, none when a pass before did. */
export const createRollout = (
  runtime: ClusterRuntime,
  create: NewRollout,
  namespace: string,
): Effect.Effect<Option.Option<RuntimeRollout>, KubeError, Kube | EventRecorder> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    yield* ignoreExists(kube.create(Core.ConfigMap, assessmentConfigMap(create.rollout, create.assessment, namespace) as never))
    const created = yield* kube.create(RuntimeRolloutKind, create.rollout).pipe(
      Effect.map(Option.some),
      Effect.catchIf(
        (err) => err.reason._tag === "AlreadyExists",
        () => Effect.succeed(Option.none<RuntimeRollout>()),
      ),
    )
    if (Option.isNone(created)) return created
    const r = created.value
    const steps = r.spec.steps?.length ?? 0
    yield* Effect.logInfo("Created rollout", { rollout: r.metadata.name, kind: r.spec.kind, steps })
    yield* (yield* EventRecorder).event(runtime, {
      type: "Normal",
      reason: "RolloutCreated",
      action: "Plan",
      note: `Rollout ${r.metadata.name} (${r.spec.kind}, ${steps} steps) awaits approval`,
    })
    return created
  })

/** Applies a status room (nothing when unchanged); true when written. */
export const writeStatus = <T extends KubeObject>(room: Room, obj: T, write: StatusWrite): Effect.Effect<boolean, KubeError, Kube> =>
  Effect.map(
    Effect.flatMap(Kube, (kube) => kube.applyStatus(room, obj, write)),
    (r) => r.applied,
  )

/**
 * The runtime's room, with a rewrite of messages only paced while `Ready` stays `NotReady` (an Application that flaps
 * between words is not a write per Argo CD status update), and the Events of `Ready`'s transitions into and out of
 * `NotReady`. Returns the ms until a deferred rewrite is due, 0 when nothing was deferred.
 */
export const writeRuntimeStatus = (
  room: Room,
  runtime: ClusterRuntime,
  write: StatusWrite,
  stack: StackReadiness,
  wasNotReady: boolean,
): Effect.Effect<number, KubeError, Kube | EventRecorder | StatusPacer> =>
  Effect.gen(function* () {
    const events = yield* EventRecorder
    const messageOnly = wasNotReady && stack._tag === "NotReady" && onlyMessagesChange(room, runtime, write)
    let applied = false
    const due = yield* (yield* StatusPacer).pace(
      `ClusterRuntime/${runtime.metadata.uid ?? runtime.metadata.name}`,
      messageOnly,
      writeStatus(room, runtime, write).pipe(Effect.map((a) => (applied = a))),
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
    return due
  })

/** Does the I/O a decision asked for and returns what it observed, for decide to decide again. */
export const satisfy = (need: Need): Effect.Effect<Partial<Observed>, KubeError, Kube | PlannerConfig | ChartRegistry> =>
  Effect.gen(function* () {
    if (need._tag === "PinCharts") {
      const check = yield* (yield* ChartRegistry).check(chartsOf(need.plan))
      return { pinCharts: { digest: need.plan.desiredStateDigest, check } }
    }
    return { upgradeCheck: yield* runUpgradeCheck(need.request, yield* PlannerConfig) }
  })

/**
 * One step of the transition's upgrade-check Job (upgrade-check.ts names it). While the Job is not running yet, both
 * recipes are read and verified against the digests the plans recorded (once it runs, its input is its own owned
 * ConfigMap); a recipe gone or changed is `InputUnreadable`.
 */
export const runUpgradeCheck = (req: UpgradeCheckRequest, settings: PlannerSettings): Effect.Effect<UpgradeCheckRun, KubeError, Kube> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const name = upgradeCheckJobName(req.key)
    const job = upgradeCheckJob({ ...settings.jobs, image: req.image }, req.key)
    const where = `${settings.jobs.namespace}/${name}`
    const found = yield* kube.get<KubeObject & { readonly spec?: { readonly suspend?: boolean } }>(Core.Job, where)
    const starting = Option.isNone(found) || found.value.spec?.suspend === true
    let recipes = { from: "", to: "" }
    if (starting) {
      const [from, to] = [yield* readRecipe(settings.namespace, req.from), yield* readRecipe(settings.namespace, req.to)]
      if (!from.ok) return { _tag: "InputUnreadable", key: req.key, message: from.why }
      if (!to.ok) return { _tag: "InputUnreadable", key: req.key, message: to.why }
      recipes = { from: from.text, to: to.text }
    }
    const state: JobState = yield* runAicrJob(kube, contract.fieldManager, job, (created) => (starting ? [upgradeCheckInput(created, req.key, recipes)] : []))
    return { _tag: "Job", key: req.key, job: where, state }
  })
