/**
 * steps: pure. One step as its live Application and the Application's markers show it (chart and values digest
 * annotations): written and ready at its revision (the research-note predicate, `@aicr/argocd`), written and
 * waiting, written and failed (Argo CD's sync failure, a readiness gate's failed Job, or the step's deadline passed),
 * or not written; a Remove step is done once its Application is gone (the resources finalizer pruned first). An
 * Application with a wanted name that lacks our runtime-uid label is never touched (`ForeignObject`). Also the step's
 * deadline and the texts status.steps shows.
 */
import { LABEL_RUNTIME_UID, type PlanRelease, type RolloutStep, type RuntimeRollout } from "@aicr/api"
import {
  ANNOTATION_PLAN_DIGEST,
  ANNOTATION_WRITTEN_AT,
  type Application,
  gateFailureAt,
  helmSourceOf,
  notReadyAt,
  syncFailureAt,
  unchangedSinceWritten,
  writtenFor,
} from "@aicr/argocd"
import { shortDigest, toConditionTime } from "@aicr/conditions"
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

/** A wire time (whole seconds, "Z"), as conditions carry it. */
export const iso = (ms: number) => toConditionTime(ms)
/** The chart a release is pinned to, for messages: `<version>@sha256:<12 hex>`. */
export const chartText = (r: PlanRelease) => `${helmSourceOf(r.chart.ref).version}@sha256:${shortDigest(r.chart.digest)}`
/** What status.steps shows as the written revision: the chart version, its digest and the values digest. */
export const revisionText = (r: PlanRelease) =>
  `${helmSourceOf(r.chart.ref).version}@sha256:${shortDigest(r.chart.digest)} values:${shortDigest(r.values.digest)}`
export const stepLabel = (i: number, total: number, s: RolloutStep) => `${i}/${total} ${s.release} (${s.action})`

export const isOurs = (o: Observed, app: Application) =>
  app.metadata.labels?.[LABEL_RUNTIME_UID] === o.runtime.metadata.uid && o.runtime.metadata.uid !== undefined
/** An Application an Adopt step may take over: ours, or of the runtime spec.adoption names. */
const isAdoptable = (o: Observed, app: Application) =>
  isOurs(o, app) || (o.runtime.spec.adoption !== undefined && app.metadata.labels?.[LABEL_RUNTIME_UID] === o.runtime.spec.adoption.fromRuntimeUID)
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
export const fmt = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`)

export const waiting = (revision: string, gate: boolean, why: ReadonlyArray<string>) =>
  `Waiting for ${revision}${gate ? " (the readiness gate's Job completes only once the gate passed)" : ""}: ${why.join("; ")}`

export type Raw = Omit<StepView, "index" | "step"> & { readonly written: boolean; readonly foreign?: string; readonly deadline?: number }

/** One step as the live Application shows it. */
export const viewStep = (o: Observed, rollout: RuntimeRollout, step: RolloutStep, release: PlanRelease | undefined, app: Application | undefined): Raw => {
  if (app !== undefined && !(step.action === "Adopt" ? isAdoptable(o, app) : isOurs(o, app))) {
    const owner = app.metadata.labels?.[LABEL_RUNTIME_UID]
    return {
      state: "Pending",
      written: false,
      foreign: `Application ${o.settings.engineNamespace}/${app.metadata.name} ${owner ? `belongs to runtime ${owner}` : "was not created by this operator"}; it is never adopted or changed`,
    }
  }
  if (step.action === "Remove") {
    // Gone counts as done, not as written: an Application missing before the rollout reached it proves nothing.
    if (app === undefined) return { state: "Ready", written: false, message: "Application and its resources are gone" }
    if (app.metadata.deletionTimestamp === undefined) return { state: "Pending", written: false }
    const started = Date.parse(app.metadata.deletionTimestamp)
    return {
      state: "WaitingForReady",
      written: true,
      startedAt: iso(started),
      deadline: started + timeoutOf(o, step.release),
      message: "Argo CD is pruning the release's resources",
    }
  }
  if (
    release === undefined ||
    app === undefined ||
    !writtenFor(app, release.chart.digest, release.values.digest) ||
    app.spec?.destination.namespace !== release.namespace
  ) {
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
    if (step.acknowledge === true && !acked)
      return {
        state: "AwaitingAcknowledgement",
        written: true,
        writtenRevision,
        readyAtRevision: writtenRevision,
        ...started,
        ...gated("Passed"),
        message: `Ready at ${shown}; waiting for kubectl aicr acknowledge ${rollout.metadata.name} after the manual post-apply steps`,
      }
    return { state: "Ready", written: true, writtenRevision, readyAtRevision: writtenRevision, ...started, ...gated("Passed") }
  }
  const failure = syncFailureAt(app, revision)
  if (failure !== undefined)
    return { state: "Failed", written: true, writtenRevision, ...started, ...gated("Failed"), message: `Argo CD sync of ${shown} failed: ${failure}` }
  const gateFailure = isGate ? gateFailureAt(app, revision) : undefined
  if (gateFailure !== undefined)
    return {
      state: "Failed",
      written: true,
      writtenRevision,
      ...started,
      gate: "Failed",
      message: `AICR readiness gate ${release.name} failed at ${shown}: ${gateFailure}`,
    }
  const timeout = timeoutOf(o, step.release, release)
  const deadline = Number.isNaN(writtenAt) ? undefined : writtenAt + timeout
  if (deadline !== undefined && o.now >= deadline) {
    return {
      state: "Failed",
      written: true,
      writtenRevision,
      ...started,
      ...gated("Failed"),
      message: `Not ready at ${shown} within ${fmt(timeout)}: ${why.join("; ")}`,
    }
  }
  return {
    state: "WaitingForReady",
    written: true,
    writtenRevision,
    ...started,
    ...gated("Pending"),
    ...(deadline !== undefined ? { deadline } : {}),
    message: waiting(shown, isGate, why),
  }
}

/** Why an Application to adopt no longer is what the plan was rebuilt from (undefined when it still is). */
export const adoptDrift = (app: Application | undefined, release: PlanRelease): string | undefined => {
  if (app === undefined) return "it is gone"
  const unchanged = unchangedSinceWritten(app)
  if (!unchanged.ok) return unchanged.why
  const r = unchanged.record.release
  if (r.chart.digest !== release.chart.digest || r.values.digest !== release.values.digest || app.spec?.destination.namespace !== release.namespace) {
    return "it no longer carries the chart, values and namespace the plan was rebuilt from"
  }
  return undefined
}
