/**
 * Condition metrics, kube-state-metrics style: each controller exports the status it owns (its contract's
 * `writes[]`: the condition types, and the timestamps and counts of its status keys) of the objects in its informer
 * caches, read at scrape time. No API call and no write: a scrape lists the caches, nothing more. What alerts and
 * dashboards need from the objects' status is then a PromQL expression (charts/aicr-operator, "Alerts").
 *
 * - `aicr_status_condition{kind,name,type,status,reason} 1`: each owned condition as it is now (one series per
 *   object and type; the status and reason are labels, as kube-state-metrics' `*_status_condition`).
 * - `aicr_status_condition_last_transition_time_seconds{kind,name,type,status,reason}`: its `lastTransitionTime`
 *   (Unix seconds): when the status last changed, so "Stalled for 30 minutes" is `time() - … > 1800`.
 * - One gauge per owned status field of {@link STATUS_FIELDS}, labelled `name`: the approval's end
 *   (`status.approval.validUntil`, approval-guard), the registry credentials' expiry and last refresh
 *   (`status.credentials`, ecr-credential-refresher), the rollout's steps and the engine's suspended Applications
 *   (step-executor).
 *
 * `name` is the object's key (its name: both root kinds are cluster-scoped). Every replica exports what its caches
 * hold, leader or standby (the caches warm on standbys too): alerts aggregate with `max by (…)`.
 */
import { ClusterRuntimeKind, keyOf, type KubeObject, type ResourceKind, RuntimeRolloutKind } from "@aicr/api"
import { CONTRACTS, type Contract } from "@aicr/contracts"
import type { Informer } from "@aicr/kube"
import { Gauge, type Registry } from "prom-client"

/** A number in an owned status key, exported as a gauge of its own. */
export interface StatusField {
  readonly kind: ResourceKind
  /** The top-level status key the contract must own for its controller to export the field. */
  readonly statusKey: string
  /** The field inside it. */
  readonly field: string
  /** `time`: an RFC 3339 time, exported as Unix seconds; `count`: a number as is. */
  readonly value: "time" | "count"
  readonly metric: string
  readonly help: string
}

export const STATUS_FIELDS: ReadonlyArray<StatusField> = [
  {
    kind: RuntimeRolloutKind,
    statusKey: "approval",
    field: "validUntil",
    value: "time",
    metric: "aicr_runtimerollout_approval_valid_until_seconds",
    help: "When the rollout's approval stops counting (status.approval.validUntil: the earlier of the approval's expiresAt and spec.deadline), Unix seconds",
  },
  {
    kind: RuntimeRolloutKind,
    statusKey: "steps",
    field: "total",
    value: "count",
    metric: "aicr_runtimerollout_steps",
    help: "The rollout's steps (status.steps.total)",
  },
  {
    kind: RuntimeRolloutKind,
    statusKey: "steps",
    field: "done",
    value: "count",
    metric: "aicr_runtimerollout_steps_done",
    help: "The rollout's steps done (status.steps.done)",
  },
  {
    kind: ClusterRuntimeKind,
    statusKey: "credentials",
    field: "expiresAt",
    value: "time",
    metric: "aicr_clusterruntime_credentials_expires_at_seconds",
    help: "When the registry credentials expire (status.credentials.expiresAt), Unix seconds",
  },
  {
    kind: ClusterRuntimeKind,
    statusKey: "credentials",
    field: "refreshedAt",
    value: "time",
    metric: "aicr_clusterruntime_credentials_refreshed_at_seconds",
    help: "When the registry credentials were last refreshed (status.credentials.refreshedAt), Unix seconds",
  },
  {
    kind: ClusterRuntimeKind,
    statusKey: "engine",
    field: "applications",
    value: "count",
    metric: "aicr_clusterruntime_engine_applications",
    help: "The runtime's Argo CD Applications (status.engine.applications)",
  },
  {
    kind: ClusterRuntimeKind,
    statusKey: "engine",
    field: "suspended",
    value: "count",
    metric: "aicr_clusterruntime_engine_suspended_applications",
    help: "The runtime's Applications with automated sync off for spec.suspendEngine (status.engine.suspended)",
  },
]

interface WireCondition {
  readonly type?: unknown
  readonly status?: unknown
  readonly reason?: unknown
  readonly lastTransitionTime?: unknown
}
type WithStatus = KubeObject & { readonly status?: Record<string, unknown> & { readonly conditions?: ReadonlyArray<WireCondition> } }

const sameKind = (a: ResourceKind, b: ResourceKind) => a.group === b.group && a.kind === b.kind

/** The objects of `kind` across the informers (a kind watched per namespace has several), once each. */
const objectsOf = (informers: ReadonlyArray<Informer<KubeObject>>, kind: ResourceKind): ReadonlyArray<WithStatus> => {
  const byKey = new Map<string, WithStatus>()
  for (const informer of informers) if (sameKind(informer.kind, kind)) for (const o of informer.list()) byKey.set(keyOf(o), o as WithStatus)
  return [...byKey.values()]
}

const seconds = (v: unknown): number | undefined => {
  if (typeof v !== "string") return undefined
  const ms = Date.parse(v)
  return Number.isNaN(ms) ? undefined : ms / 1000
}

/**
 * Registers the gauges of `contract`'s rooms on `registry`, filled from `informers` at each scrape. A status field
 * is registered only when the contract owns its status key (so no two controllers export the same series).
 */
export const registerConditionMetrics = (registry: Registry, contract: Contract, informers: ReadonlyArray<Informer<KubeObject>>): void => {
  const rooms = contract.writes.map((w) => ({ kind: w.kind, types: new Set(w.conditions.map((c) => c.type)) })).filter((r) => r.types.size > 0)
  const owned = (each: (kind: string, o: WithStatus, c: WireCondition & { type: string; status: string; reason: string }) => void) => {
    for (const room of rooms) {
      for (const o of objectsOf(informers, room.kind)) {
        for (const c of o.status?.conditions ?? []) {
          if (typeof c.type === "string" && room.types.has(c.type) && typeof c.status === "string" && typeof c.reason === "string") {
            each(room.kind.kind, o, c as WireCondition & { type: string; status: string; reason: string })
          }
        }
      }
    }
  }
  const labelNames = ["kind", "name", "type", "status", "reason"] as const
  if (rooms.length > 0) {
    new Gauge({
      name: "aicr_status_condition",
      help: "A condition this controller owns, as it is now (value 1; status and reason as labels)",
      labelNames,
      registers: [registry],
      collect() {
        this.reset()
        owned((kind, o, c) => this.set({ kind, name: keyOf(o), type: c.type, status: c.status, reason: c.reason }, 1))
      },
    })
    new Gauge({
      name: "aicr_status_condition_last_transition_time_seconds",
      help: "When a condition this controller owns last changed status (lastTransitionTime), Unix seconds",
      labelNames,
      registers: [registry],
      collect() {
        this.reset()
        owned((kind, o, c) => {
          const t = seconds(c.lastTransitionTime)
          if (t !== undefined) this.set({ kind, name: keyOf(o), type: c.type, status: c.status, reason: c.reason }, t)
        })
      },
    })
  }
  for (const f of STATUS_FIELDS) {
    if (!contract.writes.some((w) => sameKind(w.kind, f.kind) && w.statusKeys.includes(f.statusKey))) continue
    new Gauge({
      name: f.metric,
      help: f.help,
      labelNames: ["name"] as const,
      registers: [registry],
      collect() {
        this.reset()
        for (const o of objectsOf(informers, f.kind)) {
          const raw = (o.status?.[f.statusKey] as Record<string, unknown> | undefined)?.[f.field]
          const v = f.value === "time" ? seconds(raw) : typeof raw === "number" ? raw : undefined
          if (v !== undefined) this.set({ name: keyOf(o) }, v)
        }
      },
    })
  }
}

/** {@link registerConditionMetrics} for the controller named `controller`; nothing for a name without a contract. */
export const conditionMetricsOf = (registry: Registry, controller: string, informers: ReadonlyArray<Informer<KubeObject>>): void => {
  const contract = CONTRACTS.find((c) => c.controller === controller)
  if (contract !== undefined) registerConditionMetrics(registry, contract, informers)
}
