/**
 * What `describe` shows, as pure functions: the describe document (also the `-o json|yaml` output) and its text
 * form. The assessment is AICR's `aicr upgrade-check` report from the content ConfigMap; its components are read
 * leniently (name, from/to versions, verdict), and the jump is computed from the versions.
 */
import { LABEL_OUTCOME, type RuntimeRollout } from "@aicr/api"
import semver from "semver"

export interface ComponentAssessment {
  readonly name: string
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly verdict: string
  readonly jump?: string | undefined
  readonly steps?: ReadonlyArray<string> | undefined
}

export interface DescribeDoc {
  readonly rollout: RuntimeRollout
  readonly assessment: { readonly configMap?: string | undefined; readonly components: ReadonlyArray<ComponentAssessment>; readonly note?: string | undefined }
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** major / minor / patch / prerelease / same / downgrade / n/a. */
export const jumpOf = (from: string | undefined, to: string | undefined): string | undefined => {
  const a = from ? semver.coerce(from, { includePrerelease: true }) : null
  const b = to ? semver.coerce(to, { includePrerelease: true }) : null
  if (a === null || b === null) return from === undefined ? (to === undefined ? undefined : "new") : to === undefined ? "removed" : undefined
  if (semver.eq(a, b)) return "same"
  if (semver.lt(b, a)) return "downgrade"
  return semver.diff(a, b) ?? undefined
}

/** The components of an upgrade-check report, sorted by name; unknown shapes give an empty list and a note. */
export const readAssessment = (json: string | undefined): { components: ComponentAssessment[]; note?: string } => {
  if (json === undefined) return { components: [], note: "no assessment report" }
  let raw: unknown
  try {
    raw = JSON.parse(json)
  } catch {
    return { components: [], note: "assessment.json is not JSON" }
  }
  const r = raw as Record<string, unknown>
  const list = (Array.isArray(r["components"]) ? r["components"] : Array.isArray(r["results"]) ? r["results"] : Array.isArray(raw) ? raw : []) as Array<
    Record<string, unknown>
  >
  const components = list.flatMap((c): ComponentAssessment[] => {
    const name = str(c["name"]) ?? str(c["component"])
    // Added and removed components carry no verdict in upgrade-check's report: show the change instead.
    const verdict = str(c["verdict"]) ?? str(c["status"]) ?? (str(c["change"]) ? `(${str(c["change"])})` : undefined)
    if (name === undefined || verdict === undefined) return []
    const from = str(c["from"]) ?? str(c["fromVersion"]) ?? str(c["currentVersion"])
    const to = str(c["to"]) ?? str(c["toVersion"]) ?? str(c["targetVersion"])
    // upgrade-check's steps: a list already filtered to one deployer, or a map of deployer → list.
    const raw = c["steps"] ?? []
    const groups = Array.isArray(raw) ? [raw] : Object.values(raw as Record<string, unknown>)
    const steps = groups
      .flatMap((g) => (Array.isArray(g) ? g : []))
      .map((s) => str((s as Record<string, unknown>)["description"]) ?? "")
      .filter((s) => s !== "")
    return [{ name, from, to, verdict, jump: jumpOf(from, to), ...(steps.length > 0 ? { steps } : {}) }]
  })
  return components.length > 0
    ? { components: components.sort((a, b) => (a.name < b.name ? -1 : 1)) }
    : { components, note: "the assessment report lists no components" }
}

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string[] => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map(
    (r) =>
      "  " +
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
  )
}

/** `describe`'s text. */
export const describeText = (d: DescribeDoc): string => {
  const { metadata, spec, status } = d.rollout
  const out: string[] = []
  const cond = (type: string) => status?.conditions?.find((c) => c.type === type)
  out.push(`Name:          ${metadata.name}`)
  out.push(`Kind:          ${spec.kind}`)
  out.push(`From plan:     ${spec.fromDigest ?? "(none: first install or adoption)"}`)
  out.push(`To plan:       ${spec.toDigest}`)
  out.push(`Requested by:  ${spec.requestedBy ?? "(not recorded)"}`)
  out.push(`Deadline:      ${spec.deadline}`)
  out.push(`Outcome:       ${metadata.labels?.[LABEL_OUTCOME] ?? "(in progress)"}`)
  out.push("", "Conditions:")
  const conds = status?.conditions ?? []
  out.push(
    ...(conds.length > 0
      ? table([["TYPE", "STATUS", "REASON", "MESSAGE"], ...conds.map((c) => [c.type, c.status, c.reason, c.message])])
      : ["  (none reported yet)"]),
  )
  out.push("", "Approval:")
  if (!spec.requiresApproval) out.push("  not required (spec.requiresApproval is false)")
  else if (spec.approval === undefined) out.push(`  none yet${cond("Approved")?.message ? `: ${cond("Approved")!.message}` : ""}`)
  else {
    const a = spec.approval
    out.push(
      `  Approved by: ${a.approvedBy}${a.groups?.length ? ` (groups ${a.groups.join(", ")})` : ""}`,
      `  Reason:      ${a.reason}`,
      `  Approved at: ${a.approvedAt}`,
      `  Expires at:  ${a.expiresAt}`,
    )
  }
  if (spec.revocation) out.push(`  Revoked by:  ${spec.revocation.revokedBy} at ${spec.revocation.revokedAt}: ${spec.revocation.reason}`)
  const pending = status?.approval?.pendingAcknowledgements ?? []
  const acks = spec.acknowledgements ?? []
  if (acks.length > 0 || pending.length > 0) {
    out.push("", "Acknowledgements:")
    for (const a of acks) out.push(`  ${a.step}: by ${a.acknowledgedBy} at ${a.at}${a.reason ? ` (${a.reason})` : ""}`)
    for (const p of pending) out.push(`  ${p}: waiting (kubectl aicr acknowledge ${metadata.name} --step ${p})`)
  }
  out.push(
    "",
    `Steps:${status?.steps ? ` ${status.steps.done}/${status.steps.total} done${status.steps.current ? `, current ${status.steps.current}` : ""}` : ""}`,
  )
  const steps = status?.steps?.items ?? []
  // Before the step executor reports, the steps the planner planned (spec.steps), all pending.
  const planned = (spec.steps ?? []).map((s, i) => ({
    index: i + 1,
    release: s.release,
    namespace: s.namespace,
    action: s.action,
    verdict: s.verdict,
    state: "Pending",
    message: s.from || s.to ? `${s.from ?? "-"} → ${s.to ?? "-"}` : "",
  }))
  const shown = steps.length > 0 ? steps : planned
  out.push(
    ...(shown.length > 0
      ? table([
          ["#", "RELEASE", "NAMESPACE", "ACTION", "VERDICT", "STATE", "MESSAGE"],
          ...shown.map((s) => [String(s.index), s.release, s.namespace, s.action, s.verdict ?? "-", s.state, s.message ?? ""]),
        ])
      : ["  (no steps reported yet)"]),
  )
  out.push("", `Assessment:${d.assessment.configMap ? ` (ConfigMap ${d.assessment.configMap})` : ""}`)
  const v = status?.assessment?.verdicts
  if (v) out.push(`  verdicts: safe ${v.safe}, manual ${v.manual}, blocked ${v.blocked}, unknown ${v.unknown}, unversioned ${v.unversioned}`)
  if (d.assessment.components.length > 0) {
    out.push(
      ...table([
        ["COMPONENT", "FROM", "TO", "JUMP", "VERDICT"],
        ...d.assessment.components.map((c) => [c.name, c.from ?? "-", c.to ?? "-", c.jump ?? "-", c.verdict]),
      ]),
    )
    for (const c of d.assessment.components.filter((x) => x.steps)) for (const s of c.steps!) out.push(`    ${c.name}: ${s}`)
  } else if (d.assessment.note) out.push(`  ${d.assessment.note}`)
  out.push("", "Validation:")
  // The validation gate's two conditions say whether validation can run and what it concluded, with each check.
  for (const type of ["ValidationReady", "Validated"]) {
    const c = status?.conditions?.find((x) => x.type === type)
    if (c) out.push(`  ${type}: ${c.status} ${c.reason}: ${c.message}`)
  }
  const val = status?.validation
  if (val) {
    const checks = val.checks
      ? ` (checks: ${val.checks.passed} passed, ${val.checks.failed} failed, ${val.checks.skipped} skipped, ${val.checks.other} other)`
      : ""
    out.push(
      `  run ${val.runID ?? "-"}: ${val.result ?? "running"}${checks}${val.startedAt ? `, started ${val.startedAt}` : ""}${val.completedAt ? `, completed ${val.completedAt}` : ""}`,
    )
    if (val.evidenceRef) out.push(`  evidence ${val.evidenceRef} (kubectl aicr evidence ${metadata.name})`)
  } else if (!status?.conditions?.some((x) => x.type === "Validated")) out.push("  (not run yet)")
  return out.join("\n") + "\n"
}
