/**
 * FakeKube: an in-memory `Kube` for component tests (design/style.md §B.7). It implements every verb of `KubeShape`,
 * keeps resourceVersion/generation like the API server, models server-side-apply ownership of `listType=map`
 * conditions per field manager (see `ssa.ts`), serves watches from a bounded history, and records every write
 * (verb, manager, path, body, result) so tests assert on *the writes a reconcile made*.
 *
 * The ownership scenarios in `packages/kube/test/ssa.scenarios.ts` run against both FakeKube and a real
 * kube-apiserver, which keeps this model honest.
 */
import { keyOf, type KubeObject, type ObjectKey, type ResourceKind } from "@aicr/api"
import {
  Kube,
  KubeError,
  kubeErrorFromStatus,
  makeApplyStatus,
  objectPath,
  collectionPath,
  type KubeErrorTag,
  type KubeShape,
  type WatchEvent,
} from "@aicr/kube"
import { toConditionTime } from "@aicr/conditions"
import { Clock, Effect, Layer, Option, Queue } from "effect"
import { clone, isObject, jsonPatch, JsonPatchError, mergePatch, type JsonObject } from "./json"
import { changedFields, conflictsOf, deleteAt, InvalidApply, mergeApplied, type Owner } from "./ssa"
import { makeStore, ownerView, type StoreOptions, type WatchItem } from "./store"

export type WriteVerb = "create" | "replace" | "apply" | "patch" | "delete"

export interface RecordedWrite {
  readonly verb: WriteVerb
  /** The Kind, e.g. `RuntimeRollout`. */
  readonly kind: string
  readonly key: ObjectKey
  readonly subresource?: "status" | undefined
  readonly manager?: string | undefined
  readonly force?: boolean | undefined
  /** The REST path the live client would have used. */
  readonly path: string
  readonly body: unknown
  /** `ok`, or the `KubeError` reason the write failed with. */
  readonly result: "ok" | KubeErrorTag
}

export interface FakeKubeOptions extends StoreOptions {
  /** Manager recorded for non-apply writes without a `fieldManager`. Default `fake-kube`. */
  readonly defaultManager?: string | undefined
}

type Verb = WriteVerb | "get" | "list" | "watch"

const STATUS_CODES: Record<KubeErrorTag, [number, string]> = {
  NotFound: [404, "NotFound"],
  Conflict: [409, "Conflict"],
  FieldManagerConflict: [409, "Conflict"],
  Forbidden: [403, "Forbidden"],
  Unauthorized: [401, "Unauthorized"],
  Invalid: [422, "Invalid"],
  AlreadyExists: [409, "AlreadyExists"],
  Gone: [410, "Expired"],
  Unavailable: [503, "ServiceUnavailable"],
  Timeout: [504, "Timeout"],
  TooManyRequests: [429, "TooManyRequests"],
}

const statusError = (method: string, path: string, tag: KubeErrorTag, message: string, causes?: ReadonlyArray<Record<string, string>>): KubeError => {
  const [code, reason] = STATUS_CODES[tag]
  return kubeErrorFromStatus(method, path, code, {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    code,
    reason,
    message,
    details: causes ? { causes } : undefined,
  })
}

export const makeFakeKube = (options: FakeKubeOptions = {}) => {
  const store = makeStore(options)
  const writes: Array<RecordedWrite> = []
  const requests: Record<Verb, number> = { get: 0, list: 0, watch: 0, create: 0, replace: 0, apply: 0, patch: 0, delete: 0 }
  const injected: Array<{ verb?: Verb | undefined; kind?: string | undefined; tag: KubeErrorTag; times: number }> = []
  const defaultManager = options.defaultManager ?? "fake-kube"

  const nowIso = Clock.currentTimeMillis.pipe(Effect.map(toConditionTime))

  const injectedFailure = (verb: Verb, kind: ResourceKind, method: string, path: string): KubeError | undefined => {
    const i = injected.findIndex((f) => (f.verb === undefined || f.verb === verb) && (f.kind === undefined || f.kind === kind.kind))
    if (i < 0) return undefined
    const f = injected[i]!
    if (--f.times <= 0) injected.splice(i, 1)
    return statusError(
      method,
      path,
      f.tag,
      `injected ${f.tag}`,
      f.tag === "FieldManagerConflict" ? [{ reason: "FieldManagerConflict", message: "injected", field: ".status" }] : undefined,
    )
  }

  /** Run a write: count it, maybe fail it by injection, record it with its outcome. */
  const write = <A>(
    w: Omit<RecordedWrite, "result" | "path">,
    method: string,
    path: string,
    kind: ResourceKind,
    body: (now: string) => A | KubeError,
  ): Effect.Effect<A, KubeError> =>
    Effect.gen(function* () {
      requests[w.verb]++
      const now = yield* nowIso
      let result: A | KubeError
      try {
        result = injectedFailure(w.verb, kind, method, path) ?? body(now)
      } catch (e) {
        result = e instanceof KubeError ? e : statusError(method, path, "Invalid", e instanceof Error ? e.message : String(e))
      }
      writes.push({ ...w, path, body: clone(w.body), result: result instanceof KubeError ? result.reason._tag : "ok" })
      if (result instanceof KubeError) return yield* Effect.fail(result)
      return result
    })

  const ownersFor = (owners: ReadonlyArray<Owner>, manager: string, operation: Owner["operation"], subresource: Owner["subresource"]) => {
    const copy = owners.map((o) => ({ ...o, fields: new Set(o.fields) }))
    let mine = copy.find((o) => o.manager === manager && o.operation === operation && o.subresource === subresource)
    if (mine === undefined) copy.push((mine = { manager, operation, subresource, fields: new Set() }))
    return { all: copy, mine }
  }

  /** An update (create/replace/patch) takes the fields it changed away from every other owner. */
  const updateOwners = (
    kind: ResourceKind,
    before: JsonObject | undefined,
    after: JsonObject,
    owners: ReadonlyArray<Owner>,
    manager: string,
    sub: "" | "status",
  ) => {
    const changed = changedFields(before ? store.fieldsIn(kind, before, sub) : new Map(), store.fieldsIn(kind, after, sub))
    const afterFields = store.fieldsIn(kind, after, sub)
    const { all, mine } = ownersFor(owners, manager, "Update", sub)
    for (const o of all) if (o !== mine) for (const p of changed) o.fields.delete(p)
    for (const p of changed)
      if (afterFields.has(p)) mine.fields.add(p)
      else mine.fields.delete(p)
    return all
  }

  const keyFor = (kind: ResourceKind, meta: { name?: string; namespace?: string } | undefined, method: string): ObjectKey => {
    if (!meta?.name) throw statusError(method, collectionPath(kind), "Invalid", "metadata.name: Required value")
    if (kind.namespaced && !meta.namespace) throw statusError(method, collectionPath(kind), "Invalid", "metadata.namespace: Required value")
    return keyOf({ metadata: { name: meta.name, namespace: kind.namespaced ? meta.namespace : undefined } })
  }

  const notFound = (kind: ResourceKind, key: ObjectKey, method: string, path: string) =>
    statusError(method, path, "NotFound", `${kind.plural}.${kind.group || "core"} "${key.split("/").pop()}" not found`)

  /** Replace the part of `live` a write to `sub` may change with the same part of `next`. */
  const scopedReplace = (kind: ResourceKind, live: JsonObject, next: JsonObject, sub: "" | "status"): JsonObject => {
    if (sub === "status") return { ...live, status: next["status"] }
    const keepStatus = store.hasStatusSubresource(kind)
    const merged: JsonObject = { ...next, metadata: { ...(live["metadata"] as JsonObject), ...pickMeta(next) } }
    if (keepStatus) {
      if (live["status"] === undefined) delete merged["status"]
      else merged["status"] = live["status"]
    }
    return merged
  }
  const pickMeta = (o: JsonObject) => {
    const m = (o["metadata"] ?? {}) as JsonObject
    const out: JsonObject = {}
    for (const f of ["labels", "annotations", "finalizers", "ownerReferences"]) out[f] = m[f]
    return out
  }

  const checkRv = (live: JsonObject, sent: unknown, method: string, path: string) => {
    const rv = (isObject(sent) && isObject(sent["metadata"]) ? sent["metadata"]["resourceVersion"] : undefined) as string | undefined
    if (rv !== undefined && rv !== "" && rv !== (live["metadata"] as JsonObject)["resourceVersion"]) {
      throw statusError(
        method,
        path,
        "Conflict",
        "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again",
      )
    }
  }

  const get: KubeShape["get"] = <T extends KubeObject>(kind: ResourceKind, key: ObjectKey) =>
    Effect.suspend(() => {
      requests.get++
      const failure = injectedFailure("get", kind, "GET", objectPath(kind, key))
      if (failure) return Effect.fail(failure)
      const s = store.get(kind, key)
      return Effect.succeed(s === undefined ? Option.none<T>() : Option.some(clone(s.obj) as unknown as T))
    })

  const list: KubeShape["list"] = <T extends KubeObject>(kind: ResourceKind, opts: Parameters<KubeShape["list"]>[1] = {}) =>
    Effect.suspend(() => {
      requests.list++
      const failure = injectedFailure("list", kind, "GET", collectionPath(kind, opts.namespace))
      if (failure) return Effect.fail(failure)
      const listed = store.list(kind, opts) as unknown as { items: ReadonlyArray<T>; resourceVersion: string }
      const transform = opts.transform
      return Effect.succeed(transform === undefined ? listed : { ...listed, items: listed.items.map((i) => transform(i) as T) })
    })

  const watch: KubeShape["watch"] = <T extends KubeObject>(
    kind: ResourceKind,
    opts: Parameters<KubeShape["watch"]>[1],
    onEvent: (e: WatchEvent<T>) => Effect.Effect<void>,
  ) =>
    Effect.gen(function* () {
      requests.watch++
      const path = `${collectionPath(kind, opts.namespace)}?watch=1`
      const failure = injectedFailure("watch", kind, "GET", path)
      if (failure) return yield* Effect.fail(failure)
      const items = yield* Queue.unbounded<WatchItem>()
      const close = store.watch(kind, opts, Number(opts.resourceVersion || "0"), (i) => void Queue.offerUnsafe(items, i))
      if (close === undefined) return yield* Effect.fail(statusError("GET", path, "Gone", `too old resource version: ${opts.resourceVersion}`))
      const loop: Effect.Effect<void, KubeError> = Effect.gen(function* () {
        for (;;) {
          const item = yield* Queue.take(items)
          if (item._tag === "end") return
          if (item._tag === "error") return yield* Effect.fail(statusError("GET", path, item.tag, `watch ${item.tag}`))
          const event = item.event as WatchEvent<T>
          const transform = opts.transform
          yield* onEvent(transform === undefined || event.type === "BOOKMARK" ? event : { ...event, object: transform(event.object) as T })
        }
      })
      return yield* loop.pipe(Effect.ensuring(Effect.sync(close)))
    })

  const create: KubeShape["create"] = (kind, obj, opts) => {
    const manager = opts?.fieldManager ?? defaultManager
    return write(
      { verb: "create", kind: kind.kind, key: keyOf(obj), manager, body: obj },
      "POST",
      collectionPath(kind, obj.metadata.namespace),
      kind,
      (now) => {
        const key = keyFor(kind, obj.metadata, "POST")
        if (store.get(kind, key) !== undefined)
          throw statusError(
            "POST",
            collectionPath(kind, obj.metadata.namespace),
            "AlreadyExists",
            `${kind.plural}.${kind.group || "core"} "${obj.metadata.name}" already exists`,
          )
        const next = clone(obj) as unknown as JsonObject
        if (store.hasStatusSubresource(kind)) delete next["status"]
        if (opts?.dryRun) return next as unknown as typeof obj
        const owners = updateOwners(kind, undefined, next, [], manager, "")
        return store.commit(kind, key, next, owners, now) as unknown as typeof obj
      },
    )
  }

  const replace: KubeShape["replace"] = (kind, obj, opts) => {
    const manager = opts?.fieldManager ?? defaultManager
    const sub = opts?.subresource ?? ""
    const key = keyOf(obj)
    const path = objectPath(kind, key, opts?.subresource)
    return write({ verb: "replace", kind: kind.kind, key, subresource: opts?.subresource, manager, body: obj }, "PUT", path, kind, (now) => {
      const live = store.get(kind, key)
      if (live === undefined) throw notFound(kind, key, "PUT", path)
      checkRv(live.obj, obj, "PUT", path)
      const next = scopedReplace(kind, live.obj, clone(obj) as unknown as JsonObject, sub)
      if (opts?.dryRun) return next as unknown as typeof obj
      return store.commit(kind, key, next, updateOwners(kind, live.obj, next, live.owners, manager, sub), now) as unknown as typeof obj
    })
  }

  const patch: KubeShape["patch"] = <T extends KubeObject>(
    kind: ResourceKind,
    key: ObjectKey,
    p: Parameters<KubeShape["patch"]>[2],
    opts?: Parameters<KubeShape["patch"]>[3],
  ) => {
    const manager = opts?.fieldManager ?? defaultManager
    const sub = opts?.subresource ?? ""
    const path = objectPath(kind, key, opts?.subresource)
    return write(
      { verb: "patch", kind: kind.kind, key, subresource: opts?.subresource, manager, body: p.type === "merge" ? p.body : p.ops },
      "PATCH",
      path,
      kind,
      (now) => {
        const live = store.get(kind, key)
        if (live === undefined) throw notFound(kind, key, "PATCH", path)
        let patched: JsonObject
        try {
          patched = (p.type === "merge" ? mergePatch(live.obj, p.body) : jsonPatch(live.obj, p.ops)) as JsonObject
        } catch (e) {
          throw statusError("PATCH", path, "Invalid", e instanceof JsonPatchError ? e.message : String(e))
        }
        if (p.type === "merge") checkRv(live.obj, p.body, "PATCH", path)
        const next = scopedReplace(kind, live.obj, patched, sub)
        if (opts?.dryRun) return next as unknown as T
        return store.commit(kind, key, next, updateOwners(kind, live.obj, next, live.owners, manager, sub), now) as unknown as T
      },
    )
  }

  const apply: KubeShape["apply"] = <T extends KubeObject>(kind: ResourceKind, body: unknown, opts: Parameters<KubeShape["apply"]>[2]) => {
    const b = clone(body) as JsonObject
    const meta = (b["metadata"] ?? {}) as { name?: string; namespace?: string }
    const sub = opts.subresource ?? ""
    const key = meta.name ? keyOf({ metadata: { name: meta.name, namespace: kind.namespaced ? meta.namespace : undefined } }) : ""
    const path = key ? objectPath(kind, key, opts.subresource) : collectionPath(kind)
    return write(
      { verb: "apply", kind: kind.kind, key, subresource: opts.subresource, manager: opts.fieldManager, force: opts.force ?? false, body },
      "PATCH",
      path,
      kind,
      (now) => {
        keyFor(kind, meta, "PATCH")
        const live = store.get(kind, key)
        if (live === undefined && sub === "status") throw notFound(kind, key, "PATCH", path)
        // As on the API server: a resourceVersion in the applied object is a precondition, ignored when the apply creates.
        if (live !== undefined) checkRv(live.obj, b, "PATCH", path)
        const liveObj: JsonObject = live?.obj ?? {
          apiVersion: b["apiVersion"],
          kind: b["kind"],
          metadata: { name: meta.name, ...(kind.namespaced ? { namespace: meta.namespace } : {}) },
        }
        const applied = store.scoped(kind, b, sub)
        let appliedFields
        try {
          appliedFields = store.fieldsIn(kind, b, sub)
        } catch (e) {
          throw statusError("PATCH", path, "Invalid", e instanceof InvalidApply ? e.message : String(e))
        }
        const { all, mine } = ownersFor(live?.owners ?? [], opts.fieldManager, "Apply", sub)
        const conflicts = conflictsOf(liveObj, appliedFields, all, mine)
        if (conflicts.length > 0 && !opts.force) {
          const detail = conflicts.map((c) => `conflict with ${c.managers.map((m) => JSON.stringify(m)).join(", ")}: ${c.field}`)
          throw statusError(
            "PATCH",
            path,
            "FieldManagerConflict",
            `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? "s" : ""}: ${detail.join("\n")}`,
            conflicts.map((c) => ({
              reason: "FieldManagerConflict",
              message: `conflict with ${c.managers.map((m) => JSON.stringify(m)).join(", ")}`,
              field: c.field,
            })),
          )
        }
        if (opts.force) for (const c of conflicts) for (const o of all) if (o !== mine) o.fields.delete(c.field)
        // Fields this manager owned and no longer sends are removed, unless someone else still owns them.
        const next = clone(liveObj)
        const current = store.fieldsIn(kind, liveObj, sub)
        const removed = [...mine.fields].filter((p) => !appliedFields.has(p) && !all.some((o) => o !== mine && o.fields.has(p)))
        for (const p of removed) {
          const f = current.get(p)
          if (f !== undefined) deleteAt(next, f.segs)
        }
        const merged = mergeApplied(next, applied, store.listMapKeysOf(kind)) as JsonObject
        mine.fields = new Set(appliedFields.keys())
        if (opts.dryRun) return merged as unknown as T
        return store.commit(kind, key, merged, all, now) as unknown as T
      },
    )
  }

  const del: KubeShape["delete"] = (kind, key, opts) => {
    const path = objectPath(kind, key)
    return write({ verb: "delete", kind: kind.kind, key, body: opts }, "DELETE", path, kind, (now) => {
      const live = store.get(kind, key)
      if (live === undefined) throw notFound(kind, key, "DELETE", path)
      const m = live.obj["metadata"] as JsonObject
      const pre = opts?.preconditions
      if ((pre?.uid !== undefined && pre.uid !== m["uid"]) || (pre?.resourceVersion !== undefined && pre.resourceVersion !== m["resourceVersion"])) {
        throw statusError("DELETE", path, "Conflict", "Precondition failed: UID or ResourceVersion in precondition does not match")
      }
      const finalizers = (m["finalizers"] as ReadonlyArray<string> | undefined) ?? []
      if (finalizers.length > 0) {
        if (m["deletionTimestamp"] === undefined) store.commit(kind, key, { ...live.obj, metadata: { ...m, deletionTimestamp: now } }, live.owners, now)
        return
      }
      store.commit(kind, key, undefined, live.owners, now)
    })
  }

  const kube: KubeShape = { get, list, watch, create, replace, apply, applyStatus: makeApplyStatus(apply), patch, delete: del }

  return {
    kube,
    layer: Layer.succeed(Kube)(kube),
    /** Every write attempted, in order (failed ones too, with `result` set to the failure reason). */
    writes: writes as ReadonlyArray<RecordedWrite>,
    /** Writes to one kind (and optionally one object). */
    writesTo: (kind: ResourceKind, key?: ObjectKey) => writes.filter((w) => w.kind === kind.kind && (key === undefined || w.key === key)),
    clearWrites: () => void writes.splice(0),
    /** Calls per verb, reads included. */
    requests: requests as Readonly<Record<Verb, number>>,
    /** Put objects in place without recording a write (fixtures). Returns them as stored. */
    seed: <T extends KubeObject>(kind: ResourceKind, ...objs: ReadonlyArray<T>): ReadonlyArray<T> =>
      objs.map((o) => {
        const next = clone(o) as unknown as JsonObject
        const key = keyOf(o)
        const live = store.get(kind, key)
        return store.commit(
          kind,
          key,
          live ? { ...next, metadata: { ...(next["metadata"] as JsonObject) } } : next,
          live?.owners ?? updateOwners(kind, undefined, next, [], defaultManager, ""),
          "2026-01-01T00:00:00Z",
        ) as unknown as T
      }),
    /** The stored object (a copy), or undefined. */
    peek: <T extends KubeObject = KubeObject>(kind: ResourceKind, key: ObjectKey): T | undefined => {
      const s = store.get(kind, key)
      return s === undefined ? undefined : (clone(s.obj) as unknown as T)
    },
    /** Field ownership per (manager, operation, subresource), fields spelled as in API server conflict messages. */
    owners: (kind: ResourceKind, key: ObjectKey) => ownerView(store.get(kind, key)?.owners ?? []),
    /** The current resourceVersion (global, like etcd's revision). */
    resourceVersion: () => String(store.resourceVersion()),
    /** End every open watch cleanly (as a server-side timeout does). */
    closeWatches: () => store.watchers().forEach((w) => w.push({ _tag: "end" })),
    /** Break every open watch with an error (`Gone` → relist; `Unavailable` → backoff). */
    failWatches: (tag: "Gone" | "Unavailable" = "Unavailable") => store.watchers().forEach((w) => w.push({ _tag: "error", tag })),
    /** Send a BOOKMARK at the current resourceVersion to every open watch. */
    bookmark: () => store.watchers().forEach((w) => w.push({ _tag: "event", event: { type: "BOOKMARK", resourceVersion: String(store.resourceVersion()) } })),
    openWatches: () => store.watchers().length,
    /** Make the next `times` calls matching `verb`/`kind` fail with `tag` (e.g. `Unavailable` to test backoff). */
    failNext: (
      tag: KubeErrorTag,
      match: { readonly verb?: Verb | undefined; readonly kind?: ResourceKind | undefined; readonly times?: number | undefined } = {},
    ) => void injected.push({ verb: match.verb, kind: match.kind?.kind, tag, times: match.times ?? 1 }),
  }
}

export type FakeKube = ReturnType<typeof makeFakeKube>
