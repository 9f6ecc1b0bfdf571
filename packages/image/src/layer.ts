/**
 * Reproducible image layers: a directory tree becomes a gzip-compressed tar whose bytes depend only on the files'
 * paths, contents, modes and link targets. Entries are sorted by path (byte order), every mtime is
 * `SOURCE_DATE_EPOCH` (default 0), owners are 0:0 unless an owner rule says otherwise, user/group names are empty,
 * and gzip writes no timestamp or file name (Node's zlib). The layer's `diffID` (sha256 of the tar) and `digest`
 * (sha256 of the gzip) are computed while it is written, in one pass.
 *
 * Gotchas:
 * - Hard links are stored as regular files (dpkg-deb never creates them; nothing here needs them).
 * - Sockets, FIFOs and devices are refused: an image layer has no business carrying them.
 */
import { createHash } from "node:crypto"
import { createReadStream, createWriteStream, lstatSync, readdirSync, readlinkSync } from "node:fs"
import { join } from "node:path"
import { Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import { createGzip } from "node:zlib"
import tar from "tar-stream"

/** One entry of a layer, in the order written. */
export interface LayerEntry {
  /** Path inside the image, without a leading slash; directories without a trailing one. */
  readonly path: string
  readonly type: "file" | "directory" | "symlink"
  /** Permission bits (including setuid/setgid/sticky). */
  readonly mode: number
  readonly uid: number
  readonly gid: number
  /** For files: the source file on disk or the bytes. */
  readonly source?: string | Buffer
  readonly size?: number
  /** For symlinks. */
  readonly target?: string
}

/** Who owns a path inside the image: the first rule whose prefix matches; default 0:0. */
export interface OwnerRule {
  readonly prefix: string
  readonly uid: number
  readonly gid: number
}

/** The written layer: where its gzip is, and the two digests an image needs. */
export interface Layer {
  readonly file: string
  /** sha256 of the compressed bytes (the blob digest in the manifest). */
  readonly digest: string
  /** Compressed size in bytes. */
  readonly size: number
  /** sha256 of the uncompressed tar (the config's rootfs.diff_ids). */
  readonly diffId: string
  /** Uncompressed size in bytes. */
  readonly uncompressedSize: number
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** Every entry under `root` (not root itself), sorted by path, with owners from `owners`. */
export const entriesOf = (root: string, owners: ReadonlyArray<OwnerRule> = []): LayerEntry[] => {
  const out: LayerEntry[] = []
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort(byteOrder)) {
      const abs = join(dir, name)
      const path = rel === "" ? name : `${rel}/${name}`
      const st = lstatSync(abs)
      const owner = owners.find((o) => path === o.prefix || path.startsWith(`${o.prefix}/`)) ?? { uid: 0, gid: 0 }
      const base = { path, mode: st.mode & 0o7777, uid: owner.uid, gid: owner.gid }
      if (st.isSymbolicLink()) out.push({ ...base, type: "symlink", target: readlinkSync(abs) })
      else if (st.isDirectory()) {
        out.push({ ...base, type: "directory" })
        walk(abs, path)
      } else if (st.isFile()) out.push({ ...base, type: "file", source: abs, size: st.size })
      else throw new Error(`${abs}: not a file, directory or symlink; an image layer cannot hold it`)
    }
  }
  walk(root, "")
  // Parents precede children in a depth-first walk over sorted names only if "/" sorts first; sort whole paths to
  // make the order independent of that, then keep directories before their contents (they already are: "a" < "a/x").
  return out.sort((a, b) => byteOrder(a.path, b.path))
}

class Hashing extends Transform {
  readonly hash = createHash("sha256")
  bytes = 0
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null, d?: Buffer) => void) {
    this.hash.update(chunk)
    this.bytes += chunk.length
    cb(null, chunk)
  }
}

/** The fixed mtime of every entry: `SOURCE_DATE_EPOCH` seconds, else 0. */
export const sourceDateEpoch = (env: Readonly<Record<string, string | undefined>> = process.env): Date =>
  new Date(Number(env["SOURCE_DATE_EPOCH"] ?? "0") * 1000)

const writeEntry = (pack: tar.Pack, e: LayerEntry, mtime: Date): Promise<void> =>
  new Promise((resolve, reject) => {
    const header = { name: e.type === "directory" ? `${e.path}/` : e.path, mode: e.mode, uid: e.uid, gid: e.gid, uname: "", gname: "", mtime }
    const done = (err?: Error | null) => (err ? reject(err) : resolve())
    if (e.type === "directory") return void pack.entry({ ...header, type: "directory" }, done)
    if (e.type === "symlink") return void pack.entry({ ...header, type: "symlink", linkname: e.target! }, done)
    if (Buffer.isBuffer(e.source)) return void pack.entry({ ...header, type: "file", size: e.source.length }, e.source, done)
    const sink = pack.entry({ ...header, type: "file", size: e.size! }, done)
    createReadStream(e.source!).on("error", reject).pipe(sink)
  })

/** Writes `entries` as a gzip-compressed tar to `file`. */
export const writeLayer = async (entries: ReadonlyArray<LayerEntry>, file: string, opts: { mtime?: Date; level?: number } = {}): Promise<Layer> => {
  const mtime = opts.mtime ?? sourceDateEpoch()
  const pack = tar.pack()
  const tarHash = new Hashing()
  const gzHash = new Hashing()
  const written = pipeline(pack, tarHash, createGzip({ level: opts.level ?? 6 }), gzHash, createWriteStream(file))
  try {
    for (const e of entries) await writeEntry(pack, e, mtime)
    pack.finalize()
  } catch (err) {
    pack.destroy(err as Error)
  }
  await written
  return {
    file,
    digest: `sha256:${gzHash.hash.digest("hex")}`,
    size: gzHash.bytes,
    diffId: `sha256:${tarHash.hash.digest("hex")}`,
    uncompressedSize: tarHash.bytes,
  }
}
