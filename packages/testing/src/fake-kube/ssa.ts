/**
 * A small model of server-side apply's field ownership (structured-merge-diff), enough for our rooms:
 * - objects merge field by field; lists are atomic except configured `listType=map` lists (by default
 *   `status.conditions`, keyed by `type`), whose entries are owned one by one;
 * - an apply sets the manager's field set to exactly what it sent; fields it owned before and no longer sends are
 *   removed from the object unless another manager still owns them;
 * - a field owned by another manager with a *different* value is a conflict (HTTP 409 with one
 *   `FieldManagerConflict` cause per field) unless `force`; an equal value just becomes co-owned;
 * - an update (create/replace/patch) takes ownership of the fields it changed away from everyone else.
 * Field paths are spelled as the API server spells them in conflict messages: `.status.conditions[type="A"].status`.
 */
import { clone, isObject, type JsonObject } from "./json"

/** Dotted path (without leading dot) of a list → the key field of its entries. */
export type ListMapKeys = Readonly<Record<string, string>>
export const DEFAULT_LIST_MAP_KEYS: ListMapKeys = { "status.conditions": "type" }

type Seg = { readonly key: string } | { readonly mapKey: string; readonly mapValue: string }
export interface Field {
  readonly segs: ReadonlyArray<Seg>
  readonly value: unknown
  readonly marker: boolean
}
export type FieldSet = Map<string, Field>

const render = (segs: ReadonlyArray<Seg>): string => segs.map((s) => ("key" in s ? `.${s.key}` : `[${s.mapKey}=${JSON.stringify(s.mapValue)}]`)).join("")
const dotted = (segs: ReadonlyArray<Seg>): string =>
  segs
    .filter((s) => "key" in s)
    .map((s) => (s as { key: string }).key)
    .join(".")

export class InvalidApply extends Error {}

/** The leaf fields of `value` (plus one marker per map-list entry). */
export const fieldsOf = (value: unknown, listMapKeys: ListMapKeys, segs: ReadonlyArray<Seg> = [], out: FieldSet = new Map()): FieldSet => {
  const keyField = listMapKeys[dotted(segs)]
  if (keyField !== undefined && Array.isArray(value)) {
    for (const entry of value) {
      if (!isObject(entry) || typeof entry[keyField] !== "string") throw new InvalidApply(`${render(segs)}: every entry needs a string "${keyField}"`)
      const es = [...segs, { mapKey: keyField, mapValue: entry[keyField] as string }]
      const r = render(es)
      if (out.has(r)) throw new InvalidApply(`${r}: duplicate entries with ${keyField}=${JSON.stringify(entry[keyField])}`)
      out.set(r, { segs: es, value: entry[keyField], marker: true })
      fieldsOf(entry, listMapKeys, es, out)
    }
    return out
  }
  if (isObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) if (v !== undefined) fieldsOf(v, listMapKeys, [...segs, { key: k }], out)
    return out
  }
  if (segs.length > 0) out.set(render(segs), { segs, value, marker: false })
  return out
}

export const getAt = (obj: unknown, segs: ReadonlyArray<Seg>): unknown => {
  let cur = obj
  for (const s of segs) {
    if ("key" in s) cur = isObject(cur) ? cur[s.key] : undefined
    else cur = Array.isArray(cur) ? cur.find((e) => isObject(e) && e[s.mapKey] === s.mapValue) : undefined
    if (cur === undefined) return undefined
  }
  return cur
}

/** Remove one field; objects emptied by the removal are pruned (but never the top-level `spec`/`status`/`metadata`). */
export const deleteAt = (obj: JsonObject, segs: ReadonlyArray<Seg>): void => {
  const chain: Array<unknown> = [obj]
  let cur: unknown = obj
  for (const s of segs.slice(0, -1)) {
    cur = getAt(cur, [s])
    if (cur === undefined) return
    chain.push(cur)
  }
  const last = segs[segs.length - 1]!
  if ("key" in last) {
    if (isObject(cur)) delete cur[last.key]
  } else if (Array.isArray(cur)) {
    const i = cur.findIndex((e) => isObject(e) && e[last.mapKey] === last.mapValue)
    if (i >= 0) cur.splice(i, 1)
  }
  for (let i = chain.length - 1; i >= 2; i--) {
    const node = chain[i]
    const seg = segs[i - 1]!
    if (!isObject(node) || Object.keys(node).length > 0 || !("key" in seg)) break
    const parent = chain[i - 1]
    if (isObject(parent)) delete parent[seg.key]
  }
}

/** Merge an applied configuration into a live object: objects field by field, map-lists entry by entry. */
export const mergeApplied = (live: unknown, applied: unknown, listMapKeys: ListMapKeys, path = ""): unknown => {
  const keyField = listMapKeys[path]
  if (keyField !== undefined && Array.isArray(applied)) {
    const out = Array.isArray(live) ? live.map(clone) : []
    for (const entry of applied as ReadonlyArray<JsonObject>) {
      const i = out.findIndex((e) => isObject(e) && e[keyField] === entry[keyField])
      if (i >= 0) out[i] = mergeApplied(out[i], entry, listMapKeys, path)
      else out.push(clone(entry))
    }
    return out
  }
  if (isObject(applied) && isObject(live)) {
    const out: JsonObject = { ...live }
    for (const [k, v] of Object.entries(applied)) if (v !== undefined) out[k] = mergeApplied(live[k], v, listMapKeys, path === "" ? k : `${path}.${k}`)
    return out
  }
  return clone(applied)
}

/** One managedFields entry: (manager, operation, subresource) → owned paths. */
export interface Owner {
  readonly manager: string
  readonly operation: "Apply" | "Update"
  readonly subresource: "" | "status"
  fields: Set<string>
}

export interface Conflict {
  readonly field: string
  readonly managers: ReadonlyArray<string>
}

export const conflictsOf = (live: unknown, applied: FieldSet, owners: ReadonlyArray<Owner>, mine: Owner): Array<Conflict> => {
  const out: Array<Conflict> = []
  for (const [path, f] of applied) {
    if (f.marker) continue
    // Every other entry conflicts, the same manager's `Update` entry too (the API server keeps Apply and Update apart).
    const others = owners.filter((o) => o !== mine && o.fields.has(path)).map((o) => o.manager)
    if (others.length === 0) continue
    if (JSON.stringify(getAt(live, f.segs)) !== JSON.stringify(f.value)) out.push({ field: path, managers: [...new Set(others)] })
  }
  return out
}

/** Leaf paths whose value differs between two versions (added, changed or removed). */
export const changedFields = (before: FieldSet, after: FieldSet): Set<string> => {
  const out = new Set<string>()
  for (const [p, f] of after) if (!before.has(p) || JSON.stringify(before.get(p)!.value) !== JSON.stringify(f.value)) out.add(p)
  for (const p of before.keys()) if (!after.has(p)) out.add(p)
  return out
}
