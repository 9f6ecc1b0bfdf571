/**
 * Helm charts as OCI artifacts, laid out exactly as `helm push` does: config = the chart metadata as JSON
 * (`application/vnd.cncf.helm.config.v1+json`), one chart layer (and an optional provenance layer), the
 * `org.opencontainers.image.*` annotations Helm derives from `Chart.yaml`, tag = version with `+` → `_`.
 */
import { parse as parseYaml } from "yaml"
import { fetchBlob } from "./blobs"
import { type CallOptions, type Ctx, type Repo, target } from "./context"
import { digestOf } from "./digest"
import { ociError } from "./errors"
import { fetchManifest, pushManifest } from "./manifests"
import { Annotation, type Descriptor, type Manifest, MediaType } from "./media-types"
import { chartTag, type Reference } from "./reference"
import { findInTgz } from "./tar"
import { pushBlob } from "./upload"

/** A chart maintainer (`Chart.yaml` `maintainers[]`). */
export interface ChartMaintainer {
  readonly name?: string
  readonly email?: string
  readonly url?: string
}

/** A chart dependency (`Chart.yaml` `dependencies[]`). */
export interface ChartDependency {
  readonly name: string
  readonly version?: string
  readonly repository: string
  readonly condition?: string
  readonly tags?: readonly string[]
  readonly enabled?: boolean
  readonly "import-values"?: readonly unknown[]
  readonly alias?: string
}

/** `Chart.yaml`, as Helm's `chart.Metadata` (the JSON of the config blob). */
export interface ChartMetadata {
  readonly name: string
  readonly home?: string
  readonly sources?: readonly string[]
  readonly version: string
  readonly description?: string
  readonly keywords?: readonly string[]
  readonly maintainers?: readonly ChartMaintainer[]
  readonly icon?: string
  readonly apiVersion?: string
  readonly condition?: string
  readonly tags?: string
  readonly appVersion?: string
  readonly deprecated?: boolean
  readonly annotations?: Readonly<Record<string, string>>
  readonly kubeVersion?: string
  readonly dependencies?: readonly ChartDependency[]
  readonly type?: string
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined)
const strs = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined)
const bool = (v: unknown): boolean | undefined => (v === "true" ? true : v === "false" ? false : undefined)

/** Builds metadata from parsed `Chart.yaml` (scalars kept as written, like Helm's string fields). */
const toMetadata = (y: Record<string, unknown>): ChartMetadata => {
  const pick = <K extends string, V>(k: K, v: V | undefined) => (v === undefined ? {} : ({ [k]: v } as Record<K, V>))
  const list = (v: unknown) => (Array.isArray(v) ? (v as Record<string, unknown>[]) : undefined)
  const annotations = y.annotations !== null && typeof y.annotations === "object" ? (y.annotations as Record<string, string>) : undefined
  return {
    name: str(y.name) ?? "",
    ...pick("home", str(y.home)),
    ...pick("sources", strs(y.sources)),
    version: str(y.version) ?? "",
    ...pick("description", str(y.description)),
    ...pick("keywords", strs(y.keywords)),
    ...pick(
      "maintainers",
      list(y.maintainers)?.map((m) => ({ ...pick("name", str(m.name)), ...pick("email", str(m.email)), ...pick("url", str(m.url)) })),
    ),
    ...pick("icon", str(y.icon)),
    ...pick("apiVersion", str(y.apiVersion)),
    ...pick("condition", str(y.condition)),
    ...pick("tags", str(y.tags)),
    ...pick("appVersion", str(y.appVersion)),
    ...pick("deprecated", bool(y.deprecated) === true ? true : undefined),
    ...pick("annotations", annotations),
    ...pick("kubeVersion", str(y.kubeVersion)),
    ...pick(
      "dependencies",
      list(y.dependencies)?.map((d) => ({
        name: str(d.name) ?? "",
        ...pick("version", str(d.version)),
        repository: str(d.repository) ?? "",
        ...pick("condition", str(d.condition)),
        ...pick("tags", strs(d.tags)),
        ...pick("enabled", bool(d.enabled) === true ? true : undefined),
        ...pick("import-values", Array.isArray(d["import-values"]) ? (d["import-values"] as unknown[]) : undefined),
        ...pick("alias", str(d.alias)),
      })),
    ),
    ...pick("type", str(y.type)),
  }
}

/**
 * Reads `<chart>/Chart.yaml` from a chart archive, inflating only as much of it as needed (`helm package` writes
 * Chart.yaml first). Throws `OciError` `Invalid` when the archive has none or it lacks `name`/`version`.
 */
export const readChartMetadata = (tgz: Uint8Array): ChartMetadata => {
  const invalid = (why: string) => ociError({ registry: "" }, { _tag: "Invalid" }, `Not a Helm chart archive: ${why}`)
  let text: string | undefined
  try {
    text = findInTgz(tgz, (path) => /^[^/]+\/Chart\.yaml$/.test(path.replace(/^\.\//, "")))?.toString("utf8")
  } catch (cause) {
    throw ociError({ registry: "" }, { _tag: "Invalid" }, "Not a Helm chart archive: cannot read it as a gzipped tar", { cause })
  }
  if (text === undefined) throw invalid("no <chart>/Chart.yaml")
  const parsed: unknown = parseYaml(text, { schema: "failsafe" })
  if (parsed === null || typeof parsed !== "object") throw invalid("Chart.yaml is not a mapping")
  const meta = toMetadata(parsed as Record<string, unknown>)
  if (meta.name.length === 0 || meta.version.length === 0) throw invalid("Chart.yaml needs name and version")
  return meta
}

/** JSON as Go's `encoding/json` writes it (HTML-safe escapes), so our config blob matches Helm's byte for byte. */
export const goJson = (value: unknown): string =>
  JSON.stringify(value)
    .replaceAll("<", "\\u003c")
    .replaceAll(">", "\\u003e")
    .replaceAll("&", "\\u0026")
    .replaceAll("\u2028", "\\u2028")
    .replaceAll("\u2029", "\\u2029")

const sortKeys = (r: Readonly<Record<string, string>>) => Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

/** The config blob of a chart: its metadata in `chart.Metadata` field order, annotations sorted. */
export const chartConfigJson = (meta: ChartMetadata): Buffer =>
  Buffer.from(goJson(meta.annotations !== undefined ? { ...meta, annotations: sortKeys(meta.annotations) } : meta), "utf8")

/**
 * The manifest annotations Helm writes: description, title (= name), version, url (= home), created, source
 * (= first of sources), authors (`Name (email)` joined by `, `), then the chart's own annotations except title
 * and version. Empty values are left out; keys are sorted as Go's JSON encoder does.
 */
export const chartAnnotations = (meta: ChartMetadata, created: string): Record<string, string> => {
  const a: Record<string, string> = {}
  const add = (k: string, v: string | undefined) => {
    if (v !== undefined && v.trim().length > 0) a[k] = v
  }
  add(Annotation.Description, meta.description)
  add(Annotation.Title, meta.name)
  add(Annotation.Version, meta.version)
  add(Annotation.Url, meta.home)
  add(Annotation.Created, created)
  add(Annotation.Source, meta.sources?.[0])
  add(Annotation.Authors, meta.maintainers?.map((m) => `${m.name ?? ""}${m.email !== undefined ? ` (${m.email})` : ""}`).join(", "))
  for (const [k, v] of Object.entries(meta.annotations ?? {})) if (k !== Annotation.Title && k !== Annotation.Version) a[k] = v
  return sortKeys(a)
}

/** Options of {@link chartLayout}. */
export interface ChartLayoutOptions {
  /** The chart's `.prov` file, laid out as a provenance layer. */
  readonly provenance?: Uint8Array
  /** `org.opencontainers.image.created`, RFC 3339. Default: now, whole seconds. Fix it for reproducible digests. */
  readonly created?: string
}

/** A chart as `helm push` stores it, computed before any request: the blobs' descriptors and the manifest bytes. */
export interface ChartLayout {
  readonly metadata: ChartMetadata
  /** The version tag ({@link chartTag}). */
  readonly tag: string
  readonly config: { readonly bytes: Buffer; readonly descriptor: Descriptor }
  readonly chart: Descriptor
  readonly provenance?: Descriptor
  readonly manifest: { readonly bytes: Buffer; readonly descriptor: Descriptor }
}

/**
 * The OCI layout of a packaged chart (`.tgz`) exactly as `helm push` writes it: the config blob (metadata JSON),
 * the chart layer and an optional provenance layer (sorted by digest), Helm's annotations. Throws `OciError`
 * `Invalid` for an archive that is not a chart.
 */
export const chartLayout = (tgz: Uint8Array, opts: ChartLayoutOptions = {}): ChartLayout => {
  const metadata = readChartMetadata(tgz)
  const configBytes = chartConfigJson(metadata)
  const config: Descriptor = { mediaType: MediaType.HelmConfig, digest: digestOf(configBytes), size: configBytes.length }
  const chart: Descriptor = { mediaType: MediaType.HelmChart, digest: digestOf(tgz), size: tgz.length }
  const provenance =
    opts.provenance !== undefined ? { mediaType: MediaType.HelmProvenance, digest: digestOf(opts.provenance), size: opts.provenance.length } : undefined
  const layers = [chart, ...(provenance !== undefined ? [provenance] : [])].sort((a, b) => (a.digest < b.digest ? -1 : 1))
  const created = opts.created ?? new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z")
  // Helm's manifest carries no `mediaType` field (the Content-Type says it); key order is Go's struct order.
  const bytes = Buffer.from(goJson({ schemaVersion: 2, config, layers, annotations: chartAnnotations(metadata, created) }))
  return {
    metadata,
    tag: chartTag(metadata.version),
    config: { bytes: configBytes, descriptor: config },
    chart,
    ...(provenance !== undefined ? { provenance } : {}),
    manifest: { bytes, descriptor: { mediaType: MediaType.OciManifest, digest: digestOf(bytes), size: bytes.length } },
  }
}

/** The chart layer of a Helm chart manifest (config media type Helm's), or undefined when it is not one. */
export const chartLayer = (manifest: Manifest): Descriptor | undefined =>
  "config" in manifest && manifest.config.mediaType === MediaType.HelmConfig
    ? manifest.layers.find((l) => l.mediaType === MediaType.HelmChart || l.mediaType === "application/tar+gzip")
    : undefined

/** Options of {@link pushChart}. */
export interface PushChartOptions extends CallOptions, ChartLayoutOptions {
  /** Push to a repository whose last path component is not the chart name (Helm itself refuses). Default false. */
  readonly allowNameMismatch?: boolean
}

/** What {@link pushChart} stored. */
export interface PushedChart {
  readonly reference: Reference
  readonly manifest: Descriptor
  readonly config: Descriptor
  readonly chart: Descriptor
  readonly provenance?: Descriptor
  readonly metadata: ChartMetadata
}

/**
 * Pushes a packaged chart (`.tgz`) to `repo` (e.g. `<prefix>/charts/<name>`), tagged with its version.
 * `helm pull oci://<registry>/<repo> --version <version>` fetches it back byte for byte.
 */
export const pushChart = async (ctx: Ctx, repo: Repo, tgz: Uint8Array, opts: PushChartOptions = {}): Promise<PushedChart> => {
  const layout = chartLayout(tgz, opts)
  const { metadata, chart, provenance } = layout
  const config = layout.config.descriptor
  const basename = repo.repository.slice(repo.repository.lastIndexOf("/") + 1)
  if (basename !== metadata.name && opts.allowNameMismatch !== true) {
    throw ociError(
      target(repo),
      { _tag: "Invalid" },
      `Chart ${metadata.name} cannot be pushed to repository ${repo.repository}: its last component must be the chart name`,
    )
  }
  await pushBlob(ctx, repo, layout.config.bytes, { digest: config.digest, signal: opts.signal })
  await pushBlob(ctx, repo, tgz, { digest: chart.digest, signal: opts.signal })
  if (opts.provenance !== undefined && provenance !== undefined) await pushBlob(ctx, repo, opts.provenance, { digest: provenance.digest, signal: opts.signal })
  const reference: Reference = { registry: repo.registry, repository: repo.repository, tag: layout.tag }
  const descriptor = await pushManifest(ctx, reference, { bytes: layout.manifest.bytes, mediaType: MediaType.OciManifest }, opts)
  return { reference, manifest: descriptor, config, chart, ...(provenance !== undefined ? { provenance } : {}), metadata }
}

/** Options of {@link pullChart}. */
export interface PullChartOptions extends CallOptions {
  /** Largest chart archive accepted in memory. Default 64 MiB. */
  readonly maxChartBytes?: number
}

/** A pulled chart: the archive exactly as pushed, its metadata, and the provenance file if there is one. */
export interface PulledChart {
  readonly manifest: Descriptor
  readonly metadata: ChartMetadata
  readonly chart: Buffer
  readonly provenance?: Buffer
}

/** Pulls a chart by tag (see {@link chartTag}) or digest, verifying every blob. */
export const pullChart = async (ctx: Ctx, ref: Reference, opts: PullChartOptions = {}): Promise<PulledChart> => {
  const { descriptor, manifest } = await fetchManifest(ctx, ref, opts)
  const t = target(ref, ref.digest ?? ref.tag)
  if ("manifests" in manifest || manifest.config.mediaType !== MediaType.HelmConfig) {
    throw ociError(
      t,
      { _tag: "Invalid" },
      `${ref.repository} is not a Helm chart (config media type ${"config" in manifest ? manifest.config.mediaType : "none"})`,
    )
  }
  const layer = chartLayer(manifest)
  if (layer === undefined) throw ociError(t, { _tag: "Invalid" }, `${ref.repository} has no ${MediaType.HelmChart} layer`)
  const provLayer = manifest.layers.find((l) => l.mediaType === MediaType.HelmProvenance)
  const config = await fetchBlob(ctx, ref, manifest.config, { ...opts, maxBytes: 1024 * 1024 })
  let metadata: ChartMetadata
  try {
    metadata = JSON.parse(config.toString("utf8")) as ChartMetadata
  } catch (cause) {
    throw ociError(t, { _tag: "Invalid" }, `Chart config of ${ref.repository} is not JSON`, { cause })
  }
  const chart = await fetchBlob(ctx, ref, layer, { ...opts, maxBytes: opts.maxChartBytes ?? 64 * 1024 * 1024 })
  const provenance = provLayer !== undefined ? await fetchBlob(ctx, ref, provLayer, opts) : undefined
  return { manifest: descriptor, metadata, chart, ...(provenance !== undefined ? { provenance } : {}) }
}
