/**
 * Writing blobs: upload sessions (`POST …/blobs/uploads/`), cross-repository mounts, monolithic PUTs (from
 * bytes or a stream of known digest and size) and chunked PATCH uploads that hash while streaming.
 */
import { createHash } from "node:crypto"
import { Readable } from "node:stream"
import { ociError } from "./errors"
import { pullScope } from "./auth/challenge"
import { blobExists } from "./blobs"
import { type CallOptions, type Ctx, push, type Repo, target } from "./context"
import { digestAlgorithm, digestOf, DigestStream } from "./digest"
import { type RegistryResponse } from "./transport/http"

/**
 * Blob content: bytes, a Node stream, any async iterable of byte chunks, or a function that opens one; the
 * function is called only if the blob must actually be uploaded (not when skipped or mounted).
 */
export type BlobSource = Uint8Array | Readable | AsyncIterable<Uint8Array> | (() => Promise<Readable | AsyncIterable<Uint8Array>>)

/** Options of {@link pushBlob}. */
export interface PushBlobOptions extends CallOptions {
  /** The blob's digest if known. Required to skip, to mount and to stream monolithically. */
  readonly digest?: string | undefined
  /** The blob's size if known. Required to stream monolithically. */
  readonly size?: number | undefined
  /**
   * `monolithic`: one PUT (needs digest and size for a stream). `chunked`: PATCH chunks of `chunkSize`, each
   * retried on its own. `auto` (default): monolithic when digest and size are known, chunked otherwise.
   */
  readonly mode?: "auto" | "monolithic" | "chunked"
  /** Overrides the client's chunk size for this upload. */
  readonly chunkSize?: number | undefined
  /** A repository on the same registry to mount the blob from instead of uploading it (needs `digest`). */
  readonly mountFrom?: string | undefined
  /** HEAD first and skip the upload when the blob is already there. Default true (when `digest` is known). */
  readonly skipExisting?: boolean
}

/** What {@link pushBlob} did. `bytesUploaded` is 0 when skipped or mounted. */
export interface PushedBlob {
  readonly digest: string
  readonly size: number
  readonly skipped: boolean
  readonly mounted: boolean
  readonly bytesUploaded: number
}

type Session = { readonly kind: "mounted" } | { readonly kind: "session"; readonly location: string; readonly minChunk: number }

const uploadsPath = (repo: Repo) => `/v2/${repo.repository}/blobs/uploads/`

/** `POST …/blobs/uploads/`, with `?mount=&from=` when mounting. 201 = mounted, 202 = an upload session. */
const startUpload = async (ctx: Ctx, repo: Repo, mount: { digest: string; from: string } | undefined, opts: CallOptions): Promise<Session> => {
  const t = target(repo, mount?.digest)
  const res = await ctx.transport.send(
    {
      method: "POST",
      registry: repo.registry,
      path: uploadsPath(repo),
      query: mount !== undefined ? { mount: mount.digest, from: mount.from } : {},
      headers: { "content-length": "0" },
      scopes: mount !== undefined ? [...push(repo), pullScope(mount.from)] : push(repo),
      signal: opts.signal,
    },
    t,
  )
  if (mount !== undefined && res.status === 201) {
    await res.body.dump()
    return { kind: "mounted" }
  }
  if (res.status !== 202) throw await ctx.transport.failure(res, t, `Starting an upload to ${repo.repository}`)
  await res.body.dump()
  const location = res.header("location")
  if (location === undefined) throw ociError(t, { _tag: "Invalid" }, `Registry ${repo.registry} started an upload without a Location`)
  return {
    kind: "session",
    location: ctx.transport.url({ registry: repo.registry, path: location }),
    minChunk: Number(res.header("oci-chunk-min-length") ?? 0) || 0,
  }
}

const nextLocation = (ctx: Ctx, repo: Repo, res: RegistryResponse, current: string): string => {
  const l = res.header("location")
  return l === undefined ? current : ctx.transport.url({ registry: repo.registry, path: l, query: {} })
}

/** Best-effort cancel of an upload session we no longer need. */
const cancelUpload = async (ctx: Ctx, repo: Repo, location: string): Promise<void> => {
  try {
    const res = await ctx.transport.send({ method: "DELETE", registry: repo.registry, path: location, scopes: push(repo) }, target(repo))
    await res.body.dump()
  } catch {
    // An abandoned session is purged by the registry's upload purging.
  }
}

/** `PUT <location>?digest=` with the last (or only) bytes; checks 201 and the echoed digest. */
const commit = async (ctx: Ctx, repo: Repo, location: string, digest: string, body: Uint8Array | Readable, size: number, opts: CallOptions) => {
  const t = target(repo, digest)
  const url = new URL(location)
  url.searchParams.set("digest", digest)
  const res = await ctx.transport.send(
    {
      method: "PUT",
      registry: repo.registry,
      path: url.toString(),
      headers: { "content-type": "application/octet-stream", "content-length": String(size) },
      body,
      scopes: push(repo),
      signal: opts.signal,
    },
    t,
  )
  if (res.status !== 201) throw await ctx.transport.failure(res, t, `Uploading blob ${digest} to ${repo.repository}`)
  await res.body.dump()
  const echoed = res.header("docker-content-digest")
  if (echoed !== undefined && echoed !== digest) {
    throw ociError(t, { _tag: "DigestMismatch", expected: digest, actual: echoed }, `Registry stored blob ${digest} as ${echoed}`)
  }
}

/**
 * Re-chunks a byte stream into buffers of exactly `size` bytes (the last may be shorter), filling one
 * preallocated buffer at a time, so assembling a chunk costs one chunk of memory.
 */
export async function* rechunk(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, size: number): AsyncGenerator<Buffer> {
  let buf = Buffer.allocUnsafe(size)
  let fill = 0
  for await (const c of source) {
    for (let off = 0; off < c.length;) {
      const n = Math.min(size - fill, c.length - off)
      buf.set(c.subarray(off, off + n), fill)
      fill += n
      off += n
      if (fill === size) {
        yield buf
        buf = Buffer.allocUnsafe(size)
        fill = 0
      }
    }
  }
  if (fill > 0) yield buf.subarray(0, fill)
}

/** Parses a `Range: 0-<end>` upload-progress header into the number of bytes the registry holds. */
export const parseUploadRange = (range: string | undefined): number | undefined => {
  const m = /^(?:bytes=)?0-(\d+)$/.exec(range?.trim() ?? "")
  return m === null ? undefined : Number(m[1]) + 1
}

const chunkedUpload = async (
  ctx: Ctx,
  repo: Repo,
  start: string,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  chunkSize: number,
  o: PushBlobOptions,
) => {
  const algorithm = o.digest !== undefined ? digestAlgorithm(o.digest, target(repo)) : "sha256"
  const hash = createHash(algorithm)
  let location = start
  let offset = 0
  for await (const chunk of rechunk(source, chunkSize)) {
    hash.update(chunk)
    const end = offset + chunk.length
    const t = target(repo, o.digest)
    const res = await ctx.transport.send(
      {
        method: "PATCH",
        registry: repo.registry,
        path: location,
        headers: { "content-type": "application/octet-stream", "content-range": `${offset}-${end - 1}`, "content-length": String(chunk.length) },
        body: chunk,
        scopes: push(repo),
        signal: o.signal,
      },
      t,
    )
    if (res.status === 416) {
      // A retried chunk the registry already took: resynchronise from the session's status.
      await res.body.dump()
      const status = await ctx.transport.send({ method: "GET", registry: repo.registry, path: location, scopes: push(repo), signal: o.signal }, t)
      await status.body.dump()
      if (status.status !== 204 || parseUploadRange(status.header("range")) !== end) {
        throw ociError(t, { _tag: "Conflict" }, `Upload to ${repo.repository} is out of sync at byte ${offset}`, { status: 416 })
      }
      location = nextLocation(ctx, repo, status, location)
    } else if (res.status !== 202) {
      throw await ctx.transport.failure(res, t, `Uploading a chunk at byte ${offset} to ${repo.repository}`)
    } else {
      await res.body.dump()
      const held = parseUploadRange(res.header("range"))
      if (held !== undefined && held !== end) {
        throw ociError(t, { _tag: "Conflict" }, `Registry holds ${held} bytes of the upload to ${repo.repository}, expected ${end}`)
      }
      location = nextLocation(ctx, repo, res, location)
    }
    offset = end
  }
  const digest = `${algorithm}:${hash.digest("hex")}`
  if ((o.digest !== undefined && digest !== o.digest) || (o.size !== undefined && offset !== o.size)) {
    await cancelUpload(ctx, repo, location)
    throw ociError(
      target(repo, o.digest),
      { _tag: "DigestMismatch", expected: o.digest ?? "", actual: digest },
      `Uploaded content is ${offset} bytes hashing to ${digest}, expected ${o.digest} (${o.size ?? "?"} bytes)`,
    )
  }
  await commit(ctx, repo, location, digest, new Uint8Array(0), 0, o)
  return { digest, size: offset }
}

/**
 * Uploads a blob to `repo` and returns its descriptor fields. Skips blobs already present (HEAD), mounts from
 * `mountFrom` when given, falls back to uploading when the registry answers a mount with 202.
 *
 * Gotchas:
 * - A stream is consumed once: an upload that fails mid-stream is not retried (chunked uploads retry each chunk).
 * - Memory use is bounded by the chunk size for chunked uploads and by the socket buffers for streamed PUTs.
 */
export const pushBlob = async (ctx: Ctx, repo: Repo, input: BlobSource, o: PushBlobOptions = {}): Promise<PushedBlob> => {
  let source = input
  let digest = o.digest
  let size = o.size
  if (source instanceof Uint8Array) {
    const actual = digestOf(source, digest !== undefined ? digestAlgorithm(digest, target(repo)) : "sha256")
    if (digest !== undefined && digest !== actual) {
      throw ociError(target(repo, digest), { _tag: "DigestMismatch", expected: digest, actual }, `Blob bytes hash to ${actual}, not ${digest}`)
    }
    digest = actual
    size = source.length
  }
  if (digest !== undefined && o.skipExisting !== false) {
    const found = await blobExists(ctx, repo, digest, { signal: o.signal, forPush: true })
    if (found !== undefined) return { digest, size: found.size >= 0 ? found.size : (size ?? -1), skipped: true, mounted: false, bytesUploaded: 0 }
  }
  const mount = o.mountFrom !== undefined && digest !== undefined && o.mountFrom !== repo.repository ? { digest, from: o.mountFrom } : undefined
  const session = await startUpload(ctx, repo, mount, o)
  if (session.kind === "mounted") return { digest: digest!, size: size ?? -1, skipped: false, mounted: true, bytesUploaded: 0 }
  if (typeof source === "function") source = await source()
  try {
    return await upload(ctx, repo, source, session, digest, size, o)
  } catch (err) {
    // Release whatever the source holds (e.g. the pull stream of a copy) when the upload fails early.
    if (source instanceof Readable) source.destroy()
    throw err
  }
}

const upload = async (
  ctx: Ctx,
  repo: Repo,
  source: Uint8Array | Readable | AsyncIterable<Uint8Array>,
  session: { readonly location: string; readonly minChunk: number },
  digest: string | undefined,
  size: number | undefined,
  o: PushBlobOptions,
): Promise<PushedBlob> => {
  const mode = o.mode ?? "auto"
  const chunkSize = Math.max(o.chunkSize ?? ctx.chunkSize, session.minChunk)
  if (source instanceof Uint8Array && mode !== "chunked") {
    await commit(ctx, repo, session.location, digest!, source, source.length, o)
    return { digest: digest!, size: source.length, skipped: false, mounted: false, bytesUploaded: source.length }
  }
  if (!(source instanceof Uint8Array) && mode !== "chunked" && digest !== undefined && size !== undefined) {
    const stream = source instanceof Readable ? source : Readable.from(source)
    const verify = new DigestStream(target(repo, digest), digestAlgorithm(digest, target(repo)), { digest, size })
    stream.on("error", (err) => verify.destroy(err))
    await commit(ctx, repo, session.location, digest, stream.pipe(verify), size, o)
    return { digest, size, skipped: false, mounted: false, bytesUploaded: size }
  }
  if (mode === "monolithic") {
    throw ociError(target(repo, digest), { _tag: "Invalid" }, "A monolithic upload of a stream needs its digest and size")
  }
  const iterable = source instanceof Uint8Array ? [source] : source
  const done = await chunkedUpload(ctx, repo, session.location, iterable, chunkSize, { ...o, digest, size })
  return { ...done, skipped: false, mounted: false, bytesUploaded: done.size }
}

/**
 * Mounts `digest` from repository `from` into `repo` (same registry). True if mounted; false if the registry
 * declined (202), in which case the session it opened is cancelled.
 */
export const mountBlob = async (ctx: Ctx, repo: Repo, from: string, digest: string, opts: CallOptions = {}): Promise<boolean> => {
  const session = await startUpload(ctx, repo, { digest, from }, opts)
  if (session.kind === "mounted") return true
  await cancelUpload(ctx, repo, session.location)
  return false
}
