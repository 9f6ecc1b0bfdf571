// Reads Kubernetes manifests from a YAML file or a directory of *.yaml / *.yml files (sorted by name).
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { parseAllDocuments } from "yaml"
import { HarnessError } from "./proc"

const flatten = (doc: unknown): unknown[] => {
  if (doc === null || doc === undefined) return []
  const o = doc as { kind?: string; items?: unknown[] }
  if (typeof o.kind === "string" && o.kind.endsWith("List") && Array.isArray(o.items)) return o.items.flatMap(flatten)
  return [doc]
}

export const parseManifests = (text: string, source = "<string>"): unknown[] =>
  parseAllDocuments(text).flatMap((d) => {
    if (d.errors.length) throw new HarnessError(`${source}: ${d.errors.map((e) => e.message).join("; ")}`)
    return flatten(d.toJS({ maxAliasCount: -1 }))
  })

export const loadManifests = (path: string): unknown[] => {
  if (statSync(path).isDirectory()) {
    return readdirSync(path)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .flatMap((f) => parseManifests(readFileSync(join(path, f), "utf8"), join(path, f)))
  }
  return parseManifests(readFileSync(path, "utf8"), path)
}
