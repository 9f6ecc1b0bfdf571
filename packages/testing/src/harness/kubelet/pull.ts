// Image pulls for the process kubelet: resolve a reference on its registry, pick the build machine's platform from
// an index, fetch the config, and unpack the layers in order into one root filesystem per manifest digest (kept
// under <kubelet dir>/images/, shared read-only by every container of that image through an overlay). Layers are
// applied as a container runtime applies them: OCI whiteouts (`.wh.<name>` deletes, `.wh..wh..opq` empties a
// directory), owners and modes as recorded, and every path resolved inside the root (a layer's symlink never leads
// a later entry outside it).
import {
  createWriteStream,
  existsSync,
  lchownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
  chownSync,
  renameSync,
} from "node:fs"
import { dirname, join, posix } from "node:path"
import { type Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { createGunzip } from "node:zlib"
import { type ImageIndex, type ImageManifest, isIndexMediaType, type OciClient, parseReference } from "@aicr/oras"
import tar from "tar-stream"

/** The parts of an image config the kubelet uses (OCI image config `config`). */
export interface ImageConfig {
  readonly User?: string
  readonly Env?: readonly string[]
  readonly Entrypoint?: readonly string[]
  readonly Cmd?: readonly string[]
  readonly WorkingDir?: string
}

export interface PulledImage {
  /** The reference pulled, and the digest of the platform manifest it resolved to. */
  readonly ref: string
  readonly digest: string
  /** imageID as a kubelet reports it: `<repository>@<digest of what the reference names>`. */
  readonly imageID: string
  readonly rootfs: string
  readonly config: ImageConfig
}

const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" }

/** Resolves `path` (relative to root) inside `root`, following symlinks as if root were `/`. */
export const resolveInRoot = (root: string, path: string, followLast = false): string => {
  const parts = path.split("/").filter((p) => p && p !== ".")
  const out: string[] = []
  let hops = 0
  while (parts.length > 0) {
    const p = parts.shift()!
    if (p === "..") {
      out.pop()
      continue
    }
    const candidate = join(root, ...out, p)
    let st
    try {
      st = lstatSync(candidate)
    } catch {
      out.push(p)
      continue
    }
    if (st.isSymbolicLink() && (parts.length > 0 || followLast)) {
      if (++hops > 40) throw new Error(`${path}: too many levels of symbolic links`)
      const target = readlinkSync(candidate)
      if (target.startsWith("/")) out.length = 0
      parts.unshift(...target.split("/").filter((x) => x && x !== "."))
      continue
    }
    out.push(p)
  }
  return join(root, ...out)
}

/** An entry's path relative to the root; `..` above the root is clamped to it (normalizing against `/`). */
const clean = (name: string): string => posix.normalize(`/${name}`).replace(/^\/+/, "").replace(/\/+$/, "")

/** Applies one layer (a gzip-compressed tar stream) onto `root`. */
export const applyLayer = async (root: string, layer: NodeJS.ReadableStream): Promise<void> => {
  const extract = tar.extract()
  const done = pipeline(layer as Readable, createGunzip(), extract)
  const dirModes: Array<[string, number]> = []
  for await (const entry of extract) {
    const h = entry.header
    const rel = clean(h.name)
    if (rel === "") {
      entry.resume()
      continue
    }
    const base = posix.basename(rel)
    const parent = resolveInRoot(root, posix.dirname(rel), true)
    if (base === ".wh..wh..opq") {
      if (existsSync(parent)) for (const f of readdirSync(parent)) rmSync(join(parent, f), { recursive: true, force: true })
      entry.resume()
      continue
    }
    if (base.startsWith(".wh.")) {
      rmSync(join(parent, base.slice(4)), { recursive: true, force: true })
      entry.resume()
      continue
    }
    mkdirSync(parent, { recursive: true })
    const target = join(parent, base)
    const existing = existsSync(target) || isLink(target) ? lstatSync(target) : undefined
    if (h.type === "directory") {
      if (existing && !existing.isDirectory()) rmSync(target, { force: true })
      mkdirSync(target, { recursive: true })
      chownSync(target, h.uid, h.gid)
      dirModes.push([target, h.mode])
      entry.resume()
      continue
    }
    if (existing) rmSync(target, { recursive: true, force: true })
    if (h.type === "symlink") {
      symlinkSync(h.linkname, target)
      lchownSync(target, h.uid, h.gid)
      entry.resume()
    } else if (h.type === "link") {
      linkSync(resolveInRoot(root, clean(h.linkname)), target)
      entry.resume()
    } else if (h.type === "file" || h.type === "contiguous-file") {
      await pipeline(entry, createWriteStream(target, { mode: 0o600 }))
      chownSync(target, h.uid, h.gid)
      chmodSync(target, h.mode)
    } else {
      // Devices and FIFOs: a kubelet's runtime would mknod them; nothing the harness runs needs one.
      entry.resume()
    }
  }
  await done
  // Directory modes last, so a read-only directory still received its entries.
  for (const [d, mode] of dirModes.reverse()) chmodSync(d, mode)
}

const isLink = (p: string) => {
  try {
    return lstatSync(p).isSymbolicLink()
  } catch {
    return false
  }
}

const inflight = new Map<string, Promise<PulledImage>>()

/**
 * Pulls `ref` for the build machine's platform into `<imagesDir>/<digest>/rootfs` (once per digest; a second pull of
 * the same content is a cache hit, as on a node).
 */
export const pullImage = (client: OciClient, ref: string, imagesDir: string): Promise<PulledImage> => {
  const key = `${imagesDir}\0${ref}`
  if (!inflight.has(key)) {
    inflight.set(
      key,
      pull(client, ref, imagesDir).finally(() => inflight.delete(key)),
    )
  }
  return inflight.get(key)!
}

const pull = async (client: OciClient, ref: string, imagesDir: string): Promise<PulledImage> => {
  const r = parseReference(ref)
  const repo = `${r.registry}/${r.repository}`
  const top = await client.fetchManifest(ref)
  let manifest: ImageManifest
  let digest = top.descriptor.digest
  if (isIndexMediaType(top.descriptor.mediaType)) {
    const arch = ARCH[process.arch] ?? process.arch
    const child = (top.manifest as ImageIndex).manifests.find((m) => m.platform?.os === "linux" && m.platform.architecture === arch)
    if (!child) throw new Error(`image ${ref} has no linux/${arch} manifest`)
    const fetched = await client.fetchManifest(`${repo}@${child.digest}`)
    manifest = fetched.manifest as ImageManifest
    digest = fetched.descriptor.digest
  } else manifest = top.manifest as ImageManifest
  const imageID = `${repo}@${top.descriptor.digest}`
  const dir = join(imagesDir, digest.replace(":", "-"))
  const rootfs = join(dir, "rootfs")
  const configFile = join(dir, "config.json")
  if (!existsSync(join(dir, ".complete"))) {
    // Unpacked beside its place and renamed into it: two pulls of one digest (a tag and the digest) never share a
    // half-written root, and the one that loses the rename drops its copy.
    const tmp = `${dir}.partial-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
    mkdirSync(join(tmp, "rootfs"), { recursive: true })
    try {
      const config = await client.fetchBlob(repo, { digest: manifest.config.digest, size: manifest.config.size })
      for (const l of manifest.layers) await applyLayer(join(tmp, "rootfs"), await client.pullBlob(repo, { digest: l.digest, size: l.size }))
      writeFileSync(join(tmp, "config.json"), config)
      writeFileSync(join(tmp, ".complete"), "")
      mkdirSync(dirname(dir), { recursive: true })
      if (!existsSync(join(dir, ".complete"))) {
        rmSync(dir, { recursive: true, force: true })
        renameSync(tmp, dir)
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true })
    }
  }
  const config = (JSON.parse(readFileSync(configFile, "utf8")) as { config?: ImageConfig }).config ?? {}
  return { ref, digest, imageID, rootfs, config }
}
