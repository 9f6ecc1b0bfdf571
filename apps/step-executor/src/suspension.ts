/**
 * suspension: pure. suspendEngine: every operator Application gets `automated.enabled: false`; clearing it removes
 * the field. It does not hold on an Application while a sync operation is requested or running on it (Argo CD
 * finishes it), nor on one whose suspension patch the API server refused: `EngineSuspensionRefused` (ADR
 * 20261202-engine-suspension-refused). Suspension is written even while Argo CD does not respond: it must hold when
 * Argo CD comes back.
 */
import { type Application, automatedSyncEnabled, suspended, suspensionBlockedBy } from "@aicr/argocd"
import type { Decision } from "./decide"
import type { Observed } from "./gather"

/** An operator Application on which suspendEngine does not hold, and why. */
export interface Refusal {
  readonly name: string
  readonly why: string
}

export interface Suspension {
  readonly suspend: ReadonlyArray<{ readonly name: string; readonly suspend: boolean }>
  /** While suspendEngine is set: the Applications with a sync operation in flight (Argo CD finishes it). */
  readonly busy: ReadonlyArray<Refusal>
  readonly suspendedCount: number
}

/** The suspension patches to write on the live operator Applications, and where suspension cannot hold yet. */
export const decideSuspension = (o: Observed, live: ReadonlyArray<Application>): Suspension => {
  const reachable = o.engine._tag === "Ready" || o.engine._tag === "EngineNotResponding"
  const suspend = !reachable
    ? []
    : o.runtime.spec.suspendEngine
      ? live.filter(automatedSyncEnabled).map((a) => ({ name: a.metadata.name, suspend: true }))
      : live.filter(suspended).map((a) => ({ name: a.metadata.name, suspend: false }))
  const busy =
    reachable && o.runtime.spec.suspendEngine
      ? live.flatMap((a) => {
          const why = suspensionBlockedBy(a)
          return why === undefined ? [] : [{ name: a.metadata.name, why }]
        })
      : []
  const suspendedCount = o.runtime.spec.suspendEngine ? live.length - busy.length : 0
  return { suspend, busy, suspendedCount }
}

const MAX_REFUSAL = 1000

export interface Reported {
  readonly decision: Decision
  /** What `EngineSuspensionRefused` says; undefined when suspendEngine holds on every operator Application. */
  readonly refusal: string | undefined
}

/**
 * The decision as reported once this pass's suspension patches ran: the Applications with a sync operation in flight
 * (`d.busy`) and those whose patch the API server refused (`refused`) are not suspended, and a rollout held by the
 * suspension says that the suspension does not hold (`EngineSuspensionRefused`) instead of `EngineSuspended`.
 */
export const reported = (o: Observed, d: Decision, refused: ReadonlyArray<Refusal>): Reported => {
  const all = o.runtime.spec.suspendEngine ? [...refused, ...d.busy.filter((b) => !refused.some((r) => r.name === b.name))] : []
  if (all.length === 0) return { decision: d, refusal: undefined }
  const text = `spec.suspendEngine is set but ${all.length} of ${d.ours} Applications are not suspended: ${all.map((r) => `${o.settings.engineNamespace}/${r.name}: ${r.why}`).join("; ")}`
  const refusal = text.length > MAX_REFUSAL ? `${text.slice(0, MAX_REFUSAL - 1)}…` : text
  const suspendedCount = Math.max(0, d.suspendedCount - (all.length - d.busy.length))
  const r = d.rollout
  const rollout =
    r !== undefined && r.progress._tag === "Blocked" && r.progress.reason === "EngineSuspended"
      ? { ...r, progress: { _tag: "Blocked" as const, reason: "EngineSuspensionRefused" as const, message: `${r.progress.message}; ${refusal}` } }
      : r
  return { decision: { ...d, suspendedCount, rollout }, refusal }
}
