/**
 * The chart's alerts, checked the way a platform team checks rules before shipping them: the PrometheusRule that
 * `helm template` renders, its groups written out as a rules file, `promtool check rules` on it and `promtool test
 * rules` with hack/chart/alerts.promtool.yaml (series that fire and series that do not, the alerts' text included).
 * Also: the thresholds come from the values, and every `aicr_*` series the rules and the dashboard read is one the
 * controllers export (packages/runtime/src/condition-metrics.ts).
 */
import { execFile } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { STATUS_FIELDS } from "@aicr/runtime"
import { type IsolatedHelm, isolatedHelm, parseManifests, toolPath } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stringify } from "yaml"
import { CHART_DIR } from "../generate-chart"

const run = promisify(execFile)
const TESTS = join(import.meta.dirname, "alerts.promtool.yaml")
const VALUES = join(CHART_DIR, "ci", "signing-values.yaml")

interface Rule {
  readonly alert?: string
  readonly record?: string
  readonly expr: string
  readonly for?: string
}
interface RuleGroup {
  readonly name: string
  readonly rules: ReadonlyArray<Rule>
}

let h: IsolatedHelm
let work: string

/** The rendered PrometheusRule's groups, with `--set` overrides. */
const ruleGroups = async (...set: string[]): Promise<ReadonlyArray<RuleGroup>> => {
  const out = await h.helm(
    "template",
    "aicr-operator",
    CHART_DIR,
    "--namespace",
    "aicr-system",
    "-f",
    VALUES,
    "--show-only",
    "templates/monitoring.yaml",
    ...set.flatMap((s) => ["--set", s]),
  )
  const rule = (parseManifests(out) as Array<{ kind?: string; spec?: { groups: RuleGroup[] } }>).find((o) => o?.kind === "PrometheusRule")
  if (rule?.spec === undefined) throw new Error("no PrometheusRule rendered")
  return rule.spec.groups
}

/** promtool in a directory holding rules.yaml (from `groups`) and the unit tests; its outcome with its output. */
const promtool = async (groups: ReadonlyArray<RuleGroup>, ...args: string[]): Promise<{ ok: boolean; out: string }> => {
  const dir = mkdtempSync(join(work, "rules-"))
  writeFileSync(join(dir, "rules.yaml"), stringify({ groups }))
  copyFileSync(TESTS, join(dir, "alerts.promtool.yaml"))
  try {
    const { stdout, stderr } = await run(toolPath("promtool"), args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 })
    return { ok: true, out: stdout + stderr }
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string }
    return { ok: false, out: `${x.stdout ?? ""}${x.stderr ?? String(e)}` }
  }
}

const alertOf = (groups: ReadonlyArray<RuleGroup>, name: string): Rule => {
  const found = groups.flatMap((g) => g.rules).find((r) => r.alert === name)
  if (found === undefined) throw new Error(`no alert ${name}`)
  return found
}

/** The `aicr_…` metric names a PromQL text reads (not recording rules' `aicr:` names). */
const aicrMetrics = (promql: string): string[] => [...promql.matchAll(/\b(aicr_[a-z_]+)\b/g)].map((m) => m[1]!)

beforeAll(async () => {
  h = await isolatedHelm("aicr-alerts-")
  work = mkdtempSync(join(tmpdir(), "aicr-alerts-test-"))
})

afterAll(async () => {
  await h?.cleanup()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe("the PrometheusRule, with promtool", () => {
  it("promtool check rules accepts every rule", async () => {
    const groups = await ruleGroups()
    const rules = groups.flatMap((g) => g.rules)
    expect(rules.map((r) => r.alert ?? r.record)).toEqual([
      "AicrControllerDown",
      "AicrControllerWithoutLeader",
      "AicrReconcileErrors",
      "AicrWorkqueueBacklog",
      "AicrApiServerErrors",
      "aicr:runtime_stalled_seconds",
      "aicr:runtime_stall_rollout",
      "AicrRuntimeStalled",
      "AicrApprovalExpiringSoon",
      "AicrRegistryCredentialsExpiringSoon",
      "AicrRegistryCredentialsNotReady",
      "AicrEngineSuspendedLong",
    ])
    const { ok, out } = await promtool(groups, "check", "rules", "rules.yaml")
    expect(out).toContain(`SUCCESS: ${rules.length} rules found`)
    expect(ok).toBe(true)
  })

  it("promtool test rules: each status alert fires on the series that should fire it, with its text, and not on the others", async () => {
    const { ok, out } = await promtool(await ruleGroups(), "test", "rules", "alerts.promtool.yaml")
    expect(out).toContain("SUCCESS")
    expect(ok, out).toBe(true)
  })

  it("the tests are not vacuous: with other thresholds the same series give other answers, and promtool says which", async () => {
    const { ok, out } = await promtool(
      await ruleGroups(
        "metrics.prometheusRule.stalledMinutes=40",
        "metrics.prometheusRule.approvalExpiringMinutes=30",
        "metrics.prometheusRule.engineSuspendedHours=30",
      ),
      "test",
      "rules",
      "alerts.promtool.yaml",
    )
    expect(ok).toBe(false)
    for (const name of ["AicrRuntimeStalled", "AicrApprovalExpiringSoon", "AicrEngineSuspendedLong"]) expect(out).toContain(`alertname: ${name}`)
    for (const name of ["AicrRegistryCredentialsExpiringSoon", "AicrRegistryCredentialsNotReady"]) expect(out).not.toContain(`alertname: ${name}`)
  })
})

describe("thresholds and series", () => {
  it("takes every threshold from the values", async () => {
    const groups = await ruleGroups(
      "metrics.prometheusRule.stalledMinutes=5",
      "metrics.prometheusRule.approvalExpiringMinutes=90",
      "metrics.prometheusRule.credentialsExpiringMinutes=240",
      "metrics.prometheusRule.credentialsNotReadyMinutes=7",
      "metrics.prometheusRule.engineSuspendedHours=6",
    )
    expect(alertOf(groups, "AicrRuntimeStalled").expr).toContain("(aicr:runtime_stalled_seconds > 300)")
    expect(alertOf(groups, "AicrApprovalExpiringSoon").expr).toContain("- time() < 5400")
    expect(alertOf(groups, "AicrRegistryCredentialsExpiringSoon").expr).toMatch(/- time\(\) < 14400$/)
    expect(alertOf(groups, "AicrRegistryCredentialsNotReady").expr).toMatch(/> 420$/)
    expect(alertOf(groups, "AicrEngineSuspendedLong").for).toBe("6h")
  })

  it("refuses a threshold that is not a positive whole number, naming it", async () => {
    const err = await ruleGroups("metrics.prometheusRule.stalledMinutes=0").then(
      () => "",
      (e: { stderr?: string }) => String(e.stderr ?? e),
    )
    expect(err).toContain("stalledMinutes")
  })

  it("reads only series the controllers export, in the rules and in the dashboard", async () => {
    const exported = new Set(["aicr_status_condition", "aicr_status_condition_last_transition_time_seconds", ...STATUS_FIELDS.map((f) => f.metric)])
    const rules = (await ruleGroups()).flatMap((g) => g.rules).flatMap((r) => aicrMetrics(r.expr))
    const dashboard = JSON.parse(readFileSync(join(CHART_DIR, "files", "dashboard.json"), "utf8")) as { panels: Array<{ targets?: Array<{ expr: string }> }> }
    const panels = dashboard.panels.flatMap((p) => p.targets ?? []).flatMap((t) => aicrMetrics(t.expr))
    expect(new Set(rules)).toEqual(
      new Set([
        "aicr_status_condition",
        "aicr_status_condition_last_transition_time_seconds",
        "aicr_runtimerollout_approval_valid_until_seconds",
        "aicr_clusterruntime_credentials_expires_at_seconds",
      ]),
    )
    expect(panels.length).toBeGreaterThan(0)
    for (const m of [...rules, ...panels]) expect([...exported], m).toContain(m)
  })
})
