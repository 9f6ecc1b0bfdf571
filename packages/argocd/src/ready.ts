/**
 * Readiness at a revision: is an Application synced and healthy at the revision just written? Argo CD v3.4 reports
 * `Healthy` for the old revision for a while after a change, sets `sync.revision` to the new target before anything
 * is deployed, finishes the operation while `sync.status` still says OutOfSync, and runs follow-up syncs while the app
 * already looks Synced and Healthy; the Application CRD has no status subresource, so `metadata.generation` moves on
 * every status write. Only the full predicate below never advanced early on the recorded status sequences
 * (../shared/spec/research/argocd-local.md §7–8; fixtures in this package's tests).
 */
import { isDeepStrictEqual } from "node:util"
import type { Application } from "./application"

/** A JSON value with every null-valued object key removed (recursively). */
export const withoutNulls = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(withoutNulls)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== null)
            .map(([k, x]) => [k, withoutNulls(x)]),
        )
      : v

/**
 * Whether Argo CD's last comparison was against the current `spec.source` and `spec.destination`. Argo CD drops
 * null-valued keys of the source (`valuesObject: {storageSpec: {emptyDir: null}}` comes back without `emptyDir`, seen
 * with the real kube-prometheus-stack values), so both sides are compared without them. The destination matters for a
 * Move: the chart and values stay the same, so until Argo CD compares the new namespace the old namespace's Synced
 * and Healthy would pass for ready (measured on Argo CD v3.4.2, the step-executor's int test).
 */
export const comparedCurrentSource = (app: Application): boolean =>
  isDeepStrictEqual(withoutNulls(app.status?.sync?.comparedTo?.source), withoutNulls(app.spec?.source)) &&
  isDeepStrictEqual(withoutNulls(app.status?.sync?.comparedTo?.destination), withoutNulls(app.spec?.destination))

/**
 * Why app is not ready at revision (the targetRevision written: the chart's manifest digest, which Argo CD reports back
 * as `sync.revision`; a chart version for Helm-repository sources); empty when it is:
 * the last comparison is against the current spec.source, Synced, `sync.revision` is the target, Healthy, no operation
 * requested or running, the last operation (if any) Succeeded at the target, and no `*Error` condition.
 */
export const notReadyAt = (app: Application, revision: string): string[] => {
  const st = app.status ?? {}
  const op = st.operationState
  return [
    ...(comparedCurrentSource(app) ? [] : ["Argo CD has not compared the written source and destination yet"]),
    ...(st.sync?.status === "Synced" ? [] : [`sync status ${st.sync?.status ?? "unknown"}`]),
    ...(st.sync?.revision === revision ? [] : [`sync revision ${st.sync?.revision ?? "unknown"}, want ${revision}`]),
    ...(st.health?.status === "Healthy" ? [] : [`health ${st.health?.status ?? "unknown"}${st.health?.message ? ` (${st.health.message})` : ""}`]),
    ...(app.operation === undefined ? [] : ["a sync operation is requested or running"]),
    ...(op === undefined || (op.phase === "Succeeded" && op.syncResult?.revision === revision)
      ? []
      : [
          `last operation ${op.phase ?? "unknown"} at ${op.syncResult?.revision ?? op.operation?.sync?.revision ?? "unknown"}${op.message ? `: ${op.message}` : ""}`,
        ]),
    ...(st.conditions ?? []).filter((c) => c.type.endsWith("Error")).map((c) => `${c.type}: ${c.message ?? ""}`),
  ]
}

export const isReadyAt = (app: Application, revision: string): boolean => notReadyAt(app, revision).length === 0

/**
 * Argo CD's own message when the sync of revision failed (operation phase Failed or Error for that revision, nothing
 * retrying); undefined otherwise. With automated sync Argo CD does not retry a failed revision on its own.
 */
export const syncFailureAt = (app: Application, revision: string): string | undefined => {
  if (app.operation !== undefined) return undefined
  const op = app.status?.operationState
  if (op === undefined || (op.phase !== "Failed" && op.phase !== "Error")) return undefined
  const at = op.operation?.sync?.revision ?? op.syncResult?.revision
  if (at !== undefined && at !== revision) return undefined
  if (!comparedCurrentSource(app)) return undefined
  return op.message ?? `sync ${op.phase}`
}

/**
 * An AICR readiness gate (1.x bundles, `NNN-<component>-readiness`: a local chart whose Job runs the gate) that
 * failed at revision: the operation that applied revision succeeded and the gate's Job is Degraded (Argo CD reports a
 * Job Degraded once it failed, e.g. past its backoffLimit; Healthy only once it completed, so readiness at the
 * revision is the gate's pass). Argo CD's message for the Job; undefined otherwise.
 */
export const gateFailureAt = (app: Application, revision: string): string | undefined => {
  const st = app.status
  const op = st?.operationState
  if (app.operation !== undefined || !comparedCurrentSource(app) || st?.sync?.revision !== revision) return undefined
  if (op === undefined || op.phase !== "Succeeded" || op.syncResult?.revision !== revision) return undefined
  const job = (st.resources ?? []).find((r) => r.group === "batch" && r.kind === "Job" && r.health?.status === "Degraded")
  return job === undefined ? undefined : `Job ${job.namespace ?? ""}/${job.name} failed: ${job.health?.message ?? "Degraded"}`
}
