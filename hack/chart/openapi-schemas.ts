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
  if (o["properties"] !== undefined && o["additionalProperties"] === undefined && o["x-kubernetes-preserve-unknown-fields"] !== true)
    o["additionalProperties"] = false
  // OpenAPI's nullable is not JSON Schema: allow null explicitly where the API server does.
  if (o["nullable"] === true && typeof o["type"] === "string") o["type"] = [o["type"], "null"]
  return o
}

/** The response body as JSON (the OpenAPI endpoints may not say application/json). */
const jsonOf = (body: unknown): Json => (typeof body === "string" ? (JSON.parse(body) as Json) : (body as Json))

export const schemaLocation = (dir: string) => `${dir}/{{ .ResourceKind }}_{{ .Group }}_{{ .ResourceAPIVersion }}.json`

const fileOf = (g: { group: string; version: string; kind: string }) => `${g.kind.toLowerCase()}_${g.group === "" ? g.version : g.group}_${g.version}.json`

/** Writes one schema per kind the API server serves into `dir`; returns the file names. */
export const extractSchemas = async (info: KubeTarget, dir: string): Promise<string[]> => {
  await mkdir(dir, { recursive: true })
  const index = await kubeRequest(info, { method: "GET", path: "/openapi/v3" })
  if (index.status !== 200) throw new Error(`GET /openapi/v3: ${index.status}`)
  const paths = jsonOf(index.body)["paths"] as Record<string, unknown>
  const written: string[] = []
  for (const path of Object.keys(paths)) {
    if (!/^(api\/v1|apis\/[^/]+\/[^/]+)$/u.test(path)) continue
    // By path, not by the hashed URL the index gives: a CRD installed a moment ago changes the hash (301).
    const doc = await kubeRequest(info, { method: "GET", path: `/openapi/v3/${path}` })
    if (doc.status !== 200) throw new Error(`GET /openapi/v3/${path}: ${doc.status}`)
    const components = strict(jsonOf(doc.body)["components"]) as { schemas: Record<string, Json> }
    for (const schema of Object.values(components.schemas)) {
      const gvks = (schema["x-kubernetes-group-version-kind"] ?? []) as Array<{ group: string; version: string; kind: string }>
      // A schema shared by several group-versions (DeleteOptions and the like) is not a kind of its own here.
      if (gvks.length !== 1) continue
      const gvk = gvks[0]!
      const here = path === "api/v1" ? gvk.group === "" && gvk.version === "v1" : path === `apis/${gvk.group}/${gvk.version}`
      if (!here) continue
      await writeFile(join(dir, fileOf(gvk)), JSON.stringify({ ...schema, components }))
      written.push(fileOf(gvk))
    }
  }
  return written
}

/**
 * `extractSchemas` once the API server publishes every kind in `want` (`<kind>_<group>_<version>.json` names): a
 * CRD's schema reaches the OpenAPI document a moment after the CRD is Established.
 */
export const extractSchemasOf = async (
  info: KubeTarget,
  dir: string,
  want: ReadonlyArray<{ group: string; version: string; kind: string }>,
): Promise<string[]> => {
  const deadline = Date.now() + 60_000
  for (;;) {
    const written = await extractSchemas(info, dir)
    const missing = want.map(fileOf).filter((f) => !written.includes(f))
    if (missing.length === 0) return written
    if (Date.now() > deadline) throw new Error(`the API server's OpenAPI has no schema for ${missing.join(", ")}`)
    await new Promise((r) => setTimeout(r, 1000))
  }
}
