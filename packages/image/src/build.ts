/**
 * Builds an image (one manifest per platform, an image index over them) from layer recipes, into an OCI image
 * layout directory, without a container engine. Layers whose inputs did not change come from the layer cache
 * (keyed by a hash of the recipe and the content of its inputs), so a warm build re-tars only what changed.
 */
import { createHash } from "node:crypto"
import { copyFileSync, createReadStream, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { OciClient } from "@aicr/oras"
import { type Arch, debianLock, imageCache, nodeBinary, nodeLock } from "./inputs"
import { entriesOf, type Layer, type LayerEntry, type OwnerRule, sourceDateEpoch, writeLayer } from "./layer"
import { BASE_OWNERS, baseRootfs, shellRootfs } from "./rootfs"

export const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const

/** Bumped when the builder's output changes for the same inputs (it is part of every layer's cache key). */
const BUILDER_VERSION = "1"

/** How one layer is made. */
export type LayerRecipe =
  | { readonly kind: "base" }
  | { readonly kind: "shell" }
  | { readonly kind: "node" }
  /** Files copied into the image: `to` (absolute, in the image) ← `from` (a file or directory on disk). */
  | {
      readonly kind: "files"
      readonly comment: string
      /** `exclude`: paths (relative to a directory `from`) left out. */
      readonly files: ReadonlyArray<{ readonly from: string | Buffer; readonly to: string; readonly mode?: number; readonly exclude?: RegExp }>
      readonly owners?: ReadonlyArray<OwnerRule>
    }

/** The image's run configuration (the OCI config's `config`). */
export interface RunConfig {
  readonly User?: string
  readonly Env: ReadonlyArray<string>
  readonly Entrypoint: ReadonlyArray<string>
  readonly Cmd?: ReadonlyArray<string>
  readonly WorkingDir?: string
  readonly Labels: Readonly<Record<string, string>>
}

export interface ImageSpec {
  /** Short name, e.g. `aicr-operator` or `aicr`; the layout directory and the default repository name. */
  readonly name: string
  readonly platforms: ReadonlyArray<Arch>
  readonly layers: ReadonlyArray<LayerRecipe>
  readonly config: RunConfig
  /** Annotations of the index and of every manifest (title, version, revision, …). */
  readonly annotations: Readonly<Record<string, string>>
}

export interface BuiltManifest {
  readonly platform: Arch
  readonly digest: string
  readonly size: number
  readonly bytes: Buffer
  readonly config: { readonly digest: string; readonly size: number; readonly bytes: Buffer }
  readonly layers: ReadonlyArray<Layer>
}

export interface BuiltImage {
  readonly name: string
  /** The OCI image layout directory (oci-layout, index.json, blobs/). */
  readonly layout: string
  /** The image index: its digest is the image's digest. */
  readonly digest: string
  readonly indexBytes: Buffer
  readonly manifests: ReadonlyArray<BuiltManifest>
}

const sha256 = (b: Buffer | string) => `sha256:${createHash("sha256").update(b).digest("hex")}`

/** Canonical JSON of what we build: keys in insertion order, which the builders fix. */
const json = (v: unknown) => Buffer.from(JSON.stringify(v))

const hashFiles = (h: ReturnType<typeof createHash>, from: string | Buffer, exclude?: RegExp) => {
  if (Buffer.isBuffer(from)) return void h.update(from)
  const st = statSync(from)
  if (st.isFile()) return void h.update(readFileSync(from)).update(String(st.mode & 0o777))
  for (const e of entriesOf(from).filter((x) => !exclude?.test(x.path))) {
    h.update(`${e.path}\0${e.type}\0${e.mode}\0${e.target ?? ""}\0`)
    if (e.type === "file") h.update(readFileSync(e.source as string))
  }
}

/** The cache key of a layer: the recipe, the pinned inputs it uses and the content of its files. */
const layerKey = (recipe: LayerRecipe, arch: Arch): string => {
  const h = createHash("sha256").update(`${BUILDER_VERSION}\0${arch}\0${recipe.kind}\0${sourceDateEpoch().getTime()}\0`)
  if (recipe.kind === "base" || recipe.kind === "shell") h.update(JSON.stringify(debianLock()))
  if (recipe.kind === "node") h.update(JSON.stringify(nodeLock()))
  if (recipe.kind === "files") {
    h.update(JSON.stringify(recipe.owners ?? []))
    for (const f of recipe.files) {
      h.update(`${f.to}\0${f.mode ?? ""}\0${f.exclude?.source ?? ""}\0`)
      hashFiles(h, f.from, f.exclude)
    }
  }
  return h.digest("hex")
}

const dirEntries = (path: string, mode = 0o755): LayerEntry[] => {
  const parts = path.split("/").filter(Boolean)
  return parts.map((_, i) => ({ path: parts.slice(0, i + 1).join("/"), type: "directory" as const, mode, uid: 0, gid: 0 }))
}

/** The entries of a `files` layer: parent directories, then each source (a directory's content goes under `to`). */
const filesEntries = (recipe: Extract<LayerRecipe, { kind: "files" }>): LayerEntry[] => {
  const byPath = new Map<string, LayerEntry>()
  const add = (e: LayerEntry) => byPath.set(e.path, e)
  for (const f of recipe.files) {
    const to = f.to.replace(/^\/+/, "").replace(/\/+$/, "")
    for (const d of dirEntries(to.split("/").slice(0, -1).join("/"))) if (!byPath.has(d.path)) add(d)
    if (Buffer.isBuffer(f.from)) {
      add({ path: to, type: "file", mode: f.mode ?? 0o644, uid: 0, gid: 0, source: f.from, size: f.from.length })
      continue
    }
    const st = statSync(f.from)
    if (st.isFile()) {
      add({ path: to, type: "file", mode: f.mode ?? st.mode & 0o7777, uid: 0, gid: 0, source: f.from, size: st.size })
      continue
    }
    add({ path: to, type: "directory", mode: 0o755, uid: 0, gid: 0 })
    for (const e of entriesOf(f.from)) if (!f.exclude?.test(e.path)) add({ ...e, path: `${to}/${e.path}` })
  }
  const owners = recipe.owners ?? []
  return [...byPath.values()]
    .map((e) => {
      const o = owners.find((r) => e.path === r.prefix || e.path.startsWith(`${r.prefix}/`))
      return o ? { ...e, uid: o.uid, gid: o.gid } : e
    })
    .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)))
}

const NODE_DIR = "nodejs"

/** Makes one layer (or takes it from the cache) and returns it with its history line. */
const buildLayer = async (recipe: LayerRecipe, arch: Arch, cache: string, useCache: boolean): Promise<{ layer: Layer; createdBy: string }> => {
  const key = layerKey(recipe, arch)
  const blobs = join(cache, "blobs", "sha256")
  mkdirSync(blobs, { recursive: true })
  const record = join(cache, "layers", `${key}.json`)
  const createdBy =
    recipe.kind === "base"
      ? `debian packages ${Object.keys(debianLock().packages).length > 0 ? "(packages/image/debian.lock.json)" : ""}: base`
      : recipe.kind === "shell"
        ? "debian packages (packages/image/debian.lock.json): shell"
        : recipe.kind === "node"
          ? `node ${nodeLock().version} from npm ${nodeLock().packages[arch].name}`
          : recipe.comment
  if (useCache && existsSync(record)) {
    const layer = JSON.parse(readFileSync(record, "utf8")) as Layer
    if (existsSync(layer.file) && statSync(layer.file).size === layer.size) return { layer, createdBy }
  }
  const work = mkdtempSync(join(cache, ".layer-"))
  try {
    let entries: LayerEntry[]
    if (recipe.kind === "base" || recipe.kind === "shell") {
      const root = join(work, "root")
      await (recipe.kind === "base" ? baseRootfs : shellRootfs)(root, arch, debianLock(), cache)
      entries = entriesOf(root, BASE_OWNERS)
    } else if (recipe.kind === "node") {
      const bin = await nodeBinary(arch, nodeLock(), cache)
      const license = join(bin, "..", "..", "LICENSE")
      entries = filesEntries({
        kind: "files",
        comment: "",
        files: [
          { from: bin, to: `/${NODE_DIR}/bin/node`, mode: 0o755 },
          { from: license, to: `/${NODE_DIR}/LICENSE`, mode: 0o644 },
        ],
      })
    } else entries = filesEntries(recipe)
    const tmp = join(work, "layer.tar.gz")
    const built = await writeLayer(entries, tmp)
    const file = join(blobs, built.digest.slice("sha256:".length))
    if (!existsSync(file)) copyFileSync(tmp, file)
    const layer = { ...built, file }
    mkdirSync(join(cache, "layers"), { recursive: true })
    writeFileSync(record, JSON.stringify(layer))
    return { layer, createdBy }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const putBlob = (layout: string, digest: string, from: string | Buffer) => {
  const file = join(layout, "blobs", "sha256", digest.slice("sha256:".length))
  if (existsSync(file)) return
  if (Buffer.isBuffer(from)) return void writeFileSync(file, from)
  try {
    linkSync(from, file)
  } catch {
    copyFileSync(from, file)
  }
}

export interface BuildOptions {
  /** Where the OCI layout goes: `<outDir>/<spec.name>`, replaced. */
  readonly outDir: string
  readonly cache?: string
  /** Take unchanged layers from the layer cache (default true). */
  readonly useCache?: boolean
}

/** Builds `spec` into an OCI image layout; same spec and inputs, same bytes, same digest. */
export const buildImage = async (spec: ImageSpec, opts: BuildOptions): Promise<BuiltImage> => {
  const cache = opts.cache ?? imageCache()
  const layout = join(opts.outDir, spec.name)
  rmSync(layout, { recursive: true, force: true })
  mkdirSync(join(layout, "blobs", "sha256"), { recursive: true })
  const created = sourceDateEpoch()
    .toISOString()
    .replace(/\.000Z$/, "Z")
  const manifests: BuiltManifest[] = []
  for (const arch of spec.platforms) {
    const layers: Layer[] = []
    const history: { created: string; created_by: string }[] = []
    for (const recipe of spec.layers) {
      const { layer, createdBy } = await buildLayer(recipe, arch, cache, opts.useCache ?? true)
      layers.push(layer)
      history.push({ created, created_by: createdBy })
      putBlob(layout, layer.digest, layer.file)
    }
    const config = json({
      created,
      architecture: arch,
      os: "linux",
      config: spec.config,
      rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
      history,
    })
    const configDigest = sha256(config)
    putBlob(layout, configDigest, config)
    const manifest = json({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, digest: configDigest, size: config.length },
      layers: layers.map((l) => ({ mediaType: MEDIA.layer, digest: l.digest, size: l.size })),
      annotations: spec.annotations,
    })
    const digest = sha256(manifest)
    putBlob(layout, digest, manifest)
    manifests.push({
      platform: arch,
      digest,
      size: manifest.length,
      bytes: manifest,
      config: { digest: configDigest, size: config.length, bytes: config },
      layers,
    })
  }
  const index = json({
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: manifests.map((m) => ({ mediaType: MEDIA.manifest, digest: m.digest, size: m.size, platform: { architecture: m.platform, os: "linux" } })),
    annotations: spec.annotations,
  })
  const digest = sha256(index)
  putBlob(layout, digest, index)
  writeFileSync(join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }))
  const version = spec.annotations["org.opencontainers.image.version"]
  writeFileSync(
    join(layout, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: [
        { mediaType: MEDIA.index, digest, size: index.length, ...(version ? { annotations: { "org.opencontainers.image.ref.name": version } } : {}) },
      ],
    }),
  )
  return { name: spec.name, layout, digest, indexBytes: index, manifests }
}

/**
 * Pushes a built image to `repository` (host[:port]/path) with `tag`: every blob (skipped when the registry has
 * it), each platform's manifest by digest, then the index by tag. Returns the pushed reference, by digest.
 */
export const pushImage = async (client: OciClient, image: BuiltImage, repository: string, tag: string): Promise<string> => {
  for (const m of image.manifests) {
    for (const l of m.layers) await client.pushBlob(repository, () => Promise.resolve(createReadStream(l.file)), { digest: l.digest, size: l.size })
    await client.pushBlob(repository, m.config.bytes, { digest: m.config.digest })
    await client.pushManifest(`${repository}@${m.digest}`, { bytes: m.bytes, mediaType: MEDIA.manifest })
  }
  const pushed = await client.pushManifest(`${repository}:${tag}`, { bytes: image.indexBytes, mediaType: MEDIA.index })
  if (pushed.digest !== image.digest) throw new Error(`${repository}:${tag}: the registry stored the index as ${pushed.digest}, not ${image.digest}`)
  return `${repository}:${tag}@${image.digest}`
}

/** Sizes of an image for one platform: compressed (what is pulled) and uncompressed (what is unpacked). */
export const imageSize = (image: BuiltImage, arch: Arch): { compressed: number; uncompressed: number } => {
  const m = image.manifests.find((x) => x.platform === arch)
  if (!m) throw new Error(`${image.name} has no ${arch} manifest`)
  return { compressed: m.layers.reduce((n, l) => n + l.size, 0) + m.config.size + m.size, uncompressed: m.layers.reduce((n, l) => n + l.uncompressedSize, 0) }
}

export { NODE_DIR }
