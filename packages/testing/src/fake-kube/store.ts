/**
 * FakeKube's state: objects per kind with their SSA owners, one global resourceVersion counter (like etcd's
 * revision), generation bumps on spec changes only, a bounded event history, and the open watches.
 */
import { apiVersionOf, keyOf, kindKey, type KubeObject, type ObjectKey, type ResourceKind } from "@aicr/api"
import type { WatchEvent } from "@aicr/kube"
import { clone, isObject, type JsonObject } from "./json"
import { labelMatcher, fieldMatcher } from "./selectors"
import { DEFAULT_LIST_MAP_KEYS, fieldsOf, type FieldSet, type ListMapKeys, type Owner } from "./ssa"

export interface Stored {
  obj: JsonObject
  owners: Array<Owner>
}

export interface HistoryEntry {
  readonly rv: number
  readonly kindKey: string
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  readonly obj: JsonObject
  readonly prev: JsonObject | undefined
}

export type WatchItem =
  | { readonly _tag: "event"; readonly event: WatchEvent<KubeObject> }
  | { readonly _tag: "end" }
  | { readonly _tag: "error"; readonly tag: "Gone" | "Unavailable" }

export interface Watcher {
  readonly kindKey: string
  readonly matches: (o: KubeObject) => boolean
  readonly push: (item: WatchItem) => void
}

/** Kinds without a status subresource: a main-resource write keeps their `status` as sent. */
const NO_STATUS = new Set(["ConfigMap.core", "Secret.core", "ServiceAccount.core", "Event.events.k8s.io", "Lease.coordination.k8s.io", "Event.core"])

export interface StoreOptions {
  /** `listType=map` lists per kind (`kindKey` → dotted path → key field); default `status.conditions` by `type` everywhere. */
  readonly listMapKeys?: Readonly<Record<string, ListMapKeys>> | undefined
  /** Whether `status` is a subresource of a kind. Default: every kind except ConfigMap, Secret, ServiceAccount, Event, Lease. */
  readonly statusSubresource?: ((kind: ResourceKind) => boolean) | undefined
  /** How many events are kept for watches that resume from an older resourceVersion (older → 410 Gone). Default 10 000. */
  readonly history?: number | undefined
}

export const makeStore = (options: StoreOptions = {}) => {
  const objects = new Map<string, Map<ObjectKey, Stored>>()
  const history: Array<HistoryEntry> = []
  const watchers = new Set<Watcher>()
  const maxHistory = options.history ?? 10_000
  let rv = 0
  let uids = 0
  let oldest = 1

  const table = (kind: ResourceKind) => {
    const k = kindKey(kind)
    let t = objects.get(k)
    if (t === undefined) objects.set(k, (t = new Map()))
    return t
  }
  const hasStatusSubresource = (kind: ResourceKind) => options.statusSubresource?.(kind) ?? !NO_STATUS.has(kindKey(kind))
  const listMapKeysOf = (kind: ResourceKind): ListMapKeys => options.listMapKeys?.[kindKey(kind)] ?? DEFAULT_LIST_MAP_KEYS

  /** The part of an object whose fields a write to `subresource` can own. */
  const scoped = (kind: ResourceKind, obj: JsonObject, subresource: "" | "status"): JsonObject => {
    if (subresource === "status") return obj["status"] === undefined ? {} : { status: obj["status"] }
    const { apiVersion: _a, kind: _k, metadata, status, ...rest } = obj
    const m = (metadata ?? {}) as JsonObject
    const meta: JsonObject = {}
    for (const f of ["labels", "annotations", "finalizers", "ownerReferences"]) if (m[f] !== undefined) meta[f] = m[f]
    return { ...(Object.keys(meta).length ? { metadata: meta } : {}), ...rest, ...(hasStatusSubresource(kind) || status === undefined ? {} : { status }) }
  }
  const fieldsIn = (kind: ResourceKind, obj: JsonObject, subresource: "" | "status"): FieldSet => fieldsOf(scoped(kind, obj, subresource), listMapKeysOf(kind))

  /** Everything but metadata and status: a change here bumps `metadata.generation`. */
  const specOf = (obj: JsonObject) => {
    const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj
    return JSON.stringify(rest)
  }

  const get = (kind: ResourceKind, key: ObjectKey): Stored | undefined => table(kind).get(key)

  const publish = (kind: ResourceKind, type: HistoryEntry["type"], obj: JsonObject, prev: JsonObject | undefined) => {
    const entry: HistoryEntry = { rv, kindKey: kindKey(kind), type, obj: clone(obj), prev: prev && clone(prev) }
    history.push(entry)
    while (history.length > maxHistory) oldest = history.shift()!.rv + 1
    for (const w of watchers) deliver(w, entry)
  }

  const deliver = (w: Watcher, e: HistoryEntry) => {
    if (e.kindKey !== w.kindKey) return
    const now = w.matches(e.obj as unknown as KubeObject)
    const before = e.prev !== undefined && w.matches(e.prev as unknown as KubeObject)
    let type: "ADDED" | "MODIFIED" | "DELETED" | undefined = e.type
    if (e.type === "MODIFIED") type = now && before ? "MODIFIED" : now ? "ADDED" : before ? "DELETED" : undefined
    else if (!now) type = undefined
    if (type !== undefined) w.push({ _tag: "event", event: { type, object: clone(e.obj) as unknown as KubeObject } })
  }

  /**
   * Store `next` (or remove the object when `next` is undefined), bumping resourceVersion and, on a spec change,
   * generation. Returns the stored object. An unchanged object and unchanged owners make no new version.
   */
  const commit = (kind: ResourceKind, key: ObjectKey, next: JsonObject | undefined, owners: Array<Owner>, now: string): JsonObject | undefined => {
    const t = table(kind)
    const prev = t.get(key)
    if (next === undefined) {
      if (prev === undefined) return undefined
      t.delete(key)
      rv++
      const gone = { ...prev.obj, metadata: { ...(prev.obj["metadata"] as JsonObject), resourceVersion: String(rv) } }
      publish(kind, "DELETED", gone, prev.obj)
      return gone
    }
    const meta = { ...((next["metadata"] ?? {}) as JsonObject) }
    const body: JsonObject = { ...next, apiVersion: apiVersionOf(kind), kind: kind.kind, metadata: meta }
    if (prev !== undefined) {
      const pm = prev.obj["metadata"] as JsonObject
      for (const f of ["uid", "creationTimestamp", "generation", "resourceVersion", "deletionTimestamp"]) meta[f] = pm[f]
      if ((next["metadata"] as JsonObject | undefined)?.["deletionTimestamp"] !== undefined)
        meta["deletionTimestamp"] = (next["metadata"] as JsonObject)["deletionTimestamp"]
      const ownersSame = JSON.stringify(ownerView(prev.owners)) === JSON.stringify(ownerView(owners))
      if (JSON.stringify(prev.obj) === JSON.stringify(body) && ownersSame) return prev.obj
      if (specOf(prev.obj) !== specOf(body) || (meta["deletionTimestamp"] !== undefined && pm["deletionTimestamp"] === undefined)) {
        meta["generation"] = ((pm["generation"] as number | undefined) ?? 1) + 1
      }
    } else {
      meta["uid"] = `00000000-0000-4000-8000-${String(++uids).padStart(12, "0")}`
      meta["creationTimestamp"] = now
      meta["generation"] = 1
    }
    rv++
    meta["resourceVersion"] = String(rv)
    const finalizers = meta["finalizers"] as ReadonlyArray<string> | undefined
    if (meta["deletionTimestamp"] !== undefined && (finalizers === undefined || finalizers.length === 0)) {
      t.delete(key)
      publish(kind, "DELETED", body, prev?.obj)
      return body
    }
    t.set(key, { obj: body, owners })
    publish(kind, prev === undefined ? "ADDED" : "MODIFIED", body, prev?.obj)
    return body
  }

  const list = (kind: ResourceKind, opts: { namespace?: string | undefined; labelSelector?: string | undefined; fieldSelector?: string | undefined }) => {
    const labels = labelMatcher(opts.labelSelector)
    const fields = fieldMatcher(opts.fieldSelector)
    const items = [...table(kind).values()]
      .map((s) => s.obj as unknown as KubeObject)
      .filter((o) => (!kind.namespaced || !opts.namespace || o.metadata.namespace === opts.namespace) && labels(o) && fields(o))
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)))
    return { items: items.map(clone), resourceVersion: String(rv) }
  }

  /** Open a watch; returns undefined when `fromRv` is older than the retained history (the caller answers 410). */
  const watch = (
    kind: ResourceKind,
    opts: { namespace?: string | undefined; labelSelector?: string | undefined; fieldSelector?: string | undefined },
    fromRv: number,
    push: (i: WatchItem) => void,
  ) => {
    if (fromRv + 1 < oldest) return undefined
    const labels = labelMatcher(opts.labelSelector)
    const fields = fieldMatcher(opts.fieldSelector)
    const w: Watcher = {
      kindKey: kindKey(kind),
      matches: (o) => (!kind.namespaced || !opts.namespace || o.metadata.namespace === opts.namespace) && labels(o) && fields(o),
      push,
    }
    for (const e of history) if (e.rv > fromRv) deliver(w, e)
    watchers.add(w)
    return () => void watchers.delete(w)
  }

  return {
    get,
    list,
    watch,
    commit,
    fieldsIn,
    scoped,
    hasStatusSubresource,
    listMapKeysOf,
    resourceVersion: () => rv,
    watchers: () => [...watchers],
    isObject,
  }
}

export type Store = ReturnType<typeof makeStore>

export const ownerView = (owners: ReadonlyArray<Owner>) =>
  owners.filter((o) => o.fields.size > 0).map((o) => ({ manager: o.manager, operation: o.operation, subresource: o.subresource, fields: [...o.fields].sort() }))
