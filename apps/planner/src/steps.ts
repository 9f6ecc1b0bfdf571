/**
 * steps: pure. The steps of a transition from one plan to another: installs, upgrades and moves in the target's
 * dependency order, then removals in the reverse of the active plan's order. A release whose chart digest and
 * values digest are unchanged is no step. Each step carries its component's verdict; a `manual` verdict with
 * post-apply actions makes the step wait for an acknowledgement.
 */
import type { Plan, PlanRelease, RolloutKind, RolloutStep } from "@aicr/api"
import type { Assessment } from "./assess"

const versionOf = (r: PlanRelease) => r.upstream?.version

/** The assessment row of a release (a `<name>-manifests` wrapper shares its component's row). */
const rowOf = (a: Assessment, release: string) =>
  a.components.find((c) => c.component === release) ?? a.components.find((c) => `${c.component}-manifests` === release)

export const planSteps = (from: Plan | undefined, to: Plan, assessment: Assessment): RolloutStep[] => {
  const before = new Map((from?.releases ?? []).map((r) => [r.name, r]))
  const after = new Set(to.releases.map((r) => r.name))
  const steps: RolloutStep[] = []
  for (const r of [...to.releases].sort((a, b) => a.order - b.order)) {
    const old = before.get(r.name)
    if (
      old !== undefined &&
      old.chart.digest === r.chart.digest &&
      old.values.digest === r.values.digest &&
      old.namespace === r.namespace &&
      old.chart.ref === r.chart.ref
    )
      continue
    const row = rowOf(assessment, r.name)
    const action = old === undefined ? "Install" : old.namespace !== r.namespace ? "Move" : "Upgrade"
    steps.push({
      release: r.name,
      namespace: r.namespace,
      action,
      ...(action !== "Install" && row?.verdict ? { verdict: row.verdict } : {}),
      ...(old && versionOf(old) ? { from: versionOf(old) } : {}),
      ...(versionOf(r) ? { to: versionOf(r) } : {}),
      ...(row?.verdict === "manual" && (row.steps?.length ?? 0) > 0 ? { acknowledge: true } : {}),
    })
  }
  for (const r of [...(from?.releases ?? [])].sort((a, b) => b.order - a.order)) {
    if (after.has(r.name)) continue
    steps.push({ release: r.name, namespace: r.namespace, action: "Remove", ...(versionOf(r) ? { from: versionOf(r) } : {}) })
  }
  return steps
}

/** What kind of transition: the first install, a pin to an earlier plan, or an upgrade of the active plan. */
export const rolloutKind = (active: string | undefined, pinned: boolean): RolloutKind => (active === undefined ? "Install" : pinned ? "Rollback" : "Upgrade")

/** The steps of an adoption: every release of the rebuilt plan, in its order, taken back as it runs (relabelled). */
export const adoptSteps = (plan: Plan): RolloutStep[] =>
  [...plan.releases]
    .sort((a, b) => a.order - b.order)
    .map((r) => ({ release: r.name, namespace: r.namespace, action: "Adopt" as const, ...(versionOf(r) ? { from: versionOf(r), to: versionOf(r) } : {}) }))
