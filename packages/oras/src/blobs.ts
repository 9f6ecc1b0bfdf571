/**
 * Reading blobs: existence checks (HEAD), verified streaming pulls, small in-memory fetches and atomic
 * pulls to a file.
 */
import { randomBytes } from "node:crypto"
import { createWriteStream } from "node:fs"
import { rename, rm } from "node:fs/promises"
import { type Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { ociError } from "./errors"
import { type CallOptions, type Ctx, pull, push, type Repo, target } from "./context"
import { DigestStream, digestAlgorithm, type Expected } from "./digest"

/** What a HEAD on a blob tells: its digest and size. */
export interface BlobInfo {
  readonly digest: string
  readonly size: number
}

const blobPath = (repo: Repo, digest: string) => `/v2/${repo.repository}/blobs/${digest}`

/**
 * `HEAD /v2/<name>/blobs/<digest>`: the blob's size if `repo` has it, undefined if not (404).
 * Other failures throw `OciError`.
 */
export const blobExists = async (
  ctx: Ctx,
  repo: Repo,
  digest: string,
  opts: CallOptions & { readonly forPush?: boolean } = {},
): Promise<BlobInfo | undefined> => {
  const t = target(repo, digest)
  // Before an upload, ask for the push scope right away: one token then serves the HEAD, POST and PUT.
  const scopes = opts.forPush === true ? push(repo) : pull(repo)
  const res = await ctx.transport.send({ method: "HEAD", registry: repo.registry, path: blobPath(repo, digest), scopes, signal: opts.signal }, t)
  await res.body.dump()
  if (res.status === 404) return undefined
  if (res.status !== 200) throw await ctx.transport.failure(res, t, `Checking blob ${digest} in ${repo.repository}`)
  const length = Number(res.header("content-length") ?? Number.NaN)
  return { digest, size: Number.isFinite(length) ? length : -1 }
}

/**
 * `GET /v2/<name>/blobs/<digest>` as a stream that is verified while it flows: the stream errors with
 * `DigestMismatch` if the content does not hash to `expected.digest` or has the wrong size.
 *
 * Gotchas:
 * - The consumer must read the stream to the end (or destroy it) to release the connection.
 * - Bytes before a failure have been delivered; use {@link pullBlobToFile} for all-or-nothing.
 */
export const pullBlob = async (ctx: Ctx, repo: Repo, expected: Expected, opts: CallOptions = {}): Promise<Readable> => {
  const t = target(repo, expected.digest)
  const algorithm = digestAlgorithm(expected.digest, t)
  const res = await ctx.transport.send(
    { method: "GET", registry: repo.registry, path: blobPath(repo, expected.digest), scopes: pull(repo), signal: opts.signal },
    t,
  )
  if (res.status !== 200) throw await ctx.transport.failure(res, t, `Pulling blob ${expected.digest} from ${repo.repository}`)
  const length = res.header("content-length")
  if (expected.size !== undefined && length !== undefined && Number(length) !== expected.size) {
    await res.body.dump()
    throw ociError(t, { _tag: "DigestMismatch", expected: expected.digest }, `Blob ${expected.digest} is ${length} bytes, expected ${expected.size}`)
  }
  const verify = new DigestStream(t, algorithm, expected)
  res.body.on("error", (err) => verify.destroy(err))
  return res.body.pipe(verify)
}

/**
 * Pulls a blob fully into memory, verified. Refuses (`TooLarge`) blobs larger than `maxBytes`
 * (default 4 MiB): this is for configs and small artifacts, not layers.
 */
export const fetchBlob = async (ctx: Ctx, repo: Repo, expected: Expected, opts: CallOptions & { readonly maxBytes?: number } = {}): Promise<Buffer> => {
  const limit = opts.maxBytes ?? 4 * 1024 * 1024
  if (expected.size !== undefined && expected.size > limit) {
    throw ociError(
      target(repo, expected.digest),
      { _tag: "TooLarge", limit, size: expected.size },
      `Blob ${expected.digest} is ${expected.size} bytes, over the in-memory limit of ${limit}`,
    )
  }
  const stream = await pullBlob(ctx, repo, expected, opts)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) {
      stream.destroy()
      throw ociError(target(repo, expected.digest), { _tag: "TooLarge", limit }, `Blob ${expected.digest} exceeds the in-memory limit of ${limit} bytes`)
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * Pulls a blob to `path` atomically: the content streams into a temporary file beside `path`, which is renamed
 * into place only after the digest verified, and removed on any failure.
 */
export const pullBlobToFile = async (ctx: Ctx, repo: Repo, expected: Expected, path: string, opts: CallOptions = {}): Promise<BlobInfo> => {
  const tmp = `${path}.partial-${randomBytes(6).toString("hex")}`
  try {
    const stream = await pullBlob(ctx, repo, expected, opts)
    await pipeline(stream, createWriteStream(tmp, { flags: "wx" }), opts.signal !== undefined ? { signal: opts.signal } : {})
    await rename(tmp, path)
    return { digest: expected.digest, size: stream instanceof DigestStream ? stream.size : -1 }
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
}
