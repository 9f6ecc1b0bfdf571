/**
 * A small tar reader and a deterministic tar writer: enough to read `Chart.yaml` from a chart archive and to build
 * the archives the operator pushes (wrapper charts, the bundle) and its fixture charts.
 *
 * Reader: ustar, with PAX and GNU long names. Writer: ustar (long paths split into prefix and name), uid/gid 0, a
 * fixed mtime, mode 0644 unless given, files in the order given (optionally with their directories' entries), gzip
 * at level 9 with a zero header mtime (Node's zlib): the same files always give the same bytes, hence the same
 * digests.
 */
import { constants as zlibConstants, gunzipSync, gzipSync } from "node:zlib"

/** One regular file of an archive. */
export interface TarEntry {
  readonly path: string
  readonly data: Buffer
  /** Permission bits as read from the header (reading only; writers take modes from their options). */
  readonly mode?: number
}

const BLOCK = 512

const field = (block: Buffer, offset: number, length: number): string => {
  const raw = block.subarray(offset, offset + length)
  const nul = raw.indexOf(0)
  return raw.subarray(0, nul === -1 ? length : nul).toString("utf8")
}

const octal = (block: Buffer, offset: number, length: number): number => {
  // GNU base-256 for sizes over 8 GiB: high bit of the first byte set.
  if ((block[offset]! & 0x80) !== 0) {
    let n = 0
    for (let i = offset + 1; i < offset + length; i++) n = n * 256 + block[i]!
    return n
  }
  const s = field(block, offset, length).trim()
  return s.length === 0 ? 0 : parseInt(s, 8)
}

const parsePax = (data: Buffer): Record<string, string> => {
  const out: Record<string, string> = {}
  let i = 0
  while (i < data.length) {
    const space = data.indexOf(0x20, i)
    if (space === -1) break
    const len = Number(data.subarray(i, space).toString("utf8"))
    if (!Number.isFinite(len) || len <= 0) break
    const record = data.subarray(space + 1, i + len - 1).toString("utf8")
    const eq = record.indexOf("=")
    if (eq !== -1) out[record.slice(0, eq)] = record.slice(eq + 1)
    i += len
  }
  return out
}

/**
 * The regular files of `archive`; returns `"end"` at the end-of-archive block, `"short"` when the bytes stop first
 * (a cut archive, or a prefix of one) without a partial entry, and throws when an entry runs past the end.
 */
function* entries(archive: Buffer): Generator<TarEntry, "end" | "short"> {
  let offset = 0
  let longName: string | undefined
  let pax: Record<string, string> = {}
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK)
    if (header.every((b) => b === 0)) return "end"
    const size = octal(header, 124, 12)
    const type = String.fromCharCode(header[156] || 0x30)
    const dataStart = offset + BLOCK
    if (dataStart + size > archive.length) throw new Error("Truncated tar archive")
    const data = archive.subarray(dataStart, dataStart + size)
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK
    if (type === "L") {
      longName = data.toString("utf8").replace(/\0+$/, "")
      continue
    }
    if (type === "x") {
      pax = parsePax(data)
      continue
    }
    if (type === "g") continue
    const prefix = field(header, 345, 155)
    const name = pax.path ?? longName ?? (prefix.length > 0 ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100))
    longName = undefined
    pax = {}
    if (type === "0" || type === "\0" || type === "7") yield { path: name, data, mode: octal(header, 100, 8) & 0o777 }
  }
  return "short"
}

/**
 * Yields the regular files of an uncompressed tar archive, stopping early when the caller stops iterating.
 * Throws `Error` on a truncated or corrupt archive.
 */
export function* readTar(archive: Buffer): Generator<TarEntry> {
  yield* entries(archive)
}

/** Gunzips (at most `maxBytes` of output) and reads a `.tgz`. */
export function* readTgz(tgz: Uint8Array, maxBytes = 256 * 1024 * 1024): Generator<TarEntry> {
  yield* readTar(gunzipSync(tgz, { maxOutputLength: maxBytes }))
}

/**
 * The first regular file of a `.tgz` whose path `matches`, or undefined. Inflates a growing prefix of the gzip
 * stream (64 KiB, then ×4; `Z_SYNC_FLUSH` returns what a prefix holds) until the file is complete, so a file near
 * the start of a large archive, such as the `Chart.yaml` that `helm package` writes first, costs a few KiB of
 * inflating instead of the whole archive. Throws `Error` when the archive is not a gzipped tar.
 */
export const findInTgz = (tgz: Uint8Array, matches: (path: string) => boolean, maxBytes = 256 * 1024 * 1024): Buffer | undefined => {
  for (let take = 64 * 1024; ; take *= 4) {
    const whole = take >= tgz.length
    let archive: Buffer
    try {
      archive = gunzipSync(
        tgz.subarray(0, Math.min(take, tgz.length)),
        whole ? { maxOutputLength: maxBytes } : { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: maxBytes },
      )
    } catch (e) {
      if (whole) throw e
      continue
    }
    try {
      const it = entries(archive)
      for (let r = it.next(); ; r = it.next()) {
        if (r.done === true) {
          if (r.value === "end" || whole) return undefined
          break // this prefix ends between entries: inflate more
        }
        if (matches(r.value.path)) return r.value.data
      }
    } catch (e) {
      if (whole) throw e // this prefix ends inside an entry: inflate more
    }
  }
}

/** How {@link writeTar} writes entries. */
export interface TarWriteOptions {
  /** Every entry's mtime. Default: the epoch, as AICR's and our reproducible pushes use. */
  readonly mtime?: Date
  /** Modes by path (e.g. 0o755 for scripts); default 0o644. */
  readonly modes?: Readonly<Record<string, number>>
  /**
   * Write a directory entry (`dir/`, mode 0755) before the first file under each directory, parents first, as
   * `tar -c` and `oras push <dir>` do: extractors that do not create missing parents (the `oras` CLI) need them.
   * Default false (Helm's chart archives have none).
   */
  readonly directories?: boolean
}

const put = (h: Buffer, offset: number, length: number, value: string) => void h.write(value, offset, Math.min(length, Buffer.byteLength(value)), "utf8")
const putOctal = (h: Buffer, offset: number, length: number, value: number) => put(h, offset, length, value.toString(8).padStart(length - 1, "0") + "\0")

const header = (path: string, size: number, mode: number, mtime: Date, type: "0" | "5" = "0"): Buffer => {
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
  putOctal(h, 136, 12, Math.floor(mtime.getTime() / 1000))
  h.fill(0x20, 148, 156)
  h[156] = type.charCodeAt(0)
  put(h, 257, 6, "ustar\0")
  put(h, 263, 2, "00")
  put(h, 345, 155, prefix)
  let sum = 0
  for (const b of h) sum += b
  put(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ")
  return h
}

/**
 * An uncompressed ustar archive of regular files, in the order given (with `directories`, each preceded by the
 * entries of its directories not written yet). Throws on a path ustar cannot hold.
 */
export const writeTar = (files: readonly TarEntry[], options: TarWriteOptions = {}): Buffer => {
  const mtime = options.mtime ?? new Date(0)
  const blocks: Buffer[] = []
  const written = new Set<string>()
  for (const f of files) {
    if (options.directories === true) {
      const parts = f.path.split("/").slice(0, -1)
      for (let i = 1; i <= parts.length; i++) {
        const dir = `${parts.slice(0, i).join("/")}/`
        if (written.has(dir)) continue
        written.add(dir)
        blocks.push(header(dir, 0, 0o755, mtime, "5"))
      }
    }
    blocks.push(header(f.path, f.data.length, options.modes?.[f.path] ?? 0o644, mtime), f.data, Buffer.alloc((BLOCK - (f.data.length % BLOCK)) % BLOCK))
  }
  blocks.push(Buffer.alloc(BLOCK * 2))
  return Buffer.concat(blocks)
}

/** gzip as {@link writeTgz} compresses: level 9, header mtime 0; deterministic. */
export const gzip = (data: Uint8Array): Buffer => gzipSync(data, { level: 9 })

/** A gzipped {@link writeTar}. */
export const writeTgz = (files: readonly TarEntry[], options: TarWriteOptions = {}): Buffer => gzip(writeTar(files, options))
