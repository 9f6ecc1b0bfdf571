// Fixtures for the real-registry tests: generated blob streams, a memory sampler, paths into a registry's
// filesystem storage, and manifest builders.
import { createHash, randomBytes } from "node:crypto"
import { join } from "node:path"
import { Readable } from "node:stream"
import v8 from "node:v8"
import { runInNewContext } from "node:vm"
import { type Descriptor, digestOf, type ImageManifest, isOciError, MediaType, type OciError } from "../../src/index"

/**
 * A deterministic pseudo-random stream of `size` bytes, produced chunk by chunk (never held whole), and its digest
 * computed the same way.
 */
export const generatedBlob = (size: number, seed = 1, chunk = 1024 * 1024) => {
  const base = createHash("sha512").update(String(seed)).digest()
  const block = Buffer.alloc(chunk)
  for (let i = 0; i < chunk; i += base.length) base.copy(block, i)
  const piece = (i: number) => {
    const len = Math.min(chunk, size - i * chunk)
    const b = Buffer.from(block.subarray(0, len))
    if (len >= 4) b.writeUInt32BE(i >>> 0, 0)
    return b
  }
  const count = Math.ceil(size / chunk)
  const digest = (() => {
    const h = createHash("sha256")
    for (let i = 0; i < count; i++) h.update(piece(i))
    return `sha256:${h.digest("hex")}`
  })()
  return {
    size,
    digest,
    stream: () =>
      Readable.from(
        (function* () {
          for (let i = 0; i < count; i++) yield piece(i)
        })(),
        // Byte mode with a one-chunk buffer: the source itself holds at most ~2 chunks.
        { objectMode: false, highWaterMark: chunk },
      ),
  }
}

/** A handle on V8's full garbage collection, so memory samples count live data only. */
const collectGarbage = (() => {
  v8.setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

/**
 * Samples live memory (after a full GC) every `everyMs`; `stop()` returns the peak growth over the baseline in
 * bytes. Garbage the process has not collected yet does not count, so the figure is what was actually held.
 */
export const memorySampler = (everyMs = 20) => {
  collectGarbage()
  const base = process.memoryUsage()
  let peakRss = 0
  let peakBuffers = 0
  let peakHeap = 0
  const sample = () => {
    collectGarbage()
    const m = process.memoryUsage()
    peakRss = Math.max(peakRss, m.rss - base.rss)
    peakBuffers = Math.max(peakBuffers, m.arrayBuffers - base.arrayBuffers)
    peakHeap = Math.max(peakHeap, m.heapUsed - base.heapUsed)
  }
  const timer = setInterval(sample, everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      sample()
      return { rss: peakRss, arrayBuffers: peakBuffers, heapUsed: peakHeap }
    },
  }
}

/** The file a distribution registry started by the harness as `name` keeps a blob's content in. */
export const blobDataPath = (registryDir: string, name: string, digest: string): string => {
  const hex = digest.slice("sha256:".length)
  return join(registryDir, name, "data", "docker", "registry", "v2", "blobs", "sha256", hex.slice(0, 2), hex, "data")
}

/** A unique repository name per test run, so tests never see each other's content. */
export const uniqueRepo = (prefix: string): string => `${prefix}-${randomBytes(4).toString("hex")}`

/** A small image manifest over the given blobs (first is config). */
export const imageManifest = (config: Descriptor, layers: readonly Descriptor[], extra: Partial<ImageManifest> = {}): ImageManifest => ({
  schemaVersion: 2,
  mediaType: MediaType.OciManifest,
  config,
  layers,
  ...extra,
})

/** A descriptor for bytes. */
export const describeBytes = (mediaType: string, bytes: Uint8Array): Descriptor => ({ mediaType, digest: digestOf(bytes), size: bytes.length })

/** The OciError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export const failure = async (p: Promise<unknown>): Promise<OciError> => {
  try {
    await p
  } catch (e) {
    if (isOciError(e)) return e
    throw e
  }
  throw new Error("expected a failure")
}
