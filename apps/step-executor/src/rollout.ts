/**
 * rollout: pure. The rollout's one next action and what to report: each step's view (`steps.ts`); a step before the
 * last written one is done (the executor advanced past it, which it does only at readiness); the first step not done
 * is the current one. Written: wait. Not written: write it (for Remove, delete its Application) only when no gate
 * holds it back (`gates.ts`). Our own terminal verdict (`RolloutFailed`) is kept as it is. A revoked or expired
 * rollout's steps record it: the step in flight then finished, the later ones never started (`recordStop`).
 */
import { Approved, LABEL_PLAN, LABEL_RELEASE, LABEL_RUNTIME_UID, planKey, Progressing, type RuntimeRollout } from "@aicr/api"
import { notReadyAt, releaseApplication } from "@aicr/argocd"
import type { Seen } from "@aicr/kube"
import { current } from "@aicr/conditions"
import { type Blocked, startBlockedBy } from "./gates"
import type { Observed } from "./gather"
import { adoptDrift, chartText, iso, type Raw, revisionText, stepLabel, type StepView, timeoutOf, viewStep, waiting } from "./steps"

export type Progress =
  | { readonly _tag: "Completed"; readonly message: string }
  | { readonly _tag: "InProgress"; readonly message: string }
  | { readonly _tag: "Blocked"; readonly reason: Blocked; readonly message: string }
  /** Our own terminal verdict is on the rollout already: keep it, change nothing. */
  | { readonly _tag: "Kept" }

export type Action =
  /** `seen`: the Application as this decision saw it (absent, or at a resourceVersion): the write is guarded by it. */
  | { readonly _tag: "Write"; readonly index: number; readonly application: ReturnType<typeof releaseApplication>; readonly seen: Seen }
  | { readonly _tag: "Remove"; readonly index: number; readonly name: string; readonly uid: string | undefined; readonly resourceVersion: string | undefined }

export interface RolloutDecision {
  readonly rollout: RuntimeRollout
  readonly steps: ReadonlyArray<StepView>
  readonly current: number | undefined
  readonly progress: Progress
  readonly action: Action | undefined
  /** Epoch ms of the in-flight step's deadline, for the requeue. */
  readonly deadline: number | undefined
}

const KNOWN_ACTIONS = new Set(["Install", "Upgrade", "Move", "Remove", "Adopt"])

/** Why a release namespace is missing and the command that creates it with its Pod Security level (chart `namespaces.components`). */
export const namespaceMissing = (o: Observed, namespace: string): string => {
  const level = o.settings.componentPodSecurity[namespace]
  const command = `kubectl create namespace ${namespace} && kubectl label namespace ${namespace} ${["enforce", "audit", "warn"].map((m) => `pod-security.kubernetes.io/${m}=${level ?? "<level>"}`).join(" ")}`
  const where =
    level === undefined
      ? ` (<level>: privileged, baseline or restricted, as the chart's namespaces.components should say for ${namespace})`
      : ` (its level in the chart's namespaces.components), or set create: true for it there and upgrade the chart`
  return `namespace ${namespace} does not exist (or is being deleted) and Argo CD does not create namespaces, so no Application is written into it; create it with its Pod Security labels: ${command}${where}`
}

/** When and how a revoked or expired rollout stopped: the revocation's time and author, or when `Approved` turned RolloutExpired. */
interface Stop {
  readonly at: string
  readonly what: string
}
const stoppedBy = (rollout: RuntimeRollout, reason: "RolloutRevoked" | "RolloutExpired"): Stop | undefined => {
  const revocation = rollout.spec.revocation
  if (reason === "RolloutRevoked" && revocation !== undefined)
    return { at: revocation.revokedAt, what: `the rollout was revoked by ${revocation.revokedBy} at ${revocation.revokedAt}` }
  const since = current(rollout, Approved).lastTransitionTime
  return since === undefined ? undefined : { at: since, what: `the rollout expired at ${since}` }
}

/**
 * The steps of a rollout that stopped on a revocation or an expiry, as status.steps records them: every step not
 * written says it never started and why; the last step written, when this executor first saw it ready at or after
 * the stop (or sees it so now), says it was in flight then and finished. Only spec and recorded times: the same
 * text on every pass.
 */
const recordStop = (rollout: RuntimeRollout, views: ReadonlyArray<StepView>, lastWritten: number, stop: Stop): StepView[] => {
  const recorded = rollout.status?.steps?.items?.find((x) => x.index === lastWritten + 1)
  const finishedBefore = recorded?.state === "Ready" && recorded.completedAt !== undefined && Date.parse(recorded.completedAt) < Date.parse(stop.at)
  return views.map((v, i) => {
    if (i > lastWritten && v.state === "Pending") return { ...v, message: `Not started: ${stop.what}` }
    if (i === lastWritten && v.state === "Ready" && !finishedBefore)
      return { ...v, message: `In flight when ${stop.what}; it finished${v.readyAtRevision !== undefined ? `: ready at ${v.readyAtRevision}` : ""}` }
    return v
  })
}

export const decideRollout = (o: Observed, rollout: RuntimeRollout): RolloutDecision => {
  const steps = rollout.spec.steps ?? []
  const total = steps.length
  const base = { rollout, action: undefined, deadline: undefined } as const
  const own = current(rollout, Progressing)
  if (own.status === "False" && own.reason === "RolloutFailed") return { ...base, steps: [], current: undefined, progress: { _tag: "Kept" } }
  const pending = (i: number): StepView[] => steps.map((step, j) => ({ index: j + 1, step, state: "Pending" as const })).slice(i)
  if (o.plan === undefined || !o.plan.ok) {
    return {
      ...base,
      steps: pending(0),
      current: undefined,
      progress: {
        _tag: "Blocked",
        reason: "PlanUnreadable",
        message: `Target plan of rollout ${rollout.metadata.name}: ${o.plan?.ok === false ? o.plan.why : "not read"}`,
      },
    }
  }
  const { plan, values } = o.plan
  const releases = new Map(plan.releases.map((r) => [r.name, r]))
  const apps = new Map(o.applications.map((a) => [a.metadata.name, a]))
  const raws: Raw[] = steps.map((s) => viewStep(o, rollout, s, releases.get(s.release), apps.get(s.release)))
  const lastWritten = raws.reduce((k, r, i) => (r.written ? i : k), -1)
  const views: StepView[] = raws.map(({ written: _w, foreign: _f, deadline: _d, ...r }, i) => {
    const v = { index: i + 1, step: steps[i]!, ...r }
    return i < lastWritten && raws[i]!.written
      ? { ...v, state: "Ready" as const, message: r.state === "Ready" ? r.message : "Done: the rollout advanced past it at its revision" }
      : v
  })
  const j = views.findIndex((v) => v.state !== "Ready")
  if (j < 0)
    return { ...base, steps: views, current: undefined, progress: { _tag: "Completed", message: `All ${total} steps are ready at the revisions written` } }
  const step = steps[j]!
  const label = stepLabel(j + 1, total, step)
  const raw = raws[j]!
  const blocked = (reason: Blocked, message: string): RolloutDecision => ({ ...base, steps: views, current: j, progress: { _tag: "Blocked", reason, message } })
  if (raw.foreign !== undefined) return blocked("ForeignObject", `step ${label}: ${raw.foreign}`)
  if (j < lastWritten)
    return blocked(
      "InventoryDrift",
      `step ${label}: its Application no longer carries the revision written, yet a later step was written; the Application was changed by hand`,
    )
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
  const why = startBlockedBy(o, rollout)
  if (why !== undefined) {
    const stop = why.reason === "RolloutRevoked" || why.reason === "RolloutExpired" ? stoppedBy(rollout, why.reason) : undefined
    const shown = stop === undefined ? views : recordStop(rollout, views, lastWritten, stop)
    return { ...base, steps: shown, current: j, progress: { _tag: "Blocked", reason: why.reason, message: `step ${label} not started: ${why.message}` } }
  }
  if (step.action === "Remove") {
    const app = apps.get(step.release)!
    const started = {
      ...v,
      state: "WaitingForReady" as const,
      startedAt: iso(o.now),
      message: "Deleting the Application; Argo CD prunes the release's resources first",
    }
    return {
      ...base,
      steps: views.map((x, i) => (i === j ? started : x)),
      current: j,
      progress: { _tag: "InProgress", message: `step ${label}: deleting Application ${step.release} with its resources` },
      action: { _tag: "Remove", index: j, name: step.release, uid: app.metadata.uid, resourceVersion: app.metadata.resourceVersion },
      deadline: o.now + timeoutOf(o, step.release),
    }
  }
  const release = releases.get(step.release)
  if (release === undefined) return blocked("PlanUnreadable", `step ${label}: the target plan has no release ${step.release}`)
  if (step.action === "Move") {
    const old = apps.get(step.release)
    if (old === undefined || old.metadata.deletionTimestamp !== undefined) {
      return blocked(
        "MovedReleaseMissing",
        `step ${label}: Application ${o.settings.engineNamespace}/${step.release} is not at its old location (${old === undefined ? "it does not exist" : "it is being deleted"}); the move rewrites the Application in place, so it needs the one written by the active plan: restore it or start a new rollout that installs ${step.release}`,
      )
    }
  }
  // Argo CD does not create release namespaces (no CreateNamespace=true): the chart's install does, with their Pod
  // Security labels, so a missing one is for a person to create, and no Application is written into it before.
  if (!o.namespaces.has(release.namespace)) return blocked("NamespaceMissing", `step ${label} not started: ${namespaceMissing(o, release.namespace)}`)
  const live = apps.get(step.release)
  if (plan.source === "Adoption" && step.action !== "Adopt")
    return blocked(
      "PlanUnreadable",
      `step ${label}: plan ${plan.desiredStateDigest} was rebuilt from live Applications and holds no values; only an Adopt step can use it`,
    )
  if (step.action === "Adopt") {
    const drift = adoptDrift(live, release)
    if (drift !== undefined)
      return blocked(
        "InventoryDrift",
        `step ${label}: Application ${o.settings.engineNamespace}/${step.release} cannot be adopted: ${drift}; the planner rebuilds the plan once the rollout ends`,
      )
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
  const written = {
    ...v,
    state: "WaitingForReady" as const,
    writtenRevision: revisionText(release),
    startedAt: iso(o.now),
    ...(release.readinessGate !== undefined ? { gate: "Pending" as const } : {}),
    message,
  }
  return {
    ...base,
    steps: views.map((x, i) => (i === j ? written : x)),
    current: j,
    progress: { _tag: "InProgress", message: `step ${label}: ${message}` },
    action: {
      _tag: "Write",
      index: j,
      application,
      seen: live?.metadata.resourceVersion !== undefined ? { resourceVersion: live.metadata.resourceVersion } : undefined,
    },
    deadline: o.now + timeoutOf(o, step.release, release),
  }
}
