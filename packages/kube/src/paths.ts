/** REST paths for a `ResourceKind` (core group under `/api`, everything else under `/apis`). Pure. */
import { parseKey, type ObjectKey, type ResourceKind } from "@aicr/api"

const prefix = (k: ResourceKind): string => (k.group === "" ? `/api/${k.version}` : `/apis/${k.group}/${k.version}`)

/** The collection path; a namespaced kind without a namespace lists across all namespaces. */
export const collectionPath = (k: ResourceKind, namespace?: string): string =>
  k.namespaced && namespace ? `${prefix(k)}/namespaces/${encodeURIComponent(namespace)}/${k.plural}` : `${prefix(k)}/${k.plural}`

/** The path of one object (and optionally a subresource such as `status`). */
export const objectPath = (k: ResourceKind, key: ObjectKey, subresource?: string): string => {
  const { namespace, name } = parseKey(key)
  if (k.namespaced && !namespace) throw new Error(`${k.kind} is namespaced: key "${key}" needs a namespace`)
  if (!k.namespaced && namespace) throw new Error(`${k.kind} is cluster-scoped: key "${key}" must not carry a namespace`)
  const base = `${collectionPath(k, namespace)}/${encodeURIComponent(name)}`
  return subresource ? `${base}/${subresource}` : base
}

export type Query = Readonly<Record<string, string | number | boolean | undefined>>

export const withQuery = (path: string, query?: Query): string => {
  if (query === undefined) return path
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v))
  const s = params.toString()
  return s === "" ? path : `${path}?${s}`
}
