/**
 * Turns the JSON Schema that `Schema.toJsonSchemaDocument` emits into a Kubernetes *structural* OpenAPI v3 schema:
 * `$ref`s inlined, `allOf` check groups flattened, `additionalProperties` only for maps, `propertyNames` dropped
 * (map keys are checked by CEL), safe-integer bounds dropped, keys in a readable fixed order.
 * `unbounded` lists every string, list or map without a bound, so the generator can refuse it (operator.md §3.1.8).
 */
type Json = Record<string, unknown>

const SAFE = Number.MAX_SAFE_INTEGER
const KEY_ORDER = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "required",
  "properties",
  "items",
  "additionalProperties",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-validations",
]
const DROPPED = new Set(["$schema", "propertyNames", "title"])

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const mergeInto = (target: Json, part: Json, path: string): void => {
  for (const [k, v] of Object.entries(part)) {
    if (!(k in target)) target[k] = v
    else if (k === "x-kubernetes-validations") target[k] = [...(target[k] as unknown[]), ...(v as unknown[])]
    else if (k === "description")
      target[k] = v // the latest annotation wins
    else if (JSON.stringify(target[k]) !== JSON.stringify(v)) throw new Error(`${path}: conflicting ${k} in allOf`)
  }
}

export const toStructural = (node: unknown, definitions: Json = {}, path = "$"): Json => {
  if (!isObject(node)) throw new Error(`${path}: schema node is not an object`)
  let n: Json = { ...node }
  if (typeof n["$ref"] === "string") {
    const name = (n["$ref"] as string).replace(/^#\/(\$defs|definitions)\//u, "")
    const target = definitions[name]
    if (!isObject(target)) throw new Error(`${path}: unresolved $ref ${String(n["$ref"])}`)
    const { $ref: _ref, ...rest } = n
    n = { ...target, ...rest }
  }
  if (Array.isArray(n["allOf"])) {
    const parts = n["allOf"] as unknown[]
    delete n["allOf"]
    for (const p of parts) mergeInto(n, toStructural({ ...(p as Json), type: n["type"] }, definitions, `${path}.allOf`), path)
  }
  for (const k of ["anyOf", "oneOf", "not", "patternProperties"]) {
    if (k in n) throw new Error(`${path}: ${k} has no structural equivalent; model the field differently`)
  }
  for (const k of DROPPED) delete n[k]
  if (n["type"] === "integer") {
    if (n["maximum"] === SAFE) delete n["maximum"]
    if (n["minimum"] === -SAFE) delete n["minimum"]
  }
  if (isObject(n["properties"])) {
    delete n["additionalProperties"]
    n["properties"] = Object.fromEntries(Object.entries(n["properties"] as Json).map(([k, v]) => [k, toStructural(v, definitions, `${path}.${k}`)]))
    if (Array.isArray(n["required"]) && (n["required"] as unknown[]).length === 0) delete n["required"]
  } else if (n["additionalProperties"] === true || n["additionalProperties"] === false) {
    throw new Error(`${path}: an object needs properties or a typed additionalProperties`)
  } else if (isObject(n["additionalProperties"])) {
    n["additionalProperties"] = toStructural(n["additionalProperties"], definitions, `${path}.*`)
  }
  if (isObject(n["items"])) n["items"] = toStructural(n["items"], definitions, `${path}[]`)
  if (n["type"] === undefined && n["x-kubernetes-preserve-unknown-fields"] !== true) throw new Error(`${path}: no type`)
  const ordered: Json = {}
  for (const k of KEY_ORDER) if (k in n) ordered[k] = n[k]
  for (const k of Object.keys(n).sort()) if (!(k in ordered)) ordered[k] = n[k]
  return ordered
}

/** Paths of strings without maxLength or enum, lists without maxItems and maps without maxProperties. */
export const unbounded = (node: Json, path = "$"): string[] => {
  const out: string[] = []
  if (node["type"] === "string" && node["maxLength"] === undefined && node["enum"] === undefined) out.push(`${path}: string without maxLength`)
  if (node["type"] === "array" && node["maxItems"] === undefined) out.push(`${path}: list without maxItems`)
  if (isObject(node["additionalProperties"]) && node["maxProperties"] === undefined) out.push(`${path}: map without maxProperties`)
  if (isObject(node["properties"])) for (const [k, v] of Object.entries(node["properties"] as Json)) out.push(...unbounded(v as Json, `${path}.${k}`))
  if (isObject(node["items"])) out.push(...unbounded(node["items"], `${path}[]`))
  if (isObject(node["additionalProperties"])) out.push(...unbounded(node["additionalProperties"], `${path}.*`))
  return out
}
