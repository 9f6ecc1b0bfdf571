/**
 * AICR 1.x `aicr upgrade-check` (research/aicr-newer.md §1): the Job that rates a transition between two recipes,
 * and the parser of its `--format json` report.
 *
 * The Job reads both recipes from a Job-owned input ConfigMap mounted at `/var/run/aicr/upgrade-check`
 * (`from.json`, `to.json`: the `recipe.json` of each plan's content ConfigMap), runs
 * `aicr upgrade-check --from … --to … --deployer argocd --format json --fail-on-error=false` and writes the report
 * with AICR's own `-o cm://<ns>/<job>` writer into its output ConfigMap, like the recipe Job. `--fail-on-error=false`
 * keeps a report that needs attention at exit 0; a non-zero exit is then a failed run (bad input, AICR error).
 *
 * The parser keeps every key but `components` and `summary` optional (the report grew keys across releases:
 * `identityChanges`, `source`, `atRisk`, `objectNamesCompared`), and fails closed: an unknown verdict or change kind
 * becomes `unknown` and fails the run.
 */
import type { Verdict } from "@aicr/api"
import { Schema } from "effect"
import { type AicrJobSettings, type AicrObject, jobName, jobObject, labelsOf, ownedBy } from "./job"

export type Change = "added" | "removed" | "version" | "identity" | "replaced" | "values"

/** One component row, in the report's shape (`values` is the operator's own: a values-only change). */
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
  /** Post-apply actions of a manual transition (upgrade-check `steps`, already filtered to `--deployer`). */
  readonly steps?: ReadonlyArray<{ readonly id: string; readonly description: string; readonly reason?: string }>
}

export interface UpgradeCheckReport {
  readonly components: ReadonlyArray<AssessedComponent>
  readonly summary: { readonly components: number; readonly failing: number }
}

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

/** Parses `aicr upgrade-check --format json`; unknown verdicts or change kinds fail closed as `unknown`. */
export const parseUpgradeCheck = (json: string): { ok: true; value: UpgradeCheckReport } | { ok: false; why: string } => {
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
      notes: closed
        ? `unrecognised ${knownVerdict ? "change" : "verdict"} "${knownVerdict ? c.change : c.verdict}" from upgrade-check, treated as unknown`
        : (c.notes ?? ""),
      ...(c.explanation !== undefined ? { explanation: c.explanation } : {}),
      ...(c.jump !== undefined ? { jump: c.jump } : {}),
      ...(c.steps ? { steps: c.steps } : {}),
      breaking: c.breaking ?? false,
      downgrade: c.downgrade ?? false,
      failsRun: closed || (c.failsRun ?? (verdict !== undefined && verdict !== "safe")),
    }
  })
  return { ok: true, value: { components: rows, summary: { components: rows.length, failing: rows.filter((x) => x.failsRun).length } } }
}

/** Where the Job finds the two recipes. */
export const UPGRADE_CHECK_INPUT_DIR = "/var/run/aicr/upgrade-check"

/** The Job's name: one per (pinned AICR, from recipe, to recipe), keyed by the digest of the three. */
export const upgradeCheckJobName = (key: string): string => jobName("upgrade-check", key)

export const upgradeCheckArgs = (out: string): string[] => [
  "upgrade-check",
  "--from",
  `${UPGRADE_CHECK_INPUT_DIR}/from.json`,
  "--to",
  `${UPGRADE_CHECK_INPUT_DIR}/to.json`,
  "--deployer",
  "argocd",
  "--format",
  "json",
  "--fail-on-error=false",
  "--output",
  out,
]

/** The upgrade-check Job: suspended like every AICR Job, its input ConfigMap mounted read-only. */
export const upgradeCheckJob = (s: AicrJobSettings, key: string): AicrObject => {
  const name = upgradeCheckJobName(key)
  return jobObject(s, {
    kind: "upgrade-check",
    name,
    namespace: s.namespace,
    inputDigest: key,
    serviceAccount: s.serviceAccount,
    args: upgradeCheckArgs(`cm://${s.namespace}/${name}`),
    volumes: [{ name: "recipes", mountPath: UPGRADE_CHECK_INPUT_DIR, source: { configMap: { name: `${name}-input` } } }],
  })
}

/** The Job-owned input: the two recipes, in the Job's namespace (a ConfigMap volume is read from the pod's own). */
export const upgradeCheckInput = (
  job: { readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string } },
  key: string,
  recipes: { readonly from: string; readonly to: string },
): AicrObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: `${job.metadata.name}-input`, namespace: job.metadata.namespace, labels: labelsOf("upgrade-check", key), ownerReferences: ownedBy(job) },
  data: { "from.json": recipes.from, "to.json": recipes.to },
})
