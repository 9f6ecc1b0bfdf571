/**
 * The mirror plan: pure. From a resolution (content ConfigMap), the registry prefix and the upstream rewrites to
 * the list of artifacts to put in the runtime registry, each with its source, repository, tag and status key:
 *
 * | release has | pushed to | status key |
 * |---|---|---|
 * | an upstream chart (`https://` repo or `oci://`) | `<prefix>/charts/<chart>:<version>` | `<release>` |
 * | a local chart in the bundle (`<release>/chart/`) | `<prefix>/wrappers/<chart>:<version>` | `<release>` |
 * | only manifests (no source) | `<prefix>/wrappers/<release>:0.0.0-aicr-<hash>` | `<release>` |
 * | a chart and extra manifests | the chart as above, plus `<prefix>/wrappers/<release>:0.0.0-aicr-<hash>` | `<release>`, `<release>-manifests` |
 *
 * plus the bundle at `<prefix>/bundles/cluster:input-<32 hex of inputDigest>`. Anything else is unsupported.
 */
import type { TarEntry } from "@aicr/oras"
import { chartTag, isRepository, isTag } from "@aicr/oras/reference"
import { parse as parseYaml } from "yaml"
import type { Release, Resolution } from "./content"
import { type ChartSource, parseSource, type RegistryPrefix, repositoryIn, type Rewrites } from "./source"
import { manifestWrapperFiles, wrapperVersion } from "./wrapper"

export const BUNDLE_NAME = "cluster"
export const MANIFESTS_SUFFIX = "-manifests"
export const ANNOTATION_RELEASE = "operator.aicr.run/release"

/** One artifact to mirror. `key` is its `status.mirror.charts[].release` entry. */
export type PlanItem =
  | { readonly _tag: "Chart"; readonly key: string; readonly release: string; readonly source: ChartSource; readonly repository: string; readonly tag: string }
  | {
      readonly _tag: "Wrapper"
      readonly key: string
      readonly release: string
      readonly chart: string
      readonly version: string
      /** Archive entries, rooted at the chart name. */
      readonly files: readonly TarEntry[]
      readonly repository: string
      readonly tag: string
    }

export interface MirrorPlan {
  readonly inputDigest: string
  readonly items: readonly PlanItem[]
  readonly bundle: {
    readonly repository: string
    readonly tag: string
    readonly files: Readonly<Record<string, string>>
    readonly modes: Readonly<Record<string, number>>
  }
}

export type PlanResult =
  | { readonly ok: true; readonly plan: MirrorPlan }
  | { readonly ok: false; readonly unsupported: ReadonlyArray<{ readonly release: string; readonly why: string }> }

/** `input-<32 hex>`: the bundle's tag, one per resolution (the same inputs render the same bundle). */
export const bundleTag = (inputDigest: string): string => `input-${inputDigest.replace(/^sha256:/u, "").slice(0, 32)}`

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/u

const manifestsWrapper = (p: RegistryPrefix, r: Release, key: string): PlanItem => {
  const version = wrapperVersion(r.manifests)
  const annotations: Record<string, string> = { [ANNOTATION_RELEASE]: r.name }
  if (r.version !== undefined) annotations["operator.aicr.run/component-version"] = r.version
  return {
    _tag: "Wrapper",
    key,
    release: r.name,
    chart: r.name,
    version,
    files: manifestWrapperFiles(r.name, version, r.manifests, annotations),
    repository: repositoryIn(p, "wrappers", r.name),
    tag: chartTag(version),
  }
}

const localChart = (p: RegistryPrefix, r: Release): PlanItem | string => {
  const chartYaml = r.localChart.find(([path]) => path === "Chart.yaml")?.[1]
  if (chartYaml === undefined) return "its local chart has no Chart.yaml"
  let meta: unknown
  try {
    meta = parseYaml(chartYaml, { schema: "failsafe" })
  } catch {
    return "its local chart's Chart.yaml is not YAML"
  }
  const m = (typeof meta === "object" && meta !== null ? meta : {}) as Record<string, unknown>
  const name = typeof m["name"] === "string" ? m["name"] : ""
  const version = typeof m["version"] === "string" ? m["version"] : ""
  if (!isRepository(name) || name.includes("/")) return `its local chart's name ${JSON.stringify(name)} cannot name a repository`
  if (version === "" || !isTag(chartTag(version))) return `its local chart's version ${JSON.stringify(version)} is not a valid tag`
  return {
    _tag: "Wrapper",
    key: r.name,
    release: r.name,
    chart: name,
    version,
    files: r.localChart.map(([path, text]) => ({ path: `${name}/${path}`, data: Buffer.from(text, "utf8") })),
    repository: repositoryIn(p, "wrappers", name),
    tag: chartTag(version),
  }
}

/** Plans the mirror of one resolution. Every unsupported release is reported, sorted by name. */
export const planMirror = (resolution: Resolution, inputDigest: string, p: RegistryPrefix, rewrites: Rewrites = []): PlanResult => {
  const items: PlanItem[] = []
  const unsupported: Array<{ release: string; why: string }> = []
  for (const r of resolution.releases) {
    if (!DNS_LABEL.test(r.name) || r.name.length > 63) {
      unsupported.push({ release: r.name, why: "its name is not a DNS-1123 label" })
      continue
    }
    if (r.type !== "Helm") {
      unsupported.push({ release: r.name, why: `it is a ${r.type} component; only Helm charts and manifests are mirrored` })
      continue
    }
    let hasChart = false
    if (r.localChart.length > 0) {
      const item = localChart(p, r)
      if (typeof item === "string") {
        unsupported.push({ release: r.name, why: item })
        continue
      }
      items.push(item)
      hasChart = true
    } else if (r.source.trim() !== "" || r.chart !== undefined) {
      const parsed = parseSource(r, rewrites)
      if (!parsed.ok) {
        unsupported.push({ release: r.name, why: parsed.why })
        continue
      }
      const s = parsed.source
      items.push({ _tag: "Chart", key: r.name, release: r.name, source: s, repository: repositoryIn(p, "charts", s.chart), tag: chartTag(s.version) })
      hasChart = true
    }
    if (r.manifests.length > 0) {
      const key = hasChart ? `${r.name}${MANIFESTS_SUFFIX}` : r.name
      if (key.length > 63) {
        unsupported.push({ release: r.name, why: `its manifests need the status key ${key}, longer than 63 characters` })
        continue
      }
      items.push(manifestsWrapper(p, r, key))
    } else if (!hasChart) {
      unsupported.push({ release: r.name, why: "it holds neither an upstream chart reference nor a local chart nor manifests" })
    }
  }
  const keys = items.map((i) => i.key)
  for (const k of keys.filter((k, i) => keys.indexOf(k) !== i)) unsupported.push({ release: k, why: `two artifacts would share the status key ${k}` })
  if (unsupported.length > 0) return { ok: false, unsupported: unsupported.sort((a, b) => (a.release < b.release ? -1 : a.release > b.release ? 1 : 0)) }
  return {
    ok: true,
    plan: {
      inputDigest,
      items,
      bundle: {
        repository: repositoryIn(p, "bundles", BUNDLE_NAME),
        tag: bundleTag(inputDigest),
        files: resolution.bundle.files,
        modes: resolution.bundle.modes,
      },
    },
  }
}
