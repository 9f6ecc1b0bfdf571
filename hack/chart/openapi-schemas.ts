/**
 * JSON schemas for `kubeconform -strict`, taken from a running API server's OpenAPI v3 (`/openapi/v3`), built-in
 * kinds and every installed CRD alike, so the chart is checked against the Kubernetes it targets and nothing is
 * downloaded. One file per kind, `<kind>_<group>_<version>.json` (the core group is `v1`), which kubeconform finds
 * with `-schema-location '<dir>/{{ .ResourceKind }}_{{ .Group }}_{{ .ResourceAPIVersion }}.json'`.
 *
 * Each file is standalone: the kind's schema at the root with the group-version's `components` beside it, so the
 * OpenAPI `$ref`s resolve in the file. As in the `-strict` schema sets kubeconform documents, every object with
 * `properties` refuses unknown fields unless the API server keeps them (`x-kubernetes-preserve-unknown-fields`).
 */
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { kubeRequest, type KubeTarget } from "@aicr/testing/harness"

type Json = { [k: string]: unknown }

/** An OpenAPI schema as kubeconform's `-strict` schema sets have it: unknown fields refused, `nullable` as JSON Schema. */
export const strict = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(strict)
  if (node === null || typeof node !== "object") return node
  const o = Object.fromEntries(Object.entries(node as Json).map(([k, v]) => [k, k === "enum" || k === "default" || k === "example" ? v : strict(v)])) as Json
  if (o["properties"] !== undefined && o["additionalProperties"] === undefined && o["x-kubernetes-preserve-unknown-fields"] !== true) o["additionalProperties"] = false
  // OpenAPI's nullable is not JSON Schema: allow null explicitly where the API server does.
  if (o["nullable"] === true && typeof o["type"] === "string") o["type"] = [o["type"], "null"]
  return o
}

export const schemaLocation = (dir: string) => `${dir}/{{ .ResourceKind }}_{{ .Group }}_{{ .ResourceAPIVersion }}.json`

const fileOf = (g: { group: string; version: string; kind: string }) =>
  `${g.kind.toLowerCase()}_${g.group === "" ? g.version : g.group}_${g.version}.json`

/** Writes one schema per kind the API server serves into `dir`; returns how many. */
export const extractSchemas = async (info: KubeTarget, dir: string): Promise<number> => {
  await mkdir(dir, { recursive: true })
  const index = await kubeRequest(info, { method: "GET", path: "/openapi/v3" })
  if (index.status !== 200) throw new Error(`GET /openapi/v3: ${index.status}`)
  const paths = index.body.paths as Record<string, { serverRelativeURL: string }>
  let n = 0
  for (const [path, ref] of Object.entries(paths)) {
    if (!/^(api\/v1|apis\/[^/]+\/[^/]+)$/u.test(path)) continue
    const doc = await kubeRequest(info, { method: "GET", path: ref.serverRelativeURL })
    if (doc.status !== 200) throw new Error(`GET ${ref.serverRelativeURL}: ${doc.status}`)
    const components = strict(doc.body.components) as { schemas: Record<string, Json> }
    for (const schema of Object.values(components.schemas)) {
      const gvks = (schema["x-kubernetes-group-version-kind"] ?? []) as Array<{ group: string; version: string; kind: string }>
      // A schema shared by several group-versions (DeleteOptions and the like) is not a kind of its own here.
      if (gvks.length !== 1) continue
      const gvk = gvks[0]!
      const here = path === "api/v1" ? gvk.group === "" && gvk.version === "v1" : path === `apis/${gvk.group}/${gvk.version}`
      if (!here) continue
      await writeFile(join(dir, fileOf(gvk)), JSON.stringify({ ...schema, components }))
      n++
    }
  }
  return n
}
