/**
 * Pure parsing: the runtime registry prefix (`oci://host[:port]/prefix`), upstream rewrites, and a release's chart
 * source (a Helm HTTP repository + chart + version, or an `oci://` repository) as the mirror copies it.
 */
import { chartTag, isRepository, isTag, parseReference } from "@aicr/oras/reference"

/** `oci://host[:port]/prefix`, split. `prefix` may be empty (content then lives at the registry root). */
export interface RegistryPrefix {
  readonly registry: string
  readonly prefix: string
}

/** Parses the runtime registry prefix; throws `Error` with the reason when it is not `oci://host[/path]`. */
export const parseRegistryPrefix = (value: string): RegistryPrefix => {
  const m = /^oci:\/\/([^/\s]+)(?:\/([^\s]*?))?\/?$/u.exec(value.trim())
  if (m === null) throw new Error(`registry prefix ${JSON.stringify(value)} must be oci://<host>[:port][/<path>]`)
  const registry = m[1]!
  const prefix = m[2] ?? ""
  if (prefix !== "" && !isRepository(prefix))
    throw new Error(`registry prefix path ${JSON.stringify(prefix)} is not a valid repository path (lower-case, / separated)`)
  // Validates the host the way references are validated.
  parseReference(`${registry}/x`)
  return { registry, prefix }
}

/** `host[:port]/prefix/<area>/<name>`: the repository of one artifact in the runtime registry. */
export const repositoryIn = (p: RegistryPrefix, area: "charts" | "wrappers" | "bundles", name: string): string =>
  `${p.registry}/${p.prefix === "" ? "" : `${p.prefix}/`}${area}/${name}`

/** Upstream rewrites: `from` → `to` prefixes of chart sources (air-gapped mirrors, the local upstream). */
export type Rewrites = ReadonlyArray<readonly [from: string, to: string]>

const trimSlash = (s: string) => s.replace(/\/+$/u, "")

/** Parses `from=to` entries (flags or a comma-separated env value). */
export const parseRewrites = (entries: ReadonlyArray<string>): Rewrites =>
  entries
    .flatMap((e) => e.split(","))
    .map((e) => e.trim())
    .filter((e) => e.length > 0)
    .map((e) => {
      const eq = e.indexOf("=")
      if (eq <= 0 || eq === e.length - 1) throw new Error(`upstream rewrite ${JSON.stringify(e)} must be <from>=<to>`)
      return [trimSlash(e.slice(0, eq)), trimSlash(e.slice(eq + 1))] as const
    })

/** Applies the longest rewrite whose `from` is `source` or a path prefix of it (at a `/` boundary). */
export const rewrite = (source: string, rewrites: Rewrites): string => {
  const s = trimSlash(source)
  let best: readonly [string, string] | undefined
  for (const r of rewrites) if ((s === r[0] || s.startsWith(`${r[0]}/`)) && (best === undefined || r[0].length > best[0].length)) best = r
  return best === undefined ? s : best[1] + s.slice(best[0].length)
}

/** Where a chart comes from, after rewrites. */
export type ChartSource =
  | { readonly _tag: "HelmRepo"; readonly repoUrl: string; readonly chart: string; readonly version: string; readonly original: string }
  | { readonly _tag: "Oci"; readonly repository: string; readonly tag: string; readonly chart: string; readonly version: string; readonly original: string }

export type SourceParse = { readonly ok: true; readonly source: ChartSource } | { readonly ok: false; readonly why: string }

/**
 * A recipe component's upstream chart reference (`source`, `chart`, `version` as `aicr recipe` writes them) as a
 * {@link ChartSource}: `https://`/`http://` → Helm HTTP repository (index.yaml), `oci://host/path` → the OCI
 * repository `host/path/<chart>` tagged with the version (`+` → `_`, as Helm pushes it), exactly what deploy.sh
 * would install. Anything else is unsupported, with the reason.
 */
export const parseSource = (
  ref: { readonly source: string; readonly chart?: string | undefined; readonly version?: string | undefined },
  rewrites: Rewrites = [],
): SourceParse => {
  const original = ref.source.trim()
  if (original === "") return { ok: false, why: "it names no chart source" }
  const chart = ref.chart ?? ""
  const version = ref.version ?? ""
  if (chart === "") return { ok: false, why: `its source ${original} names no chart` }
  if (version === "") return { ok: false, why: `its chart ${chart} has no version (a mirror pins exact versions)` }
  const url = rewrite(original, rewrites)
  if (/^https?:\/\//u.test(url)) {
    try {
      new URL(url)
    } catch {
      return { ok: false, why: `its repository ${url} is not a URL` }
    }
    return { ok: true, source: { _tag: "HelmRepo", repoUrl: url, chart, version, original } }
  }
  if (url.startsWith("oci://")) {
    const tag = chartTag(version)
    if (!isTag(tag)) return { ok: false, why: `its version ${version} is not a valid OCI tag` }
    const repository = `${url.slice("oci://".length)}/${chart}`
    try {
      const parsed = parseReference(`${repository}:${tag}`)
      return { ok: true, source: { _tag: "Oci", repository: `${parsed.registry}/${parsed.repository}`, tag, chart, version, original } }
    } catch {
      return { ok: false, why: `${original}/${chart} is not a valid OCI repository` }
    }
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//iu.exec(url)?.[1]
  return {
    ok: false,
    why:
      scheme !== undefined
        ? `its source scheme ${scheme}:// is not supported (only https://, http:// and oci://)`
        : `its source ${original} is neither an https:// Helm repository nor an oci:// registry`,
  }
}
