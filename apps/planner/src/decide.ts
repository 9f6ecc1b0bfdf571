/**
 * decide: pure. From what gather observed, what this pass does: which rollouts close and how, which plan is the
 * target, whether its stabilization window has passed, the assessment, and the rollout to create — plus the
 * conditions and `status.plans` that say so. No I/O, no clock (the time comes in `Observed.now`). The cleanup
 * finalizer and the runtime's deletion are `teardown.ts`; re-adoption is `adopt.ts`.
 *
 * Two facts are only worth reading once a pass gets that far: whether a pinned plan's charts are still in the
 * registry, and the upgrade-check run of this transition. Then the decision names them in `needs`; reconcile reads
 * them (one HEAD per chart; one step of the Job), adds them to `Observed` and decides again.
 */
import {
  ANNOTATION_EDITED_BY,
  ANNOTATION_RETRY,
  deploymentValidationOf,
  LABEL_OUTCOME,
  LABEL_PLAN,
  LABEL_RUNTIME_UID,
  type Outcome,
  type Plan,
  planKey,
  recipeContentOf,
  rolloutName,
  type RuntimeRollout,
  type RuntimeRolloutSpec,
} from "@aicr/api"
import { type AicrJobReason, capabilitiesOf, parseUpgradeCheck } from "@aicr/aicr"
import { listOf, shortDigest, toMillisTime } from "@aicr/conditions"
import { Result } from "effect"
import { adoptionOf, withResolution } from "./adopt"
import { type Assessment, assessmentOfReport, assessWithoutUpgradeCheck, blockedBy, withUnratedChanges } from "./assess"
import type { ChartCheck } from "./charts"
import { composePlan, readContent } from "./compose"
import type { Observed } from "./gather"
import { attemptsFor, isApproved, outcomeOf, reachedOutcome, viewRollouts } from "./rollouts"
import { adoptSteps, planSteps, rolloutKind } from "./steps"
import { decideDeletion, finalizerWhileLive, isDeleting } from "./teardown"
import { type UpgradeCheckRequest, upgradeCheckRequest } from "./upgrade-check"

export interface Close {
  readonly rollout: RuntimeRollout
  readonly outcome: Outcome
}

export interface NewRollout {
  readonly rollout: RuntimeRollout
  readonly assessment: Assessment
}

/** Why Planned is not True, in the catalog's words. */
export type PlanState =
  | { readonly _tag: "AwaitingResolution"; readonly message: string }
  | { readonly _tag: "Stabilizing"; readonly message: string; readonly until: number }
  | {
      readonly _tag: "Blocked"
      readonly reason:
        "TransitionBlocked" | "PlanUnreadable" | "Conflict" | "OrphanedObjectsPresent" | "AdoptionBlocked" | AicrJobReason | "AICRArtifactUnsupported"
      readonly message: string
      /** Looked at again later without a watch event (charts pushed back to the registry send none). */
      readonly recheck?: boolean
    }
  /** Checks before the rollout exists (the pinned plan's charts, upgrade-check); `retry`: after a transient failure. */
  | { readonly _tag: "Assessing"; readonly message: string; readonly retry?: boolean }
  | { readonly _tag: "Planned"; readonly message: string }
  /** The runtime is being deleted (teardown.ts). */
  | { readonly _tag: "Deleting"; readonly message: string }
  /** spec.paused: the target is known, but no assessment or rollout starts until it is cleared. */
  | { readonly _tag: "Paused"; readonly message: string }

/** I/O the pass needs before it can decide: reconcile does it, adds the answer to Observed, and decides again. */
export type Need = { readonly _tag: "PinCharts"; readonly plan: Plan } | { readonly _tag: "UpgradeCheck"; readonly request: UpgradeCheckRequest }

export interface Decision {
  readonly closes: ReadonlyArray<Close>
  /** The target plan to write as its immutable ConfigMap, when it is not there yet. */
  readonly writePlan: Plan | undefined
  readonly create: NewRollout | undefined
  readonly plan: PlanState
  readonly active: string | undefined
  readonly target: string | undefined
  readonly targetSince: number | undefined
  /** The rollout open after this pass (created now, or already there). */
  readonly open: RuntimeRollout | undefined
  /** The newest rollout towards the target, when it ended without success and no retry was asked for. */
  readonly ended: RuntimeRollout | undefined
  /** Add or remove the cleanup finalizer on the runtime (teardown.ts). */
  readonly finalizer: "Add" | "Remove" | undefined
  readonly needs?: Need | undefined
}

const iso = toMillisTime

/** The target plan: the pin, or the composition of the current resolution. */
const targetOf = (o: Observed): { plan: Plan; pinned: boolean } | PlanState => {
  const pin = o.runtime.spec.pin?.desiredStateDigest
  if (pin !== undefined) {
    const found = o.plans.get(pin)
    if (found === undefined)
      return {
        _tag: "Blocked",
        reason: "PlanUnreadable",
        message: `spec.pin names plan ${shortDigest(pin)}, which does not exist (kubectl get configmaps -n ${o.namespace} -l operator.aicr.run/role=plan lists the plans)`,
      }
    if (!found.ok) return { _tag: "Blocked", reason: "PlanUnreadable", message: `the pinned plan ${found.configMap} is unreadable: ${found.why}` }
    if (found.plan.source === "Adoption")
      return {
        _tag: "Blocked",
        reason: "PlanUnreadable",
        message: `spec.pin names plan ${shortDigest(pin)}, which was rebuilt from live Applications at an adoption and holds no values, so it cannot be rolled out again; pin a plan composed from a resolution`,
      }
    return { plan: found.plan, pinned: true }
  }
  return resolutionTarget(o)
}

/** The plan the current resolution composes (an existing plan of that digest stands for it), or why there is none yet. */
const resolutionTarget = (o: Observed): { plan: Plan; pinned: false } | PlanState => {
  if (o.resolved.status !== "True")
    return {
      _tag: "AwaitingResolution",
      message: `Waiting for Resolved=True at generation ${o.generation ?? 0}: Resolved is ${o.resolved.status}/${o.resolved.reason}`,
    }
  if (o.mirrored.status !== "True")
    return {
      _tag: "AwaitingResolution",
      message: `Waiting for Mirrored=True at generation ${o.generation ?? 0}: Mirrored is ${o.mirrored.status}/${o.mirrored.reason}`,
    }
  const inputDigest = o.resolution?.inputDigest
  const name = o.resolution?.contentConfigMap
  if (inputDigest === undefined || name === undefined)
    return { _tag: "AwaitingResolution", message: "Waiting for status.resolution to name an inputDigest and a content ConfigMap" }
  if (o.mirror?.inputDigest !== inputDigest)
    return {
      _tag: "AwaitingResolution",
      message: `Waiting for the mirror of input ${shortDigest(inputDigest)} (status.mirror is of ${o.mirror?.inputDigest ? shortDigest(o.mirror.inputDigest) : "none"})`,
    }
  if (o.content._tag !== "Found") return { _tag: "AwaitingResolution", message: `Waiting for the content ConfigMap ${o.namespace}/${name}` }
  const content = readContent(o.content.data)
  if (!content.ok) return { _tag: "Blocked", reason: "PlanUnreadable", message: `content ConfigMap ${o.namespace}/${name} is malformed: ${content.why}` }
  const composed = composePlan({
    runtimeUID: o.runtime.metadata.uid!,
    resolution: o.resolution!,
    mirror: o.mirror!,
    contentConfigMap: name,
    content: content.value,
    project: o.project,
    now: iso(o.now),
  })
  if (!composed.ok) return { _tag: "AwaitingResolution", message: `Waiting for the mirror to cover input ${shortDigest(inputDigest)}: ${composed.why}` }
  const existing = o.plans.get(composed.value.desiredStateDigest)
  // A plan is never rewritten: an existing one stands for its digest (its createdAt stays the first one).
  return { plan: existing?.ok ? existing.plan : composed.value, pinned: false }
}

/** A pin rolls back only to charts the registry still has (operator.md §4.11); undefined when it may go on. */
const pinChartsGate = (o: Observed, plan: Plan): { plan: PlanState; needs?: Need } | undefined => {
  const c: ChartCheck | undefined = o.pinCharts?.digest === plan.desiredStateDigest ? o.pinCharts.check : undefined
  const short = shortDigest(plan.desiredStateDigest)
  if (c === undefined)
    return {
      plan: { _tag: "Assessing", message: `Checking that the ${plan.releases.length} charts of the pinned plan ${short} are still in the registry` },
      needs: { _tag: "PinCharts", plan },
    }
  switch (c._tag) {
    case "Present":
      return undefined
    case "Unavailable":
      return {
        plan: {
          _tag: "Assessing",
          retry: true,
          message: `Cannot check the pinned plan ${short}'s charts yet, the registry did not answer (retrying): ${c.message}`,
        },
      }
    case "Refused":
      return {
        plan: {
          _tag: "Blocked",
          reason: "PlanUnreadable",
          message: `The registry refused the check of release ${c.release}'s chart of the pinned plan ${short}: ${c.message}; check the planner's --docker-config`,
        },
      }
    case "Missing":
      return {
        plan: {
          _tag: "Blocked",
          reason: "PlanUnreadable",
          recheck: true,
          message: `The pinned plan ${short} cannot be rolled back to: ${listOf(c.missing.map((m) => `release ${m.release} (${m.ref})`))} ${c.missing.length === 1 ? "is" : "are"} no longer in the registry; push ${c.missing.length === 1 ? "that chart" : "those charts"} back by digest or pin another plan (kubectl get configmaps -n ${o.namespace} -l operator.aicr.run/role=plan)`,
        },
      }
  }
}

/** The transition's assessment: AICR's upgrade-check when the target's AICR has it and there is an active plan. */
const assessTransition = (
  o: Observed,
  from: Plan | undefined,
  to: Plan,
  aicrVersion: string,
): { assessment: Assessment } | { plan: PlanState; needs?: Need } => {
  if (from === undefined || capabilitiesOf(aicrVersion)?.upgradeCheck !== true) return { assessment: assessWithoutUpgradeCheck(from, to, aicrVersion) }
  if (from.source === "Adoption" && recipeContentOf(from) === undefined) {
    const why = `AICR ${aicrVersion} has upgrade-check, but the active plan ${shortDigest(from.desiredStateDigest)} was rebuilt from live Applications at an adoption and records no recipe to compare from, so this transition is not rated; an approver must judge it`
    return { assessment: assessWithoutUpgradeCheck(from, to, aicrVersion, why) }
  }
  const request = upgradeCheckRequest(from, to)
  if ("why" in request) return { plan: { _tag: "Blocked", reason: "PlanUnreadable", message: `upgrade-check cannot run: ${request.why}` } }
  const run = o.upgradeCheck?.key === request.key ? o.upgradeCheck : undefined
  const transition = `${shortDigest(from.desiredStateDigest)} → ${shortDigest(to.desiredStateDigest)}`
  if (run === undefined) return { plan: { _tag: "Assessing", message: `Starting aicr upgrade-check ${transition}` }, needs: { _tag: "UpgradeCheck", request } }
  if (run._tag === "InputUnreadable")
    return { plan: { _tag: "Blocked", reason: "PlanUnreadable", message: `upgrade-check ${transition} cannot run: ${run.message}` } }
  const s = run.state
  const job = `aicr upgrade-check Job ${run.job}`
  if (s._tag === "Started" || s._tag === "Running")
    return { plan: { _tag: "Assessing", message: `${job} (${transition}) ${s._tag === "Started" ? "started" : s.detail}` } }
  if (s._tag === "Failed") {
    return s.transient
      ? { plan: { _tag: "Assessing", retry: true, message: `${job} (${transition}) failed transiently, retrying: ${s.message}` } }
      : { plan: { _tag: "Blocked", reason: s.reason, message: `${job} (${transition}) ${s.message}` } }
  }
  const report = parseUpgradeCheck(s.output ?? "")
  if (!report.ok)
    return {
      plan: {
        _tag: "Blocked",
        reason: "AICRArtifactUnsupported",
        message: `${job}: ${s.output === undefined ? "left no report in its output ConfigMap" : report.why}`,
      },
    }
  const rated = assessmentOfReport(report.value, { aicrVersion, fromDigest: from.desiredStateDigest, toDigest: to.desiredStateDigest })
  return { assessment: withUnratedChanges(rated, assessWithoutUpgradeCheck(from, to, aicrVersion)) }
}

/**
 * The plan an adoption rolls out: the rebuilt plan, with the AICR and recipe deployment validation needs taken from
 * the current resolution when it renders exactly what runs (adopt.ts `withResolution`; ADR
 * 20261203-adopted-plan-validation). Not needed when validation is Disabled, when the rebuilt plan is already active
 * (only its ConfigMap is written back, nothing rolls out), or when a plan ConfigMap of that digest that records both
 * exists (a runtime lost without its namespace).
 */
const validatableAdoption = (o: Observed, rebuilt: Plan, active: string | undefined, validationDisabled: boolean): { plan: Plan } | PlanState => {
  const digest = rebuilt.desiredStateDigest
  const existing = o.plans.get(digest)
  const recorded = existing?.ok === true && existing.plan.aicr !== undefined && recipeContentOf(existing.plan) !== undefined
  if (validationDisabled || digest === active || recorded) return { plan: rebuilt }
  const resolved = resolutionTarget(o)
  const stack = `The running stack rebuilds into plan ${shortDigest(digest)}; its Adopt rollout is validated with the AICR and the recipe of the runtime's resolution, once that renders what runs`
  if ("_tag" in resolved) return { ...resolved, message: `${stack}. ${resolved.message}` }
  const v = withResolution(rebuilt, resolved.plan)
  return Result.isSuccess(v) ? { plan: v.success } : { _tag: "Blocked", reason: "AdoptionBlocked", message: v.failure }
}

export const decide = (o: Observed): Decision => {
  const uid = o.runtime.metadata.uid!
  const validationDisabled = deploymentValidationOf(o.runtime.spec) === "Disabled"
  let view = viewRollouts(o.rollouts, uid)
  const closes: Close[] = []
  if (view.open !== undefined) {
    const outcome = reachedOutcome(view.open, validationDisabled)
    if (outcome !== undefined) closes.push({ rollout: view.open, outcome })
  }
  const closed = (r: RuntimeRollout): RuntimeRollout => {
    const c = closes.find((x) => x.rollout.metadata.name === r.metadata.name)
    return c ? { ...r, metadata: { ...r.metadata, labels: { ...r.metadata.labels, [LABEL_OUTCOME]: c.outcome } } } : r
  }
  view = viewRollouts(view.all.map(closed), uid)
  if (isDeleting(o.runtime)) return decideDeletion(o, view, closes)
  const active = view.active
  const base = { closes, active, writePlan: undefined, create: undefined, ended: undefined, finalizer: finalizerWhileLive(o.runtime) }

  // An Adopt rollout runs to its end first: no resolution target supersedes it (ADR 20261202-re-adoption).
  const adopting = view.open?.spec.kind === "Adopt" ? view.open : undefined
  if (adopting !== undefined) {
    const wait = isApproved(adopting) ? "" : `; approve it: kubectl aicr approve ${adopting.metadata.name}`
    return {
      ...base,
      plan: { _tag: "Planned", message: `Rollout ${adopting.metadata.name} adopts the running stack as plan ${shortDigest(adopting.spec.toDigest)}${wait}` },
      target: adopting.spec.toDigest,
      targetSince: undefined,
      open: adopting,
    }
  }
  // Re-adoption comes before any resolution: the stack that runs is taken back first, as it is.
  const adoption =
    view.open !== undefined && isApproved(view.open)
      ? ({ _tag: "None" } as const)
      : adoptionOf({
          runtimeUID: uid,
          adoptFrom: o.runtime.spec.adoption?.fromRuntimeUID,
          applications: o.applications,
          hasPlan: (digest) => o.plans.get(digest)?.ok === true,
          engineNamespace: o.engineNamespace,
          project: o.project,
          now: iso(o.now),
        })
  if (adoption._tag === "Orphaned" || adoption._tag === "Blocked") {
    const reason = adoption._tag === "Orphaned" ? "OrphanedObjectsPresent" : "AdoptionBlocked"
    return { ...base, plan: { _tag: "Blocked", reason, message: adoption.message }, target: o.status?.target, targetSince: undefined, open: view.open }
  }
  const adopt = adoption._tag === "Adopt"
  const adopted = adopt ? validatableAdoption(o, adoption.plan, view.active, validationDisabled) : undefined
  if (adopted !== undefined && "_tag" in adopted) return { ...base, plan: adopted, target: o.status?.target, targetSince: undefined, open: view.open }
  const t = adopted !== undefined ? { plan: adopted.plan, pinned: false } : targetOf(o)
  if ("_tag" in t) return { ...base, plan: t, target: o.status?.target, targetSince: undefined, open: view.open }
  const target = t.plan.desiredStateDigest
  const writePlan = o.plans.has(target) ? undefined : t.plan
  if (o.plans.get(target)?.ok === false) {
    const p = o.plans.get(target)!
    return {
      ...base,
      plan: {
        _tag: "Blocked",
        reason: "Conflict",
        message: `plan ConfigMap ${!p.ok ? p.configMap : ""} holds another document than plan ${shortDigest(target)}`,
      },
      target,
      targetSince: undefined,
      open: view.open,
    }
  }
  const since = o.status?.target === target && o.status.targetSince ? Date.parse(o.status.targetSince) : o.now
  const withTarget = { ...base, writePlan, target, targetSince: since }

  // A newer target supersedes a rollout nobody approved yet; one approved runs to its end first.
  const open = view.open
  if (open !== undefined && open.spec.toDigest !== target) {
    if (isApproved(open))
      return {
        ...withTarget,
        plan: {
          _tag: "Planned",
          message: `Target plan ${shortDigest(target)} waits for rollout ${open.metadata.name} (towards ${shortDigest(open.spec.toDigest)}) to end`,
        },
        open,
      }
    closes.push({ rollout: open, outcome: "Superseded" })
  } else if (open !== undefined) {
    return { ...withTarget, plan: { _tag: "Planned", message: `Rollout ${open.metadata.name} targets plan ${shortDigest(target)}` }, open }
  }
  if (target === active)
    return { ...withTarget, plan: { _tag: "Planned", message: `The active plan ${shortDigest(target)} is the target: nothing to roll out` }, open: undefined }

  // The newest rollout towards this target ended without success: a retry is asked for explicitly.
  const last = view.all.find(
    (r) =>
      r.spec.toDigest === target &&
      outcomeOf(r) !== "Superseded" &&
      closes.every((c) => c.rollout.metadata.name !== r.metadata.name || c.outcome !== "Superseded"),
  )
  const lastOutcome = last && outcomeOf(closed(last))
  if (
    last !== undefined &&
    lastOutcome !== undefined &&
    lastOutcome !== "Succeeded" &&
    o.runtime.metadata.annotations?.[ANNOTATION_RETRY] !== last.metadata.name
  ) {
    return {
      ...withTarget,
      plan: { _tag: "Planned", message: `Rollout ${last.metadata.name} towards plan ${shortDigest(target)} ended ${lastOutcome}` },
      open: undefined,
      ended: last,
    }
  }

  const until = since + o.windowMs
  if (!adopt && o.now < until) {
    const left = Math.ceil((until - o.now) / 1000)
    return {
      ...withTarget,
      plan: {
        _tag: "Stabilizing",
        until,
        message: `Target plan ${shortDigest(target)} must hold still until ${iso(until)} (${left}s left) before a rollout is created`,
      },
      open: undefined,
    }
  }

  // spec.paused starts no new work: no upgrade-check Job, no rollout (an open one is the step executor's to hold).
  if (o.runtime.spec.paused) {
    return {
      ...withTarget,
      plan: { _tag: "Paused", message: `spec.paused is set: target plan ${shortDigest(target)} starts no assessment and no rollout until it is cleared` },
      open: undefined,
    }
  }
  const from = active === undefined ? undefined : o.plans.get(active)
  if (!adopt && active !== undefined && (from === undefined || !from.ok)) {
    return {
      ...withTarget,
      plan: {
        _tag: "Blocked",
        reason: "PlanUnreadable",
        message: `the active plan ${shortDigest(active)} ${from === undefined ? "has no plan ConfigMap" : `is unreadable: ${from.ok ? "" : from.why}`}`,
      },
      open: undefined,
    }
  }
  // An adoption starts from the plan it rebuilt: the stack as it runs.
  const fromPlan = adopt ? t.plan : from?.ok ? from.plan : undefined
  const gate = t.pinned ? pinChartsGate(o, t.plan) : undefined
  if (gate !== undefined) return { ...withTarget, ...gate, open: undefined }
  const aicrVersion = t.plan.aicr?.version ?? o.resolution?.aicr?.version ?? "unknown"
  const assessed = assessTransition(o, fromPlan, t.plan, aicrVersion)
  if (!("assessment" in assessed)) return { ...withTarget, ...assessed, open: undefined }
  const assessment = assessed.assessment
  const blocked = blockedBy(assessment)
  if (blocked.length > 0) {
    return {
      ...withTarget,
      plan: {
        _tag: "Blocked",
        reason: "TransitionBlocked",
        message: `upgrade-check blocks ${blocked.map((b) => `${b.component} ${b.from ?? ""}→${b.to ?? ""} (${b.reason ?? "blocked"})`).join(", ")}: no rollout starts`,
      },
      open: undefined,
    }
  }
  const name = rolloutName(target, attemptsFor(o.rollouts, target) + 1)
  const requestedBy = o.runtime.metadata.annotations?.[ANNOTATION_EDITED_BY]
  const spec: RuntimeRolloutSpec = {
    runtimeUID: uid,
    ...(adopt ? { fromDigest: target } : active !== undefined ? { fromDigest: active } : {}),
    toDigest: target,
    kind: adopt ? "Adopt" : rolloutKind(active, t.pinned),
    deadline: iso(o.now + o.deadlineMs),
    requiresApproval: true,
    ...(requestedBy ? { requestedBy } : {}),
    steps: adopt ? adoptSteps(t.plan) : planSteps(fromPlan, t.plan, assessment),
  }
  const rollout: RuntimeRollout = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "RuntimeRollout",
    metadata: { name, labels: { [LABEL_RUNTIME_UID]: uid, [LABEL_PLAN]: planKey(target) } },
    spec,
  }
  const message = adopt
    ? `Rollout ${name} adopts the running stack (runtime ${adoption.from.join(", ")}) as plan ${shortDigest(target)}, rebuilt from its Applications`
    : `Rollout ${name} targets plan ${shortDigest(target)}`
  return { ...withTarget, plan: { _tag: "Planned", message }, create: { rollout, assessment }, open: rollout }
}
