/**
 * A minimal tar reader and writer (ustar, with PAX and GNU long names on read): enough to find `Chart.yaml` in a
 * chart archive and, in tests, to build one.
 */
import { gunzipSync, gzipSync } from "node:zlib"

/** One regular file of an archive. */
export interface TarEntry {
  readonly path: string
  readonly data: Buffer
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
 * Yields the regular files of an uncompressed tar archive, stopping early when the caller stops iterating.
 * Throws `Error` on a truncated or corrupt archive.
 */
export function* readTar(archive: Buffer): Generator<TarEntry> {
  let offset = 0
  let longName: string | undefined
  let pax: Record<string, string> = {}
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK)
    if (header.every((b) => b === 0)) return
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
    if (type === "0" || type === "\0" || type === "7") yield { path: name, data }
  }
}

/** Gunzips (at most `maxBytes` of output) and reads a `.tgz`. */
export function* readTgz(tgz: Uint8Array, maxBytes = 256 * 1024 * 1024): Generator<TarEntry> {
  yield* readTar(gunzipSync(tgz, { maxOutputLength: maxBytes }))
}

const writeField = (block: Buffer, offset: number, length: number, value: string) => {
  block.write(value, offset, Math.min(length, Buffer.byteLength(value)), "utf8")
}

const writeOctal = (block: Buffer, offset: number, length: number, value: number) => {
  writeField(block, offset, length, value.toString(8).padStart(length - 1, "0") + "\0")
}

/**
 * Writes a ustar archive of regular files (mode 0644, fixed mtime, so output is deterministic), gzipped.
 * Paths must fit ustar's 100-byte name field.
 */
export const writeTgz = (entries: readonly TarEntry[], mtime = new Date("2026-01-01T00:00:00Z")): Buffer => {
  const blocks: Buffer[] = []
  for (const e of entries) {
    if (Buffer.byteLength(e.path) > 100) throw new Error(`Tar path too long: ${e.path}`)
    const h = Buffer.alloc(BLOCK)
    writeField(h, 0, 100, e.path)
    writeOctal(h, 100, 8, 0o644)
    writeOctal(h, 108, 8, 0)
    writeOctal(h, 116, 8, 0)
    writeOctal(h, 124, 12, e.data.length)
    writeOctal(h, 136, 12, Math.floor(mtime.getTime() / 1000))
    h.fill(0x20, 148, 156)
    h[156] = 0x30
    writeField(h, 257, 6, "ustar\0")
    writeField(h, 263, 2, "00")
    let sum = 0
    for (const b of h) sum += b
    writeField(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ")
    blocks.push(h, e.data, Buffer.alloc((BLOCK - (e.data.length % BLOCK)) % BLOCK))
  }
  blocks.push(Buffer.alloc(BLOCK * 2))
  return gzipSync(Buffer.concat(blocks))
}
