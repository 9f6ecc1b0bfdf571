/**
 * decide: pure. From what the API server shows, the one thing to do next and what to report:
 *
 * - every step's state comes from the live Application and its markers (chart and values digest annotations):
 *   written and ready at its revision (the research-note predicate, `@aicr/argocd`), written and waiting, written and
 *   failed (Argo CD's sync failure, or the step's deadline passed), or not written; a Remove step is done once its
 *   Application is gone (the resources finalizer pruned first). A step before the last written one is done: the
 *   executor advanced past it, which it does only at readiness.
 * - the first step not done is the current one. Written → wait (the step in flight finishes even after a revocation
 *   or an expiry). Not written → write it only when everything allows a new step: engine available, not suspended,
 *   not paused, `Approved` current True, `ValidationReady` current True when validation is Required (not for a
 *   `Remove` rollout, which leaves nothing to validate). A runtime being deleted is served like any other: its
 *   finalizer keeps it until the planner's `Remove` rollout has run.
 * - suspendEngine: every operator Application gets `automated.enabled: false`; clearing it removes the field. It does
 *   not hold on an Application while a sync operation is requested or running on it (Argo CD finishes it), nor on one
 *   whose suspension patch the API server refused: `EngineSuspensionRefused` (ADR 20261202-engine-suspension-refused).
 * - an Application with a wanted name that lacks our runtime-uid label is never touched (`ForeignObject`).
 */
import {
  Approved, deploymentValidationOf, LABEL_PLAN, LABEL_RELEASE, LABEL_RUNTIME_UID, type PlanRelease, planKey, Progressing, type RolloutStep, type RuntimeRollout, ValidationReady,
} from "@aicr/api"
import {
  ANNOTATION_PLAN_DIGEST, ANNOTATION_WRITTEN_AT, type Application, automatedSyncEnabled, gateFailureAt, helmSourceOf, notReadyAt, releaseApplication,
  suspended, suspensionBlockedBy, syncFailureAt, unchangedSinceWritten, writtenFor,
} from "@aicr/argocd"
import { current } from "@aicr/conditions"
import type { Observed } from "./gather"

export type StepState = "Pending" | "WaitingForReady" | "AwaitingAcknowledgement" | "Ready" | "Failed"

export interface StepView {
  readonly index: number
  readonly step: RolloutStep
  readonly state: StepState
  readonly writtenRevision?: string
  readonly readyAtRevision?: string
  readonly startedAt?: string
  /** An AICR readiness-gate step's gate: Pending until its Job completed, Passed once ready, Failed. */
  readonly gate?: "Pending" | "Passed" | "Failed"
  readonly message?: string
}

/** Why the current step cannot start, or why the rollout cannot go on: a Progressing False reason. */
export type Blocked =
  | "AwaitingApproval" | "AwaitingAcknowledgement" | "AwaitingValidationReady" | "Paused" | "EngineSuspended" | "EngineMissing" | "ProjectMissing" | "EngineNotResponding"
  | "Unauthorized" | "InventoryDrift" | "StepUnknown" | "MovedReleaseMissing" | "EngineSuspensionRefused" | "ForeignObject" | "PlanUnreadable" | "RolloutFailed"
  | "RolloutRevoked" | "RolloutExpired"

export type Progress =
  | { readonly _tag: "Completed"; readonly message: string }
  | { readonly _tag: "InProgress"; readonly message: string }
  | { readonly _tag: "Blocked"; readonly reason: Blocked; readonly message: string }
  /** Our own terminal verdict is on the rollout already: keep it, change nothing. */
  | { readonly _tag: "Kept" }

export type Action =
  | { readonly _tag: "Write"; readonly index: number; readonly application: ReturnType<typeof releaseApplication> }
  | { readonly _tag: "Remove"; readonly index: number; readonly name: string; readonly uid: string | undefined }

export interface RolloutDecision {
  readonly rollout: RuntimeRollout
  readonly steps: ReadonlyArray<StepView>
  readonly current: number | undefined
  readonly progress: Progress
  readonly action: Action | undefined
  /** Epoch ms of the in-flight step's deadline, for the requeue. */
  readonly deadline: number | undefined
}

/** An operator Application on which suspendEngine does not hold, and why. */
export interface Refusal {
  readonly name: string
  readonly why: string
}

export interface Decision {
  readonly suspend: ReadonlyArray<{ readonly name: string; readonly suspend: boolean }>
  /** While suspendEngine is set: the Applications with a sync operation in flight (Argo CD finishes it). */
  readonly busy: ReadonlyArray<Refusal>
  readonly ours: number
  readonly suspendedCount: number
  readonly rollout: RolloutDecision | undefined
}

export const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z")
const short = (digest: string) => digest.replace(/^sha256:/u, "").slice(0, 12)
/** The chart a release is pinned to, for messages: `<version>@sha256:<12 hex>`. */
export const chartText = (r: PlanRelease) => `${helmSourceOf(r.chart.ref).version}@sha256:${short(r.chart.digest)}`
/** What status.steps shows as the written revision: the chart version, its digest and the values digest. */
export const revisionText = (r: PlanRelease) => `${helmSourceOf(r.chart.ref).version}@sha256:${short(r.chart.digest)} values:${short(r.values.digest)}`
export const stepLabel = (i: number, total: number, s: RolloutStep) => `${i}/${total} ${s.release} (${s.action})`

const isOurs = (o: Observed, app: Application) => app.metadata.labels?.[LABEL_RUNTIME_UID] === o.runtime.metadata.uid && o.runtime.metadata.uid !== undefined
/** An Application an Adopt step may take over: ours, or of the runtime spec.adoption names. */
const isAdoptable = (o: Observed, app: Application) => isOurs(o, app) || (o.runtime.spec.adoption !== undefined && app.metadata.labels?.[LABEL_RUNTIME_UID] === o.runtime.spec.adoption.fromRuntimeUID)
/** Adopted: relabelled for this runtime and the adopting plan (the step's one write). */
const adoptedFor = (o: Observed, app: Application, digest: string) => isOurs(o, app) && app.metadata.annotations?.[ANNOTATION_PLAN_DIGEST] === digest
/**
 * AICR's defaults for a readiness gate (pkg/defaults): the gate Job's max-wait when the plan does not say, and the
 * buffer deploy.sh adds to it for the gate release's `helm --timeout` (90 m + 5 m = 1h35m).
 */
export const GATE_MAX_WAIT_DEFAULT_MS = 90 * 60_000
export const GATE_BUFFER_MS = 5 * 60_000
/**
 * A step's deadline after its write: `--release-step-timeout` for the release; for a readiness-gate release the
 * gate's max-wait plus AICR's buffer (as deploy.sh waits for it); else `--step-timeout`.
 */
export const timeoutOf = (o: Pick<Observed, "settings">, release: string, planned?: PlanRelease): number => {
  const own = o.settings.releaseTimeoutsMs[release]
  if (own !== undefined) return own
  const gate = planned?.readinessGate
  if (gate !== undefined) return (gate.timeoutSeconds !== undefined ? gate.timeoutSeconds * 1000 : GATE_MAX_WAIT_DEFAULT_MS) + GATE_BUFFER_MS
  return o.settings.stepTimeoutMs
}
const fmt = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`)

const waiting = (revision: string, gate: boolean, why: ReadonlyArray<string>) =>
  `Waiting for ${revision}${gate ? " (the readiness gate's Job completes only once the gate passed)" : ""}: ${why.join("; ")}`

type Raw = Omit<StepView, "index" | "step"> & { readonly written: boolean; readonly foreign?: string; readonly deadline?: number }

/** One step as the live Application shows it. */
const viewStep = (o: Observed, rollout: RuntimeRollout, step: RolloutStep, release: PlanRelease | undefined, app: Application | undefined): Raw => {
  if (app !== undefined && !(step.action === "Adopt" ? isAdoptable(o, app) : isOurs(o, app))) {
    const owner = app.metadata.labels?.[LABEL_RUNTIME_UID]
    return { state: "Pending", written: false, foreign: `Application ${o.settings.engineNamespace}/${app.metadata.name} ${owner ? `belongs to runtime ${owner}` : "was not created by this operator"}; it is never adopted or changed` }
  }
  if (step.action === "Remove") {
    // Gone counts as done, not as written: an Application missing before the rollout reached it proves nothing.
    if (app === undefined) return { state: "Ready", written: false, message: "Application and its resources are gone" }
    if (app.metadata.deletionTimestamp === undefined) return { state: "Pending", written: false }
    const started = Date.parse(app.metadata.deletionTimestamp)
    return { state: "WaitingForReady", written: true, startedAt: iso(started), deadline: started + timeoutOf(o, step.release), message: "Argo CD is pruning the release's resources" }
  }
  if (release === undefined || app === undefined || !writtenFor(app, release.chart.digest, release.values.digest) || app.spec?.destination.namespace !== release.namespace) {
    return { state: "Pending", written: false }
  }
  if (step.action === "Adopt" && !adoptedFor(o, app, rollout.spec.toDigest)) return { state: "Pending", written: false }
  // The revision written is the chart's manifest digest (chartSourceOf); Argo CD reports it back as sync.revision.
  const revision = release.chart.digest
  const shown = chartText(release)
  const writtenRevision = revisionText(release)
  const writtenAt = Date.parse(app.metadata.annotations?.[ANNOTATION_WRITTEN_AT] ?? "")
  const started = Number.isNaN(writtenAt) ? {} : { startedAt: iso(writtenAt) }
  const isGate = release.readinessGate !== undefined
  const gated = (g: "Pending" | "Passed" | "Failed") => (isGate ? { gate: g } : {})
  const why = notReadyAt(app, revision)
  if (why.length === 0) {
    const acked = (rollout.spec.acknowledgements ?? []).some((a) => a.step === step.release)
    if (step.acknowledge === true && !acked) return { state: "AwaitingAcknowledgement", written: true, writtenRevision, readyAtRevision: writtenRevision, ...started, ...gated("Passed"), message: `Ready at ${shown}; waiting for kubectl aicr acknowledge ${rollout.metadata.name} after the manual post-apply steps` }
    return { state: "Ready", written: true, writtenRevision, readyAtRevision: writtenRevision, ...started, ...gated("Passed") }
  }
  const failure = syncFailureAt(app, revision)
  if (failure !== undefined) return { state: "Failed", written: true, writtenRevision, ...started, ...gated("Failed"), message: `Argo CD sync of ${shown} failed: ${failure}` }
  const gateFailure = isGate ? gateFailureAt(app, revision) : undefined
  if (gateFailure !== undefined) return { state: "Failed", written: true, writtenRevision, ...started, gate: "Failed", message: `AICR readiness gate ${release.name} failed at ${shown}: ${gateFailure}` }
  const timeout = timeoutOf(o, step.release, release)
  const deadline = Number.isNaN(writtenAt) ? undefined : writtenAt + timeout
  if (deadline !== undefined && o.now >= deadline) {
    return { state: "Failed", written: true, writtenRevision, ...started, ...gated("Failed"), message: `Not ready at ${shown} within ${fmt(timeout)}: ${why.join("; ")}` }
  }
  return { state: "WaitingForReady", written: true, writtenRevision, ...started, ...gated("Pending"), ...(deadline !== undefined ? { deadline } : {}), message: waiting(shown, isGate, why) }
}

/** Why no new step may start now, or undefined when one may. */
const gate = (o: Observed, rollout: RuntimeRollout): { reason: Blocked; message: string } | undefined => {
  if (o.engine._tag !== "Ready") return { reason: o.engine._tag, message: o.engine.message }
  if (o.runtime.spec.suspendEngine) return { reason: "EngineSuspended", message: "spec.suspendEngine is set: no step starts and Argo CD syncs nothing until it is cleared" }
  if (o.runtime.spec.paused) return { reason: "Paused", message: "spec.paused is set: no new step starts; Argo CD keeps syncing what is written" }
  const approved = current(rollout, Approved)
  if (approved.status !== "True") {
    if (approved.reason === "RolloutRevoked" || approved.reason === "RolloutExpired" || approved.reason === "AwaitingAcknowledgement") return { reason: approved.reason, message: approved.message }
    return { reason: "AwaitingApproval", message: `Approved is ${approved.status} (${approved.reason}): ${approved.message}` }
  }
  // A Remove rollout leaves nothing to validate, so it never waits for the validation gate.
  if (deploymentValidationOf(o.runtime.spec) === "Required" && rollout.spec.kind !== "Remove") {
    const ready = current(rollout, ValidationReady)
    if (ready.status !== "True") return { reason: "AwaitingValidationReady", message: `Deployment validation is Required and ValidationReady is ${ready.status} (${ready.reason}): ${ready.message}` }
  }
  return undefined
}

const KNOWN_ACTIONS = new Set(["Install", "Upgrade", "Move", "Remove", "Adopt"])

/** Why an Application to adopt no longer is what the plan was rebuilt from (undefined when it still is). */
const adoptDrift = (app: Application | undefined, release: PlanRelease): string | undefined => {
  if (app === undefined) return "it is gone"
  const unchanged = unchangedSinceWritten(app)
  if (!unchanged.ok) return unchanged.why
  const r = unchanged.record.release
  if (r.chart.digest !== release.chart.digest || r.values.digest !== release.values.digest || app.spec?.destination.namespace !== release.namespace) {
    return "it no longer carries the chart, values and namespace the plan was rebuilt from"
  }
  return undefined
}

const decideRollout = (o: Observed, rollout: RuntimeRollout): RolloutDecision => {
  const steps = rollout.spec.steps ?? []
  const total = steps.length
  const base = { rollout, action: undefined, deadline: undefined } as const
  const own = current(rollout, Progressing)
  if (own.status === "False" && own.reason === "RolloutFailed") return { ...base, steps: [], current: undefined, progress: { _tag: "Kept" } }
  const pending = (i: number): StepView[] => steps.map((step, j) => ({ index: j + 1, step, state: "Pending" as const })).slice(i)
  if (o.plan === undefined || !o.plan.ok) {
    return { ...base, steps: pending(0), current: undefined, progress: { _tag: "Blocked", reason: "PlanUnreadable", message: `Target plan of rollout ${rollout.metadata.name}: ${o.plan?.ok === false ? o.plan.why : "not read"}` } }
  }
  const { plan, values } = o.plan
  const releases = new Map(plan.releases.map((r) => [r.name, r]))
  const apps = new Map(o.applications.map((a) => [a.metadata.name, a]))
  const raws: Raw[] = steps.map((s) => viewStep(o, rollout, s, releases.get(s.release), apps.get(s.release)))
  const lastWritten = raws.reduce((k, r, i) => (r.written ? i : k), -1)
  const views: StepView[] = raws.map(({ written: _w, foreign: _f, deadline: _d, ...r }, i) => {
    const v = { index: i + 1, step: steps[i]!, ...r }
    return i < lastWritten && raws[i]!.written ? { ...v, state: "Ready" as const, message: r.state === "Ready" ? r.message : "Done: the rollout advanced past it at its revision" } : v
  })
  const j = views.findIndex((v) => v.state !== "Ready")
  if (j < 0) return { ...base, steps: views, current: undefined, progress: { _tag: "Completed", message: `All ${total} steps are ready at the revisions written` } }
  const step = steps[j]!
  const label = stepLabel(j + 1, total, step)
  const raw = raws[j]!
  const blocked = (reason: Blocked, message: string): RolloutDecision => ({ ...base, steps: views, current: j, progress: { _tag: "Blocked", reason, message } })
  if (raw.foreign !== undefined) return blocked("ForeignObject", `step ${label}: ${raw.foreign}`)
  if (j < lastWritten) return blocked("InventoryDrift", `step ${label}: its Application no longer carries the revision written, yet a later step was written; the Application was changed by hand`)
  if (!KNOWN_ACTIONS.has(step.action)) return blocked("StepUnknown", `step ${label}: this step-executor does not know the action ${step.action}`)
  const v = views[j]!
  switch (v.state) {
    case "Failed":
      return blocked("RolloutFailed", `step ${label} failed: ${v.message ?? ""}`)
    case "AwaitingAcknowledgement":
      return blocked("AwaitingAcknowledgement", `step ${label}: ${v.message ?? ""}`)
    case "WaitingForReady":
      if (o.runtime.spec.suspendEngine) return blocked("EngineSuspended", `step ${label} is written but cannot become ready: spec.suspendEngine is set`)
      return { ...base, steps: views, current: j, progress: { _tag: "InProgress", message: `step ${label}: ${v.message ?? ""}` }, deadline: raw.deadline }
    default:
      break
  }
  const why = gate(o, rollout)
  if (why !== undefined) return blocked(why.reason, `step ${label} not started: ${why.message}`)
  if (step.action === "Remove") {
    const app = apps.get(step.release)!
    const started = { ...v, state: "WaitingForReady" as const, startedAt: iso(o.now), message: "Deleting the Application; Argo CD prunes the release's resources first" }
    return { ...base, steps: views.map((x, i) => (i === j ? started : x)), current: j, progress: { _tag: "InProgress", message: `step ${label}: deleting Application ${step.release} with its resources` }, action: { _tag: "Remove", index: j, name: step.release, uid: app.metadata.uid }, deadline: o.now + timeoutOf(o, step.release) }
  }
  const release = releases.get(step.release)
  if (release === undefined) return blocked("PlanUnreadable", `step ${label}: the target plan has no release ${step.release}`)
  if (step.action === "Move") {
    const old = apps.get(step.release)
    if (old === undefined || old.metadata.deletionTimestamp !== undefined) {
      return blocked("MovedReleaseMissing", `step ${label}: Application ${o.settings.engineNamespace}/${step.release} is not at its old location (${old === undefined ? "it does not exist" : "it is being deleted"}); the move rewrites the Application in place, so it needs the one written by the active plan: restore it or start a new rollout that installs ${step.release}`)
    }
  }
  const live = apps.get(step.release)
  if (plan.source === "Adoption" && step.action !== "Adopt") return blocked("PlanUnreadable", `step ${label}: plan ${plan.desiredStateDigest} was rebuilt from live Applications and holds no values; only an Adopt step can use it`)
  if (step.action === "Adopt") {
    const drift = adoptDrift(live, release)
    if (drift !== undefined) return blocked("InventoryDrift", `step ${label}: Application ${o.settings.engineNamespace}/${step.release} cannot be adopted: ${drift}; the planner rebuilds the plan once the rollout ends`)
  }
  // Adopting rewrites the Application as it is (its live values, verified by the spec digest), only relabelled.
  const adopted = step.action === "Adopt" && live?.spec !== undefined ? live.spec : undefined
  const application = releaseApplication({
    name: release.name,
    namespace: o.settings.engineNamespace,
    project: o.settings.project,
    release: release.name,
    destinationNamespace: release.namespace,
    chartRef: release.chart.ref,
    chartDigest: release.chart.digest,
    valuesDigest: release.values.digest,
    values: adopted !== undefined ? ((adopted.source.helm?.valuesObject ?? {}) as Record<string, unknown>) : (values.get(release.name) ?? {}),
    labels: { [LABEL_RUNTIME_UID]: o.runtime.metadata.uid!, [LABEL_RELEASE]: release.name, [LABEL_PLAN]: planKey(plan.desiredStateDigest) },
    planDigest: plan.desiredStateDigest,
    writtenAt: iso(o.now),
    syncRetries: adopted?.syncPolicy?.retry?.limit ?? o.settings.syncRetries,
    ...(release.ignoreDifferences !== undefined ? { ignoreDifferences: release.ignoreDifferences } : {}),
    record: { release, plan: plan.releases.map((r) => r.name) },
  })
  // Report what the next pass will see (the Application as written, before Argo CD's first word), so it writes nothing.
  const message = waiting(chartText(release), release.readinessGate !== undefined, notReadyAt(application, application.spec.source.targetRevision))
  const written = { ...v, state: "WaitingForReady" as const, writtenRevision: revisionText(release), startedAt: iso(o.now), ...(release.readinessGate !== undefined ? { gate: "Pending" as const } : {}), message }
  return {
    ...base,
    steps: views.map((x, i) => (i === j ? written : x)),
    current: j,
    progress: { _tag: "InProgress", message: `step ${label}: ${message}` },
    action: { _tag: "Write", index: j, application },
    deadline: o.now + timeoutOf(o, step.release, release),
  }
}

export const decide = (o: Observed): Decision => {
  const ours = o.applications.filter((a) => isOurs(o, a))
  const live = ours.filter((a) => a.metadata.deletionTimestamp === undefined)
  // Suspension is written even while Argo CD does not respond: it must hold when Argo CD comes back.
  const reachable = o.engine._tag === "Ready" || o.engine._tag === "EngineNotResponding"
  const suspend = !reachable
    ? []
    : o.runtime.spec.suspendEngine
      ? live.filter(automatedSyncEnabled).map((a) => ({ name: a.metadata.name, suspend: true }))
      : live.filter(suspended).map((a) => ({ name: a.metadata.name, suspend: false }))
  const busy = reachable && o.runtime.spec.suspendEngine
    ? live.flatMap((a) => {
      const why = suspensionBlockedBy(a)
      return why === undefined ? [] : [{ name: a.metadata.name, why }]
    })
    : []
  const suspendedCount = o.runtime.spec.suspendEngine ? live.length - busy.length : 0
  const rollout = o.rollout === undefined ? undefined : decideRollout(o, o.rollout)
  // Counted as after this pass's action, so the next pass reports the same.
  const action = rollout?.action
  const created = action?._tag === "Write" && !o.applications.some((a) => a.metadata.name === action.application.metadata.name) ? 1 : 0
  return { suspend, busy, ours: ours.length + created, suspendedCount, rollout }
}

const MAX_REFUSAL = 1000

export interface Reported {
  readonly decision: Decision
  /** What `EngineSuspensionRefused` says; undefined when suspendEngine holds on every operator Application. */
  readonly refusal: string | undefined
}

/**
 * The decision as reported once this pass's suspension patches ran: the Applications with a sync operation in flight
 * (`d.busy`) and those whose patch the API server refused (`refused`) are not suspended, and a rollout held by the
 * suspension says that the suspension does not hold (`EngineSuspensionRefused`) instead of `EngineSuspended`.
 */
export const reported = (o: Observed, d: Decision, refused: ReadonlyArray<Refusal>): Reported => {
  const all = o.runtime.spec.suspendEngine ? [...refused, ...d.busy.filter((b) => !refused.some((r) => r.name === b.name))] : []
  if (all.length === 0) return { decision: d, refusal: undefined }
  const text = `spec.suspendEngine is set but ${all.length} of ${d.ours} Applications are not suspended: ${all.map((r) => `${o.settings.engineNamespace}/${r.name}: ${r.why}`).join("; ")}`
  const refusal = text.length > MAX_REFUSAL ? `${text.slice(0, MAX_REFUSAL - 1)}…` : text
  const suspendedCount = Math.max(0, d.suspendedCount - (all.length - d.busy.length))
  const r = d.rollout
  const rollout = r !== undefined && r.progress._tag === "Blocked" && r.progress.reason === "EngineSuspended"
    ? { ...r, progress: { _tag: "Blocked" as const, reason: "EngineSuspensionRefused" as const, message: `${r.progress.message}; ${refusal}` } }
    : r
  return { decision: { ...d, suspendedCount, rollout }, refusal }
}
