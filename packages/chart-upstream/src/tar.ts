/**
 * A deterministic `.tgz` writer: ustar headers (mode 0644, uid/gid 0, a fixed mtime), files in the order given,
 * gzip with Node's zlib (header mtime 0). The same entries always give the same bytes, so fixture charts have
 * stable digests from run to run.
 */
import { gzipSync } from "node:zlib"

export interface TarFile {
  readonly path: string
  readonly data: Buffer
}

const BLOCK = 512
/** The mtime every entry gets: AICR's reproducible OCI pushes use the epoch too (aicr-cli.md §3.3). */
export const FIXED_MTIME = new Date("2026-01-01T00:00:00Z")

const put = (h: Buffer, offset: number, length: number, value: string) => {
  h.write(value, offset, Math.min(length, Buffer.byteLength(value)), "utf8")
}
const putOctal = (h: Buffer, offset: number, length: number, value: number) => put(h, offset, length, value.toString(8).padStart(length - 1, "0") + "\0")

const header = (path: string, size: number, mode: number, mtime: Date): Buffer => {
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
  h[156] = 0x30
  put(h, 257, 6, "ustar\0")
  put(h, 263, 2, "00")
  put(h, 345, 155, prefix)
  let sum = 0
  for (const b of h) sum += b
  put(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ")
  return h
}

/** An uncompressed ustar archive of `files`. `modes` overrides 0644 per path (e.g. 0755 for scripts). */
export const writeTar = (files: readonly TarFile[], options: { readonly mtime?: Date; readonly modes?: Readonly<Record<string, number>> } = {}): Buffer => {
  const mtime = options.mtime ?? FIXED_MTIME
  const blocks: Buffer[] = []
  for (const f of files) {
    blocks.push(header(f.path, f.data.length, options.modes?.[f.path] ?? 0o644, mtime), f.data, Buffer.alloc((BLOCK - (f.data.length % BLOCK)) % BLOCK))
  }
  blocks.push(Buffer.alloc(BLOCK * 2))
  return Buffer.concat(blocks)
}

/** A gzipped {@link writeTar}. */
export const writeTgz = (files: readonly TarFile[], options: { readonly mtime?: Date; readonly modes?: Readonly<Record<string, number>> } = {}): Buffer =>
  gzipSync(writeTar(files, options), { level: 9 })
