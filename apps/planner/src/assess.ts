/**
 * assess: pure. How risky each component change of a transition is, in the shape of AICR's `upgrade-check` report
 * (aicr-newer.md §1.4), stored as `assessment.json`.
 *
 * - With `upgrade-check` (AICR 1.x) the report is AICR's own, parsed with `parseUpgradeCheck` (every key but
 *   `components` and `summary` optional; an unknown verdict or change kind fails closed as `unknown`).
 * - Without it (AICR 0.x, the versions that run here) the operator compares the two plans itself: added, removed,
 *   version and identity changes (namespace, chart, source), values-only changes, the version jump (patch, minor,
 *   major; `breaking` = a major bump, a 0.x minor bump or a changed prerelease, as AICR defines it) — and rates every
 *   change `unknown`, because this AICR version cannot rate transitions. Never `safe` without AICR saying so.
 */
import { capabilitiesOf } from "@aicr/aicr"
import type { Plan, PlanRelease, Verdict } from "@aicr/api"
import { Schema } from "effect"
import semver from "semver"

export type Change = "added" | "removed" | "version" | "identity" | "replaced" | "values"

export interface AssessedComponent {
  readonly component: string
  readonly change: Change
  readonly from?: string
  readonly to?: string
  readonly identityChanges?: ReadonlyArray<{ readonly field: string; readonly from: string; readonly to: string }>
  readonly verdict?: Verdict
  readonly reason?: string
  readonly notes?: string
  readonly explanation?: string
  readonly jump?: string
  readonly breaking: boolean
  readonly downgrade: boolean
  readonly failsRun: boolean
  /** Post-apply actions of a manual transition (upgrade-check `steps`). */
  readonly steps?: ReadonlyArray<{ readonly id: string; readonly description: string; readonly reason?: string }>
}

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
    hi.major !== lo.major ? plural(hi.major - lo.major, "major", "majors") : hi.minor !== lo.minor ? plural(hi.minor - lo.minor, "minor", "minors") : hi.patch !== lo.patch ? plural(hi.patch - lo.patch, "patch", "patches") : "prerelease"
  const breaking = b.major !== a.major || (a.major === 0 && b.minor !== a.minor) || a.prerelease.join(".") !== b.prerelease.join(".")
  return { jump, breaking, downgrade }
}

const versionOf = (r: PlanRelease | undefined) => r?.upstream?.version

/** The operator's own assessment (AICR without upgrade-check): every change `unknown`, with the reason why. */
export const assessWithoutUpgradeCheck = (from: Plan | undefined, to: Plan, aicrVersion: string): Assessment => {
  // What the pinned AICR can do decides the wording: 0.x has no upgrade-check at all; for 1.x the planner does not
  // run it yet (its report parser is below, the Job is not wired in).
  const why = capabilitiesOf(aicrVersion)?.upgradeCheck
    ? `AICR ${aicrVersion} has upgrade-check, but this operator does not run it yet, so the transition is not rated; an approver must judge it`
    : `AICR ${aicrVersion} has no upgrade-check, so it cannot rate this transition; an approver must judge it`
  const before = new Map((from?.releases ?? []).map((r) => [r.name, r]))
  const after = new Map(to.releases.map((r) => [r.name, r]))
  const rows: AssessedComponent[] = []
  for (const r of to.releases) {
    const old = before.get(r.name)
    if (old === undefined) {
      rows.push({ component: r.name, change: "added", ...(versionOf(r) ? { to: versionOf(r) } : {}), notes: "new component, nothing to do", breaking: false, downgrade: false, failsRun: false })
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
      rows.push({ ...base, change: "identity", identityChanges: identity, reason: "identity-changed", notes: `${identity.map((c) => c.field).join(", ")} moved`, explanation: why, breaking: false, downgrade: false })
    } else if (vf !== vt && vf !== undefined && vt !== undefined) {
      const j = versionJump(vf, vt)
      if (j === undefined) {
        rows.push({ ...base, change: "version", verdict: "unversioned", reason: "not-comparable", notes: "versions are not comparable", explanation: `version "${vf}" is not comparable to "${vt}"`, breaking: false, downgrade: false })
      } else {
        rows.push({ ...base, change: "version", reason: NO_UPGRADE_CHECK, notes: `${j.jump}${j.breaking ? ", breaking" : ""}${j.downgrade ? ", downgrade" : ""}`, explanation: why, jump: j.jump, breaking: j.breaking, downgrade: j.downgrade })
      }
    } else if (old.chart.digest !== r.chart.digest || old.values.digest !== r.values.digest) {
      const what = old.chart.digest !== r.chart.digest ? "chart content" : "values"
      rows.push({ ...base, change: "values", reason: NO_UPGRADE_CHECK, notes: `${vt ?? "version"} unchanged, ${what} changed`, explanation: why, breaking: false, downgrade: false })
    }
  }
  for (const r of from?.releases ?? []) {
    if (!after.has(r.name)) rows.push({ component: r.name, change: "removed", ...(versionOf(r) ? { from: versionOf(r) } : {}), notes: "removed from the plan", breaking: false, downgrade: false, failsRun: false })
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

// ---- AICR 1.x `upgrade-check --format json` ----------------------------------------------------------------------

const VERDICTS = ["safe", "manual", "blocked", "unknown", "unversioned"] as const
const CHANGES = ["version", "added", "removed", "replaced", "identity"] as const

const Row = Schema.Struct({
  component: Schema.String,
  change: Schema.String,
  from: Schema.optionalKey(Schema.String),
  to: Schema.optionalKey(Schema.String),
  identityChanges: Schema.optionalKey(Schema.Array(Schema.Struct({ field: Schema.String, from: Schema.String, to: Schema.String }))),
  verdict: Schema.optionalKey(Schema.String),
  notes: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String),
  explanation: Schema.optionalKey(Schema.String),
  jump: Schema.optionalKey(Schema.String),
  breaking: Schema.optionalKey(Schema.Boolean),
  downgrade: Schema.optionalKey(Schema.Boolean),
  steps: Schema.optionalKey(Schema.Array(Schema.Struct({ id: Schema.String, description: Schema.String, reason: Schema.optionalKey(Schema.String) }))),
  failsRun: Schema.optionalKey(Schema.Boolean),
})
const Report = Schema.Struct({
  components: Schema.Array(Row),
  summary: Schema.Struct({ components: Schema.Number, failing: Schema.Number }),
})
const decodeReport = Schema.decodeUnknownResult(Schema.fromJsonString(Report))

/** Parses `aicr upgrade-check --format json` into an Assessment; unknown verdicts or change kinds fail closed. */
export const parseUpgradeCheck = (json: string, meta: { aicrVersion: string; fromDigest?: string; toDigest: string }): { ok: true; value: Assessment } | { ok: false; why: string } => {
  const r = decodeReport(json)
  if (r._tag === "Failure") return { ok: false, why: `upgrade-check report does not parse: ${String(r.failure).slice(0, 300)}` }
  const rows = r.success.components.map((c): AssessedComponent => {
    const knownVerdict = c.verdict === undefined || (VERDICTS as readonly string[]).includes(c.verdict)
    const knownChange = (CHANGES as readonly string[]).includes(c.change)
    const closed = !knownVerdict || !knownChange
    const verdict = closed ? "unknown" : (c.verdict as Verdict | undefined)
    return {
      component: c.component,
      change: knownChange ? (c.change as Change) : "identity",
      ...(c.from !== undefined ? { from: c.from } : {}),
      ...(c.to !== undefined ? { to: c.to } : {}),
      ...(c.identityChanges ? { identityChanges: c.identityChanges } : {}),
      ...(verdict ? { verdict } : {}),
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
      notes: closed ? `unrecognised ${knownVerdict ? "change" : "verdict"} "${knownVerdict ? c.change : c.verdict}" from upgrade-check, treated as unknown` : (c.notes ?? ""),
      ...(c.explanation !== undefined ? { explanation: c.explanation } : {}),
      ...(c.jump !== undefined ? { jump: c.jump } : {}),
      ...(c.steps ? { steps: c.steps } : {}),
      breaking: c.breaking ?? false,
      downgrade: c.downgrade ?? false,
      failsRun: closed || (c.failsRun ?? (verdict !== undefined && verdict !== "safe")),
    }
  })
  return {
    ok: true,
    value: {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "Assessment",
      assessedBy: "aicr upgrade-check",
      aicrVersion: meta.aicrVersion,
      ...(meta.fromDigest ? { fromDigest: meta.fromDigest } : {}),
      toDigest: meta.toDigest,
      deployer: "argocd",
      components: rows,
      summary: { components: rows.length, failing: rows.filter((x) => x.failsRun).length },
    },
  }
}

/** Components per verdict (status.assessment.verdicts). */
export const verdictCounts = (a: Assessment) => {
  const count = (v: Verdict) => a.components.filter((c) => c.verdict === v).length
  return { safe: count("safe"), manual: count("manual"), blocked: count("blocked"), unknown: count("unknown"), unversioned: count("unversioned") }
}

/** The policy (operator.md §4.5): any `blocked` stops the transition; in v1alpha1 every rollout needs approval. */
export const blockedBy = (a: Assessment): ReadonlyArray<AssessedComponent> => a.components.filter((c) => c.verdict === "blocked")
