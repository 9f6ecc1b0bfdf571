/**
 * Helm HTTP repositories: `index.yaml` in the shape `helm repo index` writes (apiVersion v1, entries by chart name,
 * newest first, `digest` = sha256 hex of the archive, relative `urls`), with a fixed `generated`/`created` time so the
 * index is as deterministic as the charts. A real package's entry is the one its folder's index holds.
 */
import { stringify } from "yaml"
import type { PackagedChart } from "./chart"

export const FIXED_CREATED = "2026-01-01T00:00:00Z"

/** The `index.yaml` of one repository holding `charts`. */
export const indexYaml = (charts: ReadonlyArray<PackagedChart & { readonly entry?: Readonly<Record<string, unknown>> }>): string => {
  const entries: Record<string, unknown[]> = {}
  for (const c of [...charts].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.version < b.version ? 1 : -1))) {
    // A real package keeps the entry `helm repo index` wrote for it (its own Chart.yaml metadata), with a relative URL.
    if (c.entry !== undefined) {
      ;(entries[c.name] ??= []).push({ ...c.entry, urls: [c.file] })
      continue
    }
    ;(entries[c.name] ??= []).push({
      apiVersion: "v2",
      name: c.name,
      version: c.version,
      appVersion: c.version.replace(/^v/u, ""),
      type: "application",
      created: FIXED_CREATED,
      digest: c.digest.replace(/^sha256:/u, ""),
      urls: [c.file],
    })
  }
  return stringify({ apiVersion: "v1", entries, generated: FIXED_CREATED })
}

/**
 * The path under which the local HTTP upstream serves a public repository URL: its host and path, so
 * `https://charts.jetstack.io` → `/charts.jetstack.io` and `https://helm.ngc.nvidia.com/nvidia` →
 * `/helm.ngc.nvidia.com/nvidia`. Different repositories never share a path.
 */
export const repoPath = (source: string): string => {
  const u = new URL(source)
  return `/${u.host}${u.pathname.replace(/\/+$/u, "")}`
}

/** The repository part of an `oci://host/path` source, as a repository path under another registry. */
export const ociRepoPath = (source: string): string => source.replace(/^oci:\/\//u, "").replace(/\/+$/u, "")
