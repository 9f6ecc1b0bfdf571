/**
 * assess: pure. How risky each component change of a transition is, in the shape of AICR's `upgrade-check` report
 * (aicr-newer.md §1.4), stored as `assessment.json`.
 *
 * - With `upgrade-check` (AICR 1.x) the report is AICR's own: the planner runs it as a Job (upgrade-check.ts),
 *   packages/aicr `parseUpgradeCheck` reads it (every key but `components` and `summary` optional; an unknown verdict
 *   or change kind fails closed as `unknown`) and `assessmentOfReport` stores it.
 * - Without it (AICR 0.x, the versions that run here) the operator compares the two plans itself: added, removed,
 *   version and identity changes (namespace, chart, source), values-only changes, the version jump (patch, minor,
 *   major; `breaking` = a major bump, a 0.x minor bump or a changed prerelease, as AICR defines it) — and rates every
 *   change `unknown`, because this AICR version cannot rate transitions. Never `safe` without AICR saying so.
 */
import type { AssessedComponent, Change, UpgradeCheckReport } from "@aicr/aicr"
import type { Plan, PlanRelease, Verdict } from "@aicr/api"
import semver from "semver"

export type { AssessedComponent, Change }

export interface Assessment {
  readonly apiVersion: "operator.aicr.run/v1alpha1"
  readonly kind: "Assessment"
  /** `aicr upgrade-check`, or the operator when the pinned AICR has none. */
  readonly assessedBy: "aicr upgrade-check" | "aicr-operator"
  readonly aicrVersion: string
  readonly fromDigest?: string
  readonly toDigest: string
  readonly deployer: "argocd"
  readonly components: ReadonlyArray<AssessedComponent>
  readonly summary: { readonly components: number; readonly failing: number }
}

export const NO_UPGRADE_CHECK = "no-upgrade-check"

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** AICR's jump phrase and flags for a version move; undefined when the versions are not semver. */
export const versionJump = (from: string, to: string): { jump: string; breaking: boolean; downgrade: boolean } | undefined => {
  const a = semver.parse(semver.clean(from) ?? from)
  const b = semver.parse(semver.clean(to) ?? to)
  if (a === null || b === null) return undefined
  const downgrade = semver.lt(b, a)
  const [lo, hi] = downgrade ? [b, a] : [a, b]
  const jump =
    hi.major !== lo.major
      ? plural(hi.major - lo.major, "major", "majors")
      : hi.minor !== lo.minor
        ? plural(hi.minor - lo.minor, "minor", "minors")
        : hi.patch !== lo.patch
          ? plural(hi.patch - lo.patch, "patch", "patches")
          : "prerelease"
  const breaking = b.major !== a.major || (a.major === 0 && b.minor !== a.minor) || a.prerelease.join(".") !== b.prerelease.join(".")
  return { jump, breaking, downgrade }
}

const versionOf = (r: PlanRelease | undefined) => r?.upstream?.version

/** The operator's own assessment (AICR without upgrade-check): every change `unknown`, with the reason why. */
export const assessWithoutUpgradeCheck = (
  from: Plan | undefined,
  to: Plan,
  aicrVersion: string,
  // For an AICR without upgrade-check (capabilitiesOf(version).upgradeCheck false): 1.x runs it (upgrade-check.ts),
  // unless there is nothing to run it from (an active plan rebuilt at an adoption records no recipe).
  why = `AICR ${aicrVersion} has no upgrade-check, so it cannot rate this transition; an approver must judge it`,
): Assessment => {
  const before = new Map((from?.releases ?? []).map((r) => [r.name, r]))
  const after = new Map(to.releases.map((r) => [r.name, r]))
  const rows: AssessedComponent[] = []
  for (const r of to.releases) {
    const old = before.get(r.name)
    if (old === undefined) {
      rows.push({
        component: r.name,
        change: "added",
        ...(versionOf(r) ? { to: versionOf(r) } : {}),
        notes: "new component, nothing to do",
        breaking: false,
        downgrade: false,
        failsRun: false,
      })
      continue
    }
    const identity = [
      ["namespace", old.namespace, r.namespace],
      ["chart", old.upstream?.chart ?? "", r.upstream?.chart ?? ""],
      ["source", old.upstream?.repo ?? "", r.upstream?.repo ?? ""],
    ]
      .filter(([, a, b]) => a !== b)
      .map(([field, a, b]) => ({ field: field!, from: a!, to: b! }))
    const [vf, vt] = [versionOf(old), versionOf(r)]
    const base = { component: r.name, ...(vf ? { from: vf } : {}), ...(vt ? { to: vt } : {}), verdict: "unknown" as const, failsRun: true }
    if (identity.length > 0) {
      rows.push({
        ...base,
        change: "identity",
        identityChanges: identity,
        reason: "identity-changed",
        notes: `${identity.map((c) => c.field).join(", ")} moved`,
        explanation: why,
        breaking: false,
        downgrade: false,
      })
    } else if (vf !== vt && vf !== undefined && vt !== undefined) {
      const j = versionJump(vf, vt)
      if (j === undefined) {
        rows.push({
          ...base,
          change: "version",
          verdict: "unversioned",
          reason: "not-comparable",
          notes: "versions are not comparable",
          explanation: `version "${vf}" is not comparable to "${vt}"`,
          breaking: false,
          downgrade: false,
        })
      } else {
        rows.push({
          ...base,
          change: "version",
          reason: NO_UPGRADE_CHECK,
          notes: `${j.jump}${j.breaking ? ", breaking" : ""}${j.downgrade ? ", downgrade" : ""}`,
          explanation: why,
          jump: j.jump,
          breaking: j.breaking,
          downgrade: j.downgrade,
        })
      }
    } else if (old.chart.digest !== r.chart.digest || old.values.digest !== r.values.digest) {
      const what = old.chart.digest !== r.chart.digest ? "chart content" : "values"
      rows.push({
        ...base,
        change: "values",
        reason: NO_UPGRADE_CHECK,
        notes: `${vt ?? "version"} unchanged, ${what} changed`,
        explanation: why,
        breaking: false,
        downgrade: false,
      })
    }
  }
  for (const r of from?.releases ?? []) {
    if (!after.has(r.name))
      rows.push({
        component: r.name,
        change: "removed",
        ...(versionOf(r) ? { from: versionOf(r) } : {}),
        notes: "removed from the plan",
        breaking: false,
        downgrade: false,
        failsRun: false,
      })
  }
  return {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Assessment",
    assessedBy: "aicr-operator",
    aicrVersion,
    ...(from ? { fromDigest: from.desiredStateDigest } : {}),
    toDigest: to.desiredStateDigest,
    deployer: "argocd",
    components: rows,
    summary: { components: rows.length, failing: rows.filter((r) => r.failsRun).length },
  }
}

/** AICR's own report (packages/aicr `parseUpgradeCheck`) as the stored Assessment. */
export const assessmentOfReport = (
  report: UpgradeCheckReport,
  meta: { aicrVersion: string; fromDigest?: string | undefined; toDigest: string },
): Assessment => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "Assessment",
  assessedBy: "aicr upgrade-check",
  aicrVersion: meta.aicrVersion,
  ...(meta.fromDigest ? { fromDigest: meta.fromDigest } : {}),
  toDigest: meta.toDigest,
  deployer: "argocd",
  components: report.components,
  summary: report.summary,
})

/**
 * AICR's report with the changes it does not rate added: upgrade-check compares versions and identities, so a
 * release whose chart content or values changed at the same version has no row there. Those get the operator's
 * `values` row, `unknown` (never `safe` without AICR saying so).
 */
export const withUnratedChanges = (report: Assessment, own: Assessment): Assessment => {
  const rated = new Set(report.components.map((c) => c.component))
  const extra = own.components
    .filter((c) => c.change === "values" && !rated.has(c.component))
    .map((c): AssessedComponent => ({
      ...c,
      reason: "not-rated",
      explanation:
        "aicr upgrade-check rates version and identity changes; this release's chart content or values changed at the same version, which it does not rate; an approver must judge it",
    }))
  if (extra.length === 0) return report
  const components = [...report.components, ...extra]
  return { ...report, components, summary: { components: components.length, failing: components.filter((c) => c.failsRun).length } }
}

/** Components per verdict (status.assessment.verdicts). */
export const verdictCounts = (a: Assessment) => {
  const count = (v: Verdict) => a.components.filter((c) => c.verdict === v).length
  return { safe: count("safe"), manual: count("manual"), blocked: count("blocked"), unknown: count("unknown"), unversioned: count("unversioned") }
}

/** The policy (operator.md §4.5): any `blocked` stops the transition; in v1alpha1 every rollout needs approval. */
export const blockedBy = (a: Assessment): ReadonlyArray<AssessedComponent> => a.components.filter((c) => c.verdict === "blocked")
