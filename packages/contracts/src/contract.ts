/**
 * A controller's contract: the one root kind it reconciles, what it watches and reads, and its room: the condition
 * types and status keys it writes on each object (design/style.md §B.4). Plain data built from `@aicr/api`, so the
 * workspace tests can prove the rooms are disjoint and every input has a writer.
 *
 * @example
 * const guard = Contract.make({
 *   controller: "approval-guard", fieldManager: "aicr-approval-guard", reconciles: RuntimeRolloutKind,
 *   watches: [Watch.self(RuntimeRolloutKind)], reads: { conditions: [], kinds: [Core.ConfigMap] },
 *   writes: [{ kind: RuntimeRolloutKind, conditions: [Approved], statusKeys: ["approval"] }], creates: [],
 * })
 */
import type { AnyConditionDef } from "@aicr/conditions"
import { kindKey, type ResourceKind, type Room } from "@aicr/api"

/** The seven controllers (architecture.md §2). */
export const CONTROLLERS = ["resolver", "registry-mirror", "planner", "step-executor", "approval-guard", "validation-gate", "ecr-credential-refresher"] as const
export type Controller = (typeof CONTROLLERS)[number]

/**
 * How an event on a watched kind maps to root keys:
 * - `self`: the root object's own events;
 * - `singleton`: every event maps to the ClusterRuntime named `cluster`;
 * - `rollouts-of-runtime`: a ClusterRuntime event maps to every RuntimeRollout whose spec.runtimeUID is its UID;
 * - `rollout-label`: the object's `operator.aicr.run/rollout` label names the rollout;
 * - `open-rollouts`: an event maps to every RuntimeRollout without an outcome label (e.g. who may approve changed).
 */
export type WatchMapping = "self" | "singleton" | "rollouts-of-runtime" | "rollout-label" | "open-rollouts"

export interface Watch {
  readonly kind: ResourceKind
  readonly mapping: WatchMapping
  /** Label selector that scopes the informer (keeps caches small, architecture.md §7). */
  readonly selector?: string
  readonly why: string
}

export const Watch = {
  self: (kind: ResourceKind): Watch => ({ kind, mapping: "self", why: "the root object: spec and the conditions it reads" }),
  mapped: (kind: ResourceKind, mapping: Exclude<WatchMapping, "self">, why: string, selector?: string): Watch =>
    selector === undefined ? { kind, mapping, why } : { kind, mapping, why, selector },
} as const

/** One object's slice this controller writes: its room there, plus any metadata it owns. */
export interface WriteEntry {
  readonly kind: ResourceKind
  /** The complete set re-applied on every pass (omission deletes). */
  readonly conditions: ReadonlyArray<AnyConditionDef>
  /** Top-level `status` keys. */
  readonly statusKeys: ReadonlyArray<string>
  readonly labels?: ReadonlyArray<string>
  readonly finalizers?: ReadonlyArray<string>
}

/** A kind whose objects this controller creates, updates and deletes (it owns them whole). */
export interface CreateEntry {
  readonly kind: ResourceKind
  readonly why: string
}

export interface Contract {
  readonly controller: Controller
  /** Server-side-apply field manager and user agent: `aicr-<controller>`. */
  readonly fieldManager: string
  /** Exactly one root kind: the work queue carries its keys. */
  readonly reconciles: ResourceKind
  readonly watches: ReadonlyArray<Watch>
  readonly reads: { readonly conditions: ReadonlyArray<AnyConditionDef>; readonly kinds: ReadonlyArray<ResourceKind> }
  readonly writes: ReadonlyArray<WriteEntry>
  readonly creates: ReadonlyArray<CreateEntry>
}

const make = (spec: Contract): Contract => {
  const where = `Contract ${spec.controller}`
  if (spec.fieldManager !== `aicr-${spec.controller}`) throw new Error(`${where}: field manager must be aicr-${spec.controller}`)
  if (!spec.watches.some((w) => w.mapping === "self" && kindKey(w.kind) === kindKey(spec.reconciles))) {
    throw new Error(`${where}: must watch its root kind ${spec.reconciles.kind}`)
  }
  const kinds = spec.writes.map((w) => kindKey(w.kind))
  if (new Set(kinds).size !== kinds.length) throw new Error(`${where}: one write entry per kind`)
  for (const w of spec.writes) {
    const types = w.conditions.map((c) => c.type)
    if (new Set(types).size !== types.length) throw new Error(`${where}: a condition is listed twice on ${w.kind.kind}`)
    if (w.statusKeys.includes("conditions")) throw new Error(`${where}: conditions are listed as definitions, not as a status key`)
  }
  return spec
}

export const Contract = { make } as const

/** A write entry as the `Room` that `packages/kube` enforces on status applies. */
export const toRoom = (contract: Contract, entry: WriteEntry): Room => ({
  controller: contract.controller,
  fieldManager: contract.fieldManager,
  kind: entry.kind,
  conditions: entry.conditions.map((c) => c.type),
  statusKeys: entry.statusKeys,
})

/** Every room of a contract, one per object kind it writes. */
export const roomsOf = (contract: Contract): ReadonlyArray<Room> => contract.writes.map((w) => toRoom(contract, w))

/** The contract's room on `kind`; throws if it writes nothing there (a bug in the caller). */
export const roomOn = (contract: Contract, kind: ResourceKind): Room => {
  const entry = contract.writes.find((w) => kindKey(w.kind) === kindKey(kind))
  if (entry === undefined) throw new Error(`${contract.controller} writes no status on ${kind.kind}`)
  return toRoom(contract, entry)
}
