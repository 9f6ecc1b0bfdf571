/**
 * Content digests: compute them in one go or while streaming, and verify streamed content against a descriptor.
 */
import { createHash, type Hash } from "node:crypto"
import { Transform, type TransformCallback } from "node:stream"
import { type ErrorTarget, ociError } from "./errors"
import { DIGEST_HEX_LENGTH } from "./reference"

/** Digest algorithms this package can compute. */
export type DigestAlgorithm = "sha256" | "sha512"

/** `sha256:<hex>` (or `sha512:`) of `data`. */
export const digestOf = (data: Uint8Array | string, algorithm: DigestAlgorithm = "sha256"): string =>
  `${algorithm}:${createHash(algorithm).update(data).digest("hex")}`

/** The algorithm of `digest`, or throws `Invalid` if we cannot compute it. */
export const digestAlgorithm = (digest: string, target: ErrorTarget): DigestAlgorithm => {
  const algorithm = digest.slice(0, digest.indexOf(":"))
  if (algorithm === "sha256" || algorithm === "sha512") {
    if (digest.length - algorithm.length - 1 === DIGEST_HEX_LENGTH[algorithm]) return algorithm
  }
  throw ociError({ ...target, reference: digest }, { _tag: "Invalid" }, `Unsupported or malformed digest ${digest}`)
}

/** What a verified stream must amount to. `size` is optional (unknown for a manifest fetched by tag). */
export interface Expected {
  readonly digest: string
  readonly size?: number | undefined
}

/**
 * A pass-through stream that hashes and counts what flows through it.
 *
 * With `expected`, it fails the stream with `OciError` reason `DigestMismatch` as soon as more bytes than
 * `expected.size` arrive, and at the end if the size or digest differ, so a consumer never sees a clean end of a
 * tampered blob. Without it, it only measures (`digest`/`size` are valid after `finish`).
 *
 * Gotchas:
 * - Bytes before the failure have already been passed on; consumers that must not keep partial data write to a
 *   temporary file and rename on success (see `OciClient.pullBlobToFile`).
 *
 * @example
 * ```ts
 * import { Readable } from "node:stream"
 * import { pipeline } from "node:stream/promises"
 * import { DigestStream, digestOf } from "@aicr/oras"
 * const v = new DigestStream({ registry: "r" }, "sha256", { digest: digestOf("hi"), size: 2 })
 * await pipeline(Readable.from([Buffer.from("hi")]), v, async function* (src) { for await (const _ of src) {} })
 * ```
 */
export class DigestStream extends Transform {
  private readonly hash: Hash
  private count = 0
  private computed: string | undefined

  constructor(
    private readonly target: ErrorTarget,
    private readonly algorithm: DigestAlgorithm = "sha256",
    private readonly expected?: Expected,
  ) {
    super()
    this.hash = createHash(algorithm)
  }

  /** Bytes seen so far. */
  get size(): number {
    return this.count
  }

  /** The digest of everything seen; only defined once the stream has ended. */
  get digest(): string | undefined {
    return this.computed
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.count += chunk.length
    const limit = this.expected?.size
    if (limit !== undefined && this.count > limit) {
      done(this.mismatch(`received more than the expected ${limit} bytes`))
      return
    }
    this.hash.update(chunk)
    done(null, chunk)
  }

  override _flush(done: TransformCallback): void {
    this.computed = `${this.algorithm}:${this.hash.digest("hex")}`
    const e = this.expected
    if (e !== undefined && e.size !== undefined && this.count !== e.size) {
      done(this.mismatch(`received ${this.count} of ${e.size} bytes`))
    } else if (e !== undefined && this.computed !== e.digest) {
      done(this.mismatch(`content hashes to ${this.computed}`))
    } else {
      done()
    }
  }

  private mismatch(why: string) {
    const expected = this.expected!.digest
    return ociError(
      { ...this.target, reference: expected },
      { _tag: "DigestMismatch", expected, ...(this.computed !== undefined ? { actual: this.computed } : {}) },
      `Content of ${expected} does not verify: ${why}`,
    )
  }
}

/** Throws `DigestMismatch` unless `data` hashes to `expected` (and has its size, if given). */
export const verifyBytes = (data: Uint8Array, expected: Expected, target: ErrorTarget): void => {
  const algorithm = digestAlgorithm(expected.digest, target)
  const actual = digestOf(data, algorithm)
  if (actual !== expected.digest || (expected.size !== undefined && expected.size !== data.length)) {
    throw ociError(
      { ...target, reference: expected.digest },
      { _tag: "DigestMismatch", expected: expected.digest, actual },
      `Content of ${expected.digest} does not verify: got ${data.length} bytes hashing to ${actual}`,
    )
  }
}
