/**
 * report: pure. Both owned conditions and both status rooms on every pass (server-side apply drops what a write
 * leaves out), for every outcome: waiting, resolved, up to date, terminal and transient failures, internal errors.
 * An internal failure sets both conditions Unknown/InternalError and keeps the rooms as they were.
 */
import { type ClusterRuntime, Discovered, Resolved } from "@aicr/api"
import { type ConditionIntent, materialize, shortDigest, toConditionTime } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import type { ResolverSettings } from "./config"
import type { Discovery } from "./discovery"
import { defectOutcome, type FailureOutcome } from "./errors"
import type { DiscoveryStatus, Observed, ResolutionStatus } from "./gather"
import type { ObservedCriteria } from "./inputs"

/** A snapshot taken in this pass: recorded in `status.discovery`. */
export interface SnapshotRecord {
  readonly criteria: ObservedCriteria
  readonly digest: string
  /** Epoch milliseconds. */
  readonly takenAt: number
}

/** What the pass learned before it ended: the snapshot it took, and the criteria the snapshot confirms. */
export interface Known {
  readonly snapshot?: SnapshotRecord | undefined
  readonly criteria?: ObservedCriteria | undefined
}

export type Outcome = (
  | { readonly _tag: "Resolved"; readonly resolution: ResolutionStatus }
  /** A snapshot Job runs (or spec.paused holds it): both conditions False, `Discovering` and `Resolving`. */
  | { readonly _tag: "Discovering"; readonly message: string; readonly resolving: string }
  /** A recipe or bundle Job runs (or spec.paused holds a new input): `Resolving`, discovery done. */
  | { readonly _tag: "Resolving"; readonly message: string }
  | FailureOutcome
) & { readonly known: Known }

const groupStatus = (g: Discovery["system"]) => (g === undefined ? undefined : { nodeCount: g.nodeCount, nodes: g.nodes.slice(0, 16) })

/** `status.discovery`: the groups now, and the latest snapshot (this pass's, or the one recorded before). */
export const discoveryStatusOf = (d: Discovery, previous: DiscoveryStatus | undefined, snapshot: SnapshotRecord | undefined): DiscoveryStatus => {
  const sys = groupStatus(d.system)
  const acc = groupStatus(d.accelerated)
  const snap =
    snapshot !== undefined
      ? { criteria: snapshot.criteria, digest: snapshot.digest, takenAt: toConditionTime(snapshot.takenAt) }
      : previous?.snapshot !== undefined
        ? { criteria: previous.criteria ?? {}, digest: previous.snapshot.digest, takenAt: previous.snapshot.takenAt }
        : undefined
  const criteria = snap === undefined ? undefined : Object.fromEntries(Object.entries(snap.criteria).filter(([, v]) => v !== undefined))
  return {
    ...(sys !== undefined ? { system: sys } : {}),
    ...(acc !== undefined ? { accelerated: acc } : {}),
    ...(criteria !== undefined ? { criteria } : {}),
    ...(snap !== undefined ? { snapshot: { digest: snap.digest, takenAt: snap.takenAt } } : {}),
  }
}

export const groupsText = (d: Discovery): string =>
  [
    d.system && `system: ${d.system.nodeCount} node(s)`,
    d.accelerated && `accelerated: ${d.accelerated.nodeCount} node(s)${d.facts.accelerated?.product ? ` of ${d.facts.accelerated.product}` : ""}`,
  ]
    .filter((x) => x)
    .join(", ")

/** The development allowance is never silent: a resolution it let through says so. */
export const resolvedMessage = (r: ResolutionStatus, settings: Pick<ResolverSettings, "gate">): string =>
  `Resolved input ${shortDigest(r.inputDigest ?? "")} with AICR ${r.aicr?.version ?? "?"} into ${r.releases ?? 0} releases${settings.gate._tag === "Allowed" ? `; ${settings.gate.note}` : ""}`

export const discoveredCondition = (o: Observed, outcome: Outcome): ConditionIntent<"Discovered"> => {
  switch (outcome._tag) {
    case "Discovering":
      return Discovered.false("Discovering", outcome.message)
    case "Failed":
      if (outcome.discovered !== undefined) return outcome.discovered
  }
  const accelerator = outcome.known.criteria?.accelerator
  return Discovered.true("NodeGroupsDiscovered", `${groupsText(o.discovery)}${accelerator !== undefined ? `; the snapshot confirms ${accelerator}` : ""}`)
}

export const resolvedCondition = (o: Observed, outcome: Outcome): ConditionIntent<"Resolved"> => {
  switch (outcome._tag) {
    case "Resolved":
      return Resolved.true("InputsResolved", resolvedMessage(outcome.resolution, o.settings))
    case "Discovering":
      return Resolved.false("Resolving", outcome.resolving)
    case "Resolving":
      return Resolved.false("Resolving", outcome.message)
    case "Failed":
      return outcome.resolved
  }
}

/** An internal failure: both conditions Unknown/InternalError, the rooms kept as they were (also before gather ran). */
export const reportInternalError = (runtime: ClusterRuntime, now: number): StatusWrite => {
  const d = defectOutcome(undefined)
  const conditions = materialize([d.discovered!, d.resolved], { existing: runtime.status?.conditions, generation: runtime.metadata.generation, now })
  const s = runtime.status
  return { conditions, ...(s?.discovery !== undefined ? { discovery: s.discovery } : {}), ...(s?.resolution !== undefined ? { resolution: s.resolution } : {}) }
}

/** The complete status write: both conditions, `status.discovery` and `status.resolution` (kept unless a resolution just finished). */
export const report = (o: Observed, outcome: Outcome): StatusWrite => {
  if (outcome._tag === "Failed" && outcome.class === "defect") return reportInternalError(o.runtime, o.now)
  const conditions = materialize([discoveredCondition(o, outcome), resolvedCondition(o, outcome)], {
    existing: o.runtime.status?.conditions,
    generation: o.runtime.metadata.generation,
    now: o.now,
  })
  const resolution = outcome._tag === "Resolved" ? outcome.resolution : o.resolution
  return {
    conditions,
    discovery: discoveryStatusOf(o.discovery, o.previous, outcome.known.snapshot),
    ...(resolution !== undefined ? { resolution } : {}),
  }
}
