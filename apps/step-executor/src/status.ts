/**
 * report: pure. The step-executor's rooms on every pass: `Progressing` and `status.steps` on the open rollout,
 * `EngineAvailable` and `status.engine` on the runtime. Messages carry no clock readings, so an unchanged state makes
 * no write; step times come from the Applications' markers. After a defect (`errors.ts`) both rooms say
 * `InternalError` and keep the status keys as they were.
 */
import { type ClusterRuntime, EngineAvailable, Progressing, type RuntimeRollout } from "@aicr/api"
import { type ConditionIntent, materialize, toConditionTime } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import { type Decision, type Progress, type RolloutDecision, stepLabel } from "./decide"
import { internalEngine, internalProgressing } from "./errors"
import type { Observed } from "./gather"

export const engineCondition = (o: Observed): ConditionIntent<"EngineAvailable"> =>
  o.engine._tag === "Ready"
    ? EngineAvailable.true(
        "EngineReady",
        `Argo CD's Application CRD is installed and AppProject ${o.settings.engineNamespace}/${o.settings.project} is readable`,
      )
    : EngineAvailable.false(o.engine._tag, o.engine.message)

export const runtimeStatus = (o: Observed, d: Decision, refusal: string | undefined): StatusWrite => ({
  conditions: materialize([engineCondition(o)], { existing: o.runtime.status?.conditions, generation: o.generation, now: o.now }),
  engine: {
    namespace: o.settings.engineNamespace,
    project: o.settings.project,
    applications: d.ours,
    suspended: d.suspendedCount,
    ...(refusal !== undefined ? { suspensionRefused: refusal } : {}),
  },
})

/** A verdict to write (a kept one writes nothing). */
export type Reportable = Exclude<Progress, { readonly _tag: "Kept" }>

export const progressingCondition = (p: Reportable): ConditionIntent<"Progressing"> => {
  switch (p._tag) {
    case "Completed":
      return Progressing.true("StepsCompleted", p.message)
    case "InProgress":
      return Progressing.true("StepInProgress", p.message)
    case "Blocked":
      return Progressing.false(p.reason, p.message.slice(0, 32_000))
  }
}

/** The rollout's room, or undefined when our terminal verdict stands (nothing to write). */
export const rolloutStatus = (o: Observed, r: RolloutDecision): StatusWrite | undefined => {
  if (r.progress._tag === "Kept") return undefined
  const total = r.rollout.spec.steps?.length ?? 0
  const conditions = materialize([progressingCondition(r.progress)], {
    existing: r.rollout.status?.conditions,
    generation: r.rollout.metadata.generation,
    now: o.now,
  })
  // When a step ended (Ready or Failed): the time this executor first recorded it so, kept from then on.
  const recorded = new Map((r.rollout.status?.steps?.items ?? []).map((x) => [x.index, x]))
  const completedAt = (v: (typeof r.steps)[number]) => {
    if (v.state !== "Ready" && v.state !== "Failed") return undefined
    const before = recorded.get(v.index)
    return before?.state === v.state && before.completedAt !== undefined ? before.completedAt : toConditionTime(o.now)
  }
  const items = r.steps.map((v) => ({
    index: v.index,
    release: v.step.release,
    namespace: v.step.namespace,
    action: v.step.action,
    ...(v.step.verdict !== undefined ? { verdict: v.step.verdict } : {}),
    state: v.state,
    ...(v.writtenRevision !== undefined ? { writtenRevision: v.writtenRevision } : {}),
    ...(v.readyAtRevision !== undefined ? { readyAtRevision: v.readyAtRevision } : {}),
    ...(v.startedAt !== undefined ? { startedAt: v.startedAt } : {}),
    ...(completedAt(v) !== undefined ? { completedAt: completedAt(v) } : {}),
    // The step in flight's deadline: fixed by its write (written-at + timeout), so it never causes a write of its own.
    ...(v.index - 1 === r.current && v.state === "WaitingForReady" && r.deadline !== undefined ? { deadline: toConditionTime(r.deadline) } : {}),
    ...(v.gate !== undefined ? { gate: v.gate } : {}),
    ...(v.message !== undefined ? { message: v.message.slice(0, 1024) } : {}),
  }))
  const step = r.current === undefined ? undefined : r.rollout.spec.steps?.[r.current]
  const steps = {
    total,
    done: r.steps.filter((v) => v.state === "Ready").length,
    ...(step !== undefined && r.current !== undefined ? { current: stepLabel(r.current + 1, total, step) } : {}),
    ...(items.length > 0 ? { items } : {}),
  }
  return { conditions, steps }
}

/** The rollout's room after a defect: `Progressing=Unknown/InternalError`, `status.steps` as it was. */
export const rolloutInternalError = (rollout: RuntimeRollout, now: number): StatusWrite => ({
  conditions: materialize([internalProgressing()], { existing: rollout.status?.conditions, generation: rollout.metadata.generation, now }),
  ...(rollout.status?.steps !== undefined ? { steps: rollout.status.steps } : {}),
})

/** The runtime's room after a defect: `EngineAvailable=Unknown/InternalError`, `status.engine` as it was. */
export const runtimeInternalError = (runtime: ClusterRuntime, now: number): StatusWrite => ({
  conditions: materialize([internalEngine()], { existing: runtime.status?.conditions, generation: runtime.metadata.generation, now }),
  ...(runtime.status?.engine !== undefined ? { engine: runtime.status.engine } : {}),
})
