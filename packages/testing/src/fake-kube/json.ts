/** JSON helpers for FakeKube: structural clone, RFC 7386 merge patch, RFC 6902 JSON patch. */
import type { JsonPatchOp } from "@aicr/kube"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }
export type JsonObject = Record<string, unknown>

export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

export const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T))

/** RFC 7386: objects merge recursively, `null` deletes, everything else replaces. */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return clone(patch)
  const out: JsonObject = isObject(target) ? { ...target } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

export class JsonPatchError extends Error {}

const unescape = (s: string) => s.replace(/~1/g, "/").replace(/~0/g, "~")
const tokens = (pointer: string): Array<string> => {
  if (pointer === "") return []
  if (!pointer.startsWith("/")) throw new JsonPatchError(`invalid JSON pointer "${pointer}"`)
  return pointer.slice(1).split("/").map(unescape)
}

const parentOf = (doc: unknown, toks: Array<string>): { parent: unknown; last: string } => {
  let cur = doc
  for (const t of toks.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)]
    else if (isObject(cur)) cur = cur[t]
    else cur = undefined
    if (cur === undefined) throw new JsonPatchError(`path /${toks.join("/")} does not exist`)
  }
  return { parent: cur, last: toks[toks.length - 1]! }
}

const getAt = (doc: unknown, pointer: string): unknown => {
  let cur = doc
  for (const t of tokens(pointer)) {
    cur = Array.isArray(cur) ? cur[Number(t)] : isObject(cur) ? cur[t] : undefined
    if (cur === undefined) throw new JsonPatchError(`path ${pointer} does not exist`)
  }
  return cur
}

/** RFC 6902 on a clone of `doc`. Throws {@link JsonPatchError} (the fake answers 422). */
export const jsonPatch = (doc: unknown, ops: ReadonlyArray<JsonPatchOp>): unknown => {
  let root = clone(doc)
  const remove = (pointer: string): unknown => {
    const { parent, last } = parentOf(root, tokens(pointer))
    if (Array.isArray(parent)) return parent.splice(Number(last), 1)[0]
    if (isObject(parent) && last in parent) {
      const v = parent[last]
      delete parent[last]
      return v
    }
    throw new JsonPatchError(`path ${pointer} does not exist`)
  }
  const add = (pointer: string, value: unknown) => {
    const toks = tokens(pointer)
    if (toks.length === 0) {
      root = clone(value)
      return
    }
    const { parent, last } = parentOf(root, toks)
    if (Array.isArray(parent)) parent.splice(last === "-" ? parent.length : Number(last), 0, clone(value))
    else if (isObject(parent)) parent[last] = clone(value)
    else throw new JsonPatchError(`path ${pointer} has no parent`)
  }
  for (const op of ops) {
    switch (op.op) {
      case "add":
        add(op.path, op.value)
        break
      case "remove":
        remove(op.path)
        break
      case "replace":
        getAt(root, op.path)
        remove(op.path)
        add(op.path, op.value)
        break
      case "move": {
        const v = remove(op.from ?? "")
        add(op.path, v)
        break
      }
      case "copy":
        add(op.path, getAt(root, op.from ?? ""))
        break
      case "test":
        if (JSON.stringify(getAt(root, op.path)) !== JSON.stringify(op.value)) throw new JsonPatchError(`test failed at ${op.path}`)
        break
    }
  }
  return root
}
