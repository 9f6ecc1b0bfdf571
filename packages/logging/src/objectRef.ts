/**
 * Kind-keyed object references for log lines (CAPI logging guide, design/style.md §B.6):
 * `{ RuntimeRollout: "cluster-3f2a9c1-1" }` for a cluster-scoped object, `{ ConfigMap: "aicr-system/plan" }` for a
 * namespaced one. Kinds are UpperCamel keys, so a reader can grep for `"RuntimeRollout":`.
 */

/** Anything that names a kind: a kind string or a `ResourceKind`-like value. */
export type KindLike = string | { readonly kind: string }

/** Anything that names an object: a key (`ns/name` or `name`) or an object with metadata. */
export type ObjectLike = string | { readonly metadata: { readonly name: string; readonly namespace?: string | undefined } }

/**
 * @example
 * objectRef("ConfigMap", { metadata: { name: "plan", namespace: "aicr-system" } }) // { ConfigMap: "aicr-system/plan" }
 */
export const objectRef = (kind: KindLike, obj: ObjectLike): Record<string, string> => {
  const k = typeof kind === "string" ? kind : kind.kind
  const ref = typeof obj === "string" ? obj : obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name
  return { [k]: ref }
}
