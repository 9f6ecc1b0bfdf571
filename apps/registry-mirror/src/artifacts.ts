/**
 * Building what the mirror pushes, deterministically (same input → same bytes → same digest, so a second mirror
 * pushes nothing): chart archives, Helm's OCI manifest for a chart (byte for byte what `helm push` writes, with a
 * fixed `created`), wrapper charts around a release's manifests, and the bundle artifact.
 */
import { createHash } from "node:crypto"
import { constants as zlibConstants, gunzipSync, gzipSync } from "node:zlib"
import { Annotation, chartAnnotations, chartConfigJson, type ChartMetadata, chartTag, type Descriptor, EMPTY_JSON, MediaType, readChartMetadata } from "@aicr/oras"

export interface TarFile {
  readonly path: string
  readonly data: Buffer
}

/** The epoch: AICR's reproducible OCI pushes use it as `created` (aicr-cli.md §3.3); so do we. */
export const CREATED = "1970-01-01T00:00:00Z"
const MTIME = 0
const BLOCK = 512

export const sha256 = (data: Uint8Array | string): string => `sha256:${createHash("sha256").update(data).digest("hex")}`

const put = (h: Buffer, offset: number, length: number, value: string) => void h.write(value, offset, Math.min(length, Buffer.byteLength(value)), "utf8")
const putOctal = (h: Buffer, offset: number, length: number, value: number) => put(h, offset, length, value.toString(8).padStart(length - 1, "0") + "\0")

const header = (path: string, size: number, mode: number): Buffer => {
  const h = Buffer.alloc(BLOCK)
  let name = path
  let prefix = ""
  if (Buffer.byteLength(path) > 100) {
    const cut = path.lastIndexOf("/", 155)
    if (cut <= 0 || Buffer.byteLength(path.slice(cut + 1)) > 100) throw new Error(`Tar path too long: ${path}`)
    prefix = path.slice(0, cut)
    name = path.slice(cut + 1)
  }
  put(h, 0, 100, name)
  putOctal(h, 100, 8, mode)
  putOctal(h, 108, 8, 0)
  putOctal(h, 116, 8, 0)
  putOctal(h, 124, 12, size)
  putOctal(h, 136, 12, MTIME)
  h.fill(0x20, 148, 156)
  h[156] = 0x30
  put(h, 257, 6, "ustar\0")
  put(h, 263, 2, "00")
  put(h, 345, 155, prefix)
  let sum = 0
  for (const b of h) sum += b
  put(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ")
  return h
}

/** A ustar archive (uid/gid 0, mtime 0, mode 0644 unless `modes` says otherwise), files in the order given. */
export const tar = (files: readonly TarFile[], modes: Readonly<Record<string, number>> = {}): Buffer => {
  const blocks: Buffer[] = []
  for (const f of files) blocks.push(header(f.path, f.data.length, modes[f.path] ?? 0o644), f.data, Buffer.alloc((BLOCK - (f.data.length % BLOCK)) % BLOCK))
  blocks.push(Buffer.alloc(BLOCK * 2))
  return Buffer.concat(blocks)
}

/** gzip with a zero header mtime: deterministic. */
export const gzip = (data: Buffer): Buffer => gzipSync(data, { level: 9 })

/** Go's `encoding/json` HTML-safe escapes, so the manifest matches Helm's byte for byte. */
const goJson = (value: unknown): string =>
  JSON.stringify(value).replaceAll("<", "\\u003c").replaceAll(">", "\\u003e").replaceAll("&", "\\u0026").replaceAll("\u2028", "\\u2028").replaceAll("\u2029", "\\u2029")

/** A chart as pushed to OCI: config and chart blobs plus the manifest bytes, digest known before any push. */
export interface ChartArtifact {
  readonly metadata: ChartMetadata
  readonly tag: string
  readonly config: { readonly bytes: Buffer; readonly descriptor: Descriptor }
  readonly chart: { readonly bytes: Uint8Array; readonly descriptor: Descriptor }
  readonly manifest: { readonly bytes: Buffer; readonly digest: string; readonly mediaType: string }
}

/**
 * `<chart>/Chart.yaml` of a chart archive without inflating all of it: inflates a growing prefix of the gzip stream
 * (`Z_SYNC_FLUSH` returns what a prefix holds) until the entry is complete. `helm package` writes Chart.yaml first,
 * so for a large chart this inflates a few KiB instead of the whole archive. Returns undefined if there is none.
 */
export const chartYamlOf = (tgz: Uint8Array): string | undefined => {
  for (let take = 64 * 1024; ; take *= 4) {
    const whole = take >= tgz.length
    let tarBytes: Buffer
    try {
      tarBytes = gunzipSync(tgz.subarray(0, Math.min(take, tgz.length)), { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: 512 * 1024 * 1024 })
    } catch {
      if (whole) return undefined
      continue
    }
    let longName: string | undefined
    for (let off = 0; off + BLOCK <= tarBytes.length; ) {
      const h = tarBytes.subarray(off, off + BLOCK)
      if (h.every((b) => b === 0)) return undefined
      const field = (o: number, l: number) => h.subarray(o, o + l).toString("utf8").replace(/\0.*$/su, "")
      const size = parseInt(field(124, 12).trim() || "0", 8)
      const type = String.fromCharCode(h[156] || 0x30)
      const end = off + BLOCK + size
      if (end > tarBytes.length) break // this prefix ends inside the entry: inflate more
      const data = tarBytes.subarray(off + BLOCK, end)
      const prefix = field(345, 155)
      const name = longName ?? (prefix !== "" ? `${prefix}/${field(0, 100)}` : field(0, 100))
      longName = type === "L" ? data.toString("utf8").replace(/\0+$/u, "") : undefined
      if ((type === "0" || type === "\0") && /^(?:\.\/)?[^/]+\/Chart\.yaml$/u.test(name)) return data.toString("utf8")
      off = off + BLOCK + Math.ceil(size / BLOCK) * BLOCK
    }
    if (whole) return undefined
  }
}

/** Helm's OCI layout for a chart archive (`helm push`), with `created` fixed. Throws OciError `Invalid` for a non-chart. */
export const chartArtifact = (tgz: Uint8Array, created: string = CREATED): ChartArtifact => {
  // Metadata from a one-entry archive holding just Chart.yaml: the same parser as helm push's, without inflating everything.
  const chartYaml = chartYamlOf(tgz)
  const metadata = readChartMetadata(chartYaml === undefined ? tgz : gzip(tar([{ path: "chart/Chart.yaml", data: Buffer.from(chartYaml) }])))
  const configBytes = chartConfigJson(metadata)
  const config: Descriptor = { mediaType: MediaType.HelmConfig, digest: sha256(configBytes), size: configBytes.length }
  const chart: Descriptor = { mediaType: MediaType.HelmChart, digest: sha256(tgz), size: tgz.length }
  // Helm's manifest carries no `mediaType` field; key order is Go's struct order.
  const bytes = Buffer.from(goJson({ schemaVersion: 2, config, layers: [chart], annotations: chartAnnotations(metadata, created) }))
  return {
    metadata,
    tag: chartTag(metadata.version),
    config: { bytes: configBytes, descriptor: config },
    chart: { bytes: tgz, descriptor: chart },
    manifest: { bytes, digest: sha256(bytes), mediaType: MediaType.OciManifest },
  }
}

/** The chart layer digest of a Helm chart manifest, or undefined when the manifest is not a chart. */
export const chartLayerOf = (manifest: unknown): string | undefined => {
  if (typeof manifest !== "object" || manifest === null || !("layers" in manifest) || !("config" in manifest)) return undefined
  const m = manifest as { config: Descriptor; layers: readonly Descriptor[] }
  if (m.config.mediaType !== MediaType.HelmConfig) return undefined
  return m.layers.find((l) => l.mediaType === MediaType.HelmChart || l.mediaType === "application/tar+gzip")?.digest
}

export const WRAPPER_TEMPLATE = '{{- range $path, $_ := .Files.Glob "manifests/*" }}\n---\n{{ $.Files.Get $path }}\n{{- end }}\n'

/** Content-addressed wrapper version: `0.0.0-aicr-<16 hex>` over the wrapped files (a valid SemVer pre-release). */
export const wrapperVersion = (files: ReadonlyArray<readonly [string, string]>): string => {
  const h = createHash("sha256")
  for (const [p, t] of files) h.update(`${Buffer.byteLength(p)}:${p}${Buffer.byteLength(t)}:${t}`)
  return `0.0.0-aicr-${h.digest("hex").slice(0, 16)}`
}

/**
 * A wrapper chart around manifests: `Chart.yaml`, one template that emits every `manifests/*` file verbatim
 * (`.Files.Get`, so text that looks like a Go template is never rendered), and the files themselves.
 */
export const manifestWrapperFiles = (name: string, version: string, manifests: ReadonlyArray<readonly [string, string]>, annotations: Readonly<Record<string, string>>): TarFile[] => {
  const chartYaml = [
    "apiVersion: v2",
    `name: ${name}`,
    `version: ${version}`,
    "type: application",
    `description: ${JSON.stringify(`Manifests of release ${name}, wrapped by the aicr registry-mirror`)}`,
    "annotations:",
    ...Object.entries(annotations)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
    "",
  ].join("\n")
  return [
    { path: `${name}/Chart.yaml`, data: Buffer.from(chartYaml) },
    { path: `${name}/templates/manifests.yaml`, data: Buffer.from(WRAPPER_TEMPLATE) },
    ...manifests.map(([f, t]) => ({ path: `${name}/manifests/${f}`, data: Buffer.from(t) })),
  ]
}

export const BUNDLE_ARTIFACT_TYPE = "application/vnd.aicr.bundle.v1"
/** The annotations `oras push <dir>` writes, so `oras pull` unpacks the layer into `bundle/`. */
export const ORAS_UNPACK = "io.deis.oras.content.unpack"
export const ORAS_CONTENT_DIGEST = "io.deis.oras.content.digest"
export const ANNOTATION_INPUT_DIGEST = "operator.aicr.run/input-digest"

export interface BundleArtifact {
  readonly layer: { readonly bytes: Buffer; readonly descriptor: Descriptor }
  readonly manifest: { readonly bytes: Buffer; readonly digest: string; readonly mediaType: string }
}

/**
 * The bundle as one OCI artifact: a tar+gzip layer of `bundle/<path>` (paths sorted, modes kept) annotated the way
 * `oras push` annotates a directory, an empty config, artifactType {@link BUNDLE_ARTIFACT_TYPE}.
 */
export const bundleArtifact = (files: Readonly<Record<string, string>>, modes: Readonly<Record<string, number>>, inputDigest: string): BundleArtifact => {
  const paths = Object.keys(files).sort()
  const tarBytes = tar(
    paths.map((p) => ({ path: `bundle/${p}`, data: Buffer.from(files[p]!, "utf8") })),
    Object.fromEntries(Object.entries(modes).map(([p, m]) => [`bundle/${p}`, m])),
  )
  const layerBytes = gzip(tarBytes)
  const layer: Descriptor = {
    mediaType: MediaType.OciLayerGzip,
    digest: sha256(layerBytes),
    size: layerBytes.length,
    annotations: { [ORAS_CONTENT_DIGEST]: sha256(tarBytes), [ORAS_UNPACK]: "true", [Annotation.Title]: "bundle" },
  }
  const config: Descriptor = { mediaType: MediaType.OciEmpty, digest: EMPTY_JSON.descriptor.digest, size: EMPTY_JSON.descriptor.size }
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    artifactType: BUNDLE_ARTIFACT_TYPE,
    config,
    layers: [layer],
    annotations: { [Annotation.Created]: CREATED, [ANNOTATION_INPUT_DIGEST]: inputDigest },
  }
  const bytes = Buffer.from(JSON.stringify(manifest))
  return { layer: { bytes: layerBytes, descriptor: layer }, manifest: { bytes, digest: sha256(bytes), mediaType: MediaType.OciManifest } }
}
