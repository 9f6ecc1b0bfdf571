/**
 * The adoption record an Application carries (ADR 20261202-re-adoption): the plan release it was written for and the
 * names of every release of that plan, and a digest of the spec as written. From these alone a plan lost with the
 * operator's namespace is rebuilt, and an Application edited by hand since it was written is told apart
 * (operator.md §4.15: "rebuilds the plan from what is running, confirms nothing was edited by hand").
 */
import { canonicalJson, digestOf, type PlanRelease } from "@aicr/api"
import { ANNOTATION_CHART_DIGEST, ANNOTATION_VALUES_DIGEST, type Application, type ApplicationSpec } from "./application"
import { withoutNulls } from "./ready"

/** [I] `{release, plan}`: the plan release (canonical JSON) and the names of all releases of its plan. */
export const ANNOTATION_RELEASE_RECORD = "operator.aicr.run/plan-release"
/** [I] sha256 of the spec the operator wrote (`writtenSpecOf`). */
export const ANNOTATION_SPEC_DIGEST = "operator.aicr.run/spec-digest"

export interface ReleaseRecord {
  readonly release: PlanRelease
  /** Every release name of the plan that wrote the Application, sorted. */
  readonly plan: ReadonlyArray<string>
}

export const encodeRecord = (r: ReleaseRecord): string => canonicalJson({ release: r.release, plan: [...r.plan].sort() })

/**
 * The part of a spec the operator owns, as Argo CD keeps it: null-valued keys dropped (Argo CD and the API server
 * may drop them) and `syncPolicy.automated.enabled` left out (suspension toggles it; it is no edit).
 */
export const writtenSpecOf = (spec: ApplicationSpec | undefined): unknown => {
  if (spec === undefined) return null
  const { enabled: _enabled, ...automated } = spec.syncPolicy?.automated ?? {}
  const syncPolicy = spec.syncPolicy === undefined ? undefined : { ...spec.syncPolicy, ...(spec.syncPolicy.automated !== undefined ? { automated } : {}) }
  return withoutNulls({
    project: spec.project,
    source: spec.source,
    destination: spec.destination,
    ...(syncPolicy !== undefined ? { syncPolicy } : {}),
    ignoreDifferences: spec.ignoreDifferences ?? [],
  })
}

export const specDigest = (spec: ApplicationSpec | undefined): string => digestOf(writtenSpecOf(spec))

export type RecordRead = { readonly ok: true; readonly record: ReleaseRecord } | { readonly ok: false; readonly why: string }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The record of an Application, shape-checked (the plan built from it is verified as a whole by `readPlan`). */
export const readRecord = (app: Application): RecordRead => {
  const text = app.metadata.annotations?.[ANNOTATION_RELEASE_RECORD]
  if (text === undefined) return { ok: false, why: `it has no ${ANNOTATION_RELEASE_RECORD} annotation` }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return { ok: false, why: `its ${ANNOTATION_RELEASE_RECORD} annotation is not JSON` }
  }
  if (!isRecord(raw) || !isRecord(raw["release"]) || !Array.isArray(raw["plan"]) || !raw["plan"].every((n) => typeof n === "string")) {
    return { ok: false, why: `its ${ANNOTATION_RELEASE_RECORD} annotation is not {release, plan}` }
  }
  const release = raw["release"]
  if (typeof release["name"] !== "string" || typeof release["namespace"] !== "string" || !isRecord(release["chart"]) || !isRecord(release["values"])) {
    return { ok: false, why: `its ${ANNOTATION_RELEASE_RECORD} annotation names no release, namespace, chart and values` }
  }
  return { ok: true, record: { release: release as unknown as PlanRelease, plan: raw["plan"] as string[] } }
}

export type Unchanged =
  | { readonly ok: true; readonly record: ReleaseRecord }
  | { readonly ok: false; readonly edit: "record"; readonly why: string }
  | { readonly ok: false; readonly edit: "spec" | "markers"; readonly why: string; readonly record: ReleaseRecord }

/**
 * Whether an Application is still what the operator wrote: its record reads, its spec matches the spec digest, and
 * its chart and values markers match the record. Re-adoption rebuilds a plan only from such Applications, and an
 * Adopt step takes over only such an Application.
 */
export const unchangedSinceWritten = (app: Application): Unchanged => {
  const read = readRecord(app)
  if (!read.ok) return { ok: false, edit: "record", why: read.why }
  const annotations = app.metadata.annotations ?? {}
  const { record } = read
  if (annotations[ANNOTATION_SPEC_DIGEST] !== specDigest(app.spec))
    return { ok: false, edit: "spec", why: "its spec was changed after the operator wrote it", record }
  if (annotations[ANNOTATION_CHART_DIGEST] !== record.release.chart.digest || annotations[ANNOTATION_VALUES_DIGEST] !== record.release.values.digest) {
    return { ok: false, edit: "markers", why: "its chart or values digest annotation was changed", record }
  }
  return { ok: true, record }
}
