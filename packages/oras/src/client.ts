/**
 * `OciClient`: the Promise API of `@aicr/oras`. Each method takes references as strings
 * (`registry/repo[:tag][@digest]`) or parsed {@link Reference}s and rejects with `OciError`.
 */
import { type Readable } from "node:stream"
import { type Dispatcher } from "undici"
import { anonymous, type CredentialProvider } from "./auth/credentials"
import { type BlobInfo, blobExists, fetchBlob, pullBlob, pullBlobToFile } from "./blobs"
import { type CallOptions, type Ctx, type Repo } from "./context"
import { copy, type CopyOptions, type CopyResult } from "./copy"
import { type Expected } from "./digest"
import { ociError } from "./errors"
import { pullChart, type PullChartOptions, type PulledChart, pushChart, type PushChartOptions, type PushedChart } from "./helm"
import { allTags, listRepositories, listTags, type ListTagsOptions, referrers, type ReferrersOptions, type ReferrersSource } from "./listing"
import { fetchManifest, type FetchedManifest, type FetchOptions, manifestExists, pushManifest, type PushManifestOptions, resolve } from "./manifests"
import { type Descriptor, type Manifest } from "./media-types"
import { isLoopback, parseReference, type Reference } from "./reference"
import { Transport, type TransportStats } from "./transport/http"
import { defaultRetryPolicy, type RetryPolicy } from "./transport/retry"
import { type BlobSource, mountBlob, pushBlob, type PushBlobOptions, type PushedBlob } from "./upload"

/** Options of {@link OciClient}. Everything is optional. */
export interface OciClientOptions {
  /** Where credentials come from. Default: anonymous. */
  readonly credentials?: CredentialProvider
  /**
   * Plain HTTP instead of HTTPS: `true` for every registry, a list of `host[:port]`s, or a predicate.
   * Loopback registries (`localhost`, `127.0.0.0/8`, `[::1]`) use plain HTTP unless `plainHttpLoopback` is false.
   */
  readonly plainHttp?: boolean | readonly string[] | ((registry: string) => boolean)
  /** Default true: talk plain HTTP to loopback registries. */
  readonly plainHttpLoopback?: boolean
  /** Retry budget for 429/5xx/connection failures. */
  readonly retry?: Partial<RetryPolicy>
  /** Chunk size of chunked uploads. Default 8 MiB. */
  readonly chunkSize?: number
  /** Largest manifest accepted in memory. Default 4 MiB (the distribution spec's suggested limit). */
  readonly maxManifestBytes?: number
  /** An undici dispatcher (custom TLS, proxies). Default: an own keep-alive `Agent`, closed by `close()`. */
  readonly dispatcher?: Dispatcher
  /** `User-Agent` header. Default `aicr-oras/0.1`. */
  readonly userAgent?: string
  /** Test hooks: clock, randomness and sleep of the retry loop. */
  readonly now?: () => number
  readonly random?: () => number
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

const asRef = (r: string | Reference): Reference => (typeof r === "string" ? parseReference(r) : r)
const asRepo = (r: string | Repo): Repo => {
  const ref = typeof r === "string" ? parseReference(r) : r
  return { registry: ref.registry, repository: ref.repository }
}

const plainHttpPredicate = (o: OciClientOptions): ((registry: string) => boolean) => {
  const loopback = o.plainHttpLoopback !== false
  const p = o.plainHttp
  const explicit = typeof p === "function" ? p : typeof p === "boolean" ? () => p : p !== undefined ? (r: string) => p.includes(r) : () => false
  return (registry) => explicit(registry) || (loopback && isLoopback(registry))
}

/**
 * A client for OCI distribution v1.1 registries.
 *
 * Gotchas:
 * - One client keeps a connection pool and a token cache: create one per process (or per controller) and
 *   `close()` it on shutdown.
 * - Every pull is verified against its digest; a mismatch is `OciError` reason `DigestMismatch`, never data.
 * - Nothing in this client deletes registry content (the operator never deletes, spec §4.4).
 *
 * @example
 * ```ts
 * import { OciClient, dockerConfigCredentials } from "@aicr/oras"
 * const client = new OciClient({ credentials: dockerConfigCredentials() })
 * const d = await client.resolve("127.0.0.1:5000/aicr/c1/charts/gpu-operator:25.3.0")
 * console.log(d.digest, d.mediaType, d.size)
 * await client.close()
 * ```
 */
export class OciClient {
  private readonly ctx: Ctx
  private readonly transport: Transport

  constructor(options: OciClientOptions = {}) {
    const retry = { ...defaultRetryPolicy, ...options.retry }
    this.transport = new Transport({
      credentials: options.credentials ?? anonymous,
      plainHttp: plainHttpPredicate(options),
      retry,
      dispatcher: options.dispatcher,
      userAgent: options.userAgent ?? "aicr-oras/0.1",
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(options.random !== undefined ? { random: options.random } : {}),
      ...(options.sleep !== undefined ? { sleep: options.sleep } : {}),
    })
    this.ctx = {
      transport: this.transport,
      chunkSize: options.chunkSize ?? 8 * 1024 * 1024,
      maxManifestBytes: options.maxManifestBytes ?? 4 * 1024 * 1024,
      referrersApi: new Map(),
      retry,
    }
  }

  /** Requests made and request-body bytes sent so far by this client. */
  get stats(): Readonly<TransportStats> {
    return this.transport.stats
  }

  /** `GET /v2/`: resolves when the registry speaks the distribution API and accepts our credentials. */
  async ping(registry: string, opts: CallOptions = {}): Promise<void> {
    const t = { registry }
    const res = await this.transport.send({ method: "GET", registry, path: "/v2/", scopes: [], signal: opts.signal }, t)
    if (res.status !== 200) throw await this.transport.failure(res, t, `Checking registry ${registry}`)
    await res.body.dump()
  }

  /** Digest, media type and size of a manifest (HEAD). */
  resolve(ref: string | Reference, opts?: FetchOptions): Promise<Descriptor> {
    return resolve(this.ctx, asRef(ref), opts)
  }

  /** The descriptor if the manifest exists, undefined if not. */
  manifestExists(ref: string | Reference, opts?: FetchOptions): Promise<Descriptor | undefined> {
    return manifestExists(this.ctx, asRef(ref), opts)
  }

  /** A manifest or index: exact bytes (verified), parsed JSON and descriptor. */
  fetchManifest(ref: string | Reference, opts?: FetchOptions): Promise<FetchedManifest> {
    return fetchManifest(this.ctx, asRef(ref), opts)
  }

  /** Pushes a manifest or index by tag (`ref.tag`), else by digest. Blobs and children must already be there. */
  pushManifest(ref: string | Reference, content: Manifest | { bytes: Uint8Array; mediaType: string }, opts?: PushManifestOptions): Promise<Descriptor> {
    return pushManifest(this.ctx, asRef(ref), content, opts)
  }

  /** Points `tag` at the manifest `ref` resolves to, re-pushing its exact bytes (no blob is touched). */
  async tag(ref: string | Reference, tag: string, opts?: CallOptions): Promise<Descriptor> {
    const r = asRef(ref)
    const { bytes, descriptor } = await fetchManifest(this.ctx, r, opts)
    return pushManifest(this.ctx, { registry: r.registry, repository: r.repository, tag }, { bytes, mediaType: descriptor.mediaType }, opts)
  }

  /** Size of a blob if the repository has it, undefined if not. */
  blobExists(repo: string | Repo, digest: string, opts?: CallOptions): Promise<BlobInfo | undefined> {
    return blobExists(this.ctx, asRepo(repo), digest, opts)
  }

  /** A verified stream of a blob; errors with `DigestMismatch` at the end if the content is not `expected`. */
  pullBlob(repo: string | Repo, expected: Expected, opts?: CallOptions): Promise<Readable> {
    return pullBlob(this.ctx, asRepo(repo), expected, opts)
  }

  /** A small blob in memory (default limit 4 MiB, `TooLarge` beyond), verified. */
  fetchBlob(repo: string | Repo, expected: Expected, opts?: CallOptions & { maxBytes?: number }): Promise<Buffer> {
    return fetchBlob(this.ctx, asRepo(repo), expected, opts)
  }

  /** A blob to a file, all or nothing (temp file + rename after verification). */
  pullBlobToFile(repo: string | Repo, expected: Expected, path: string, opts?: CallOptions): Promise<BlobInfo> {
    return pullBlobToFile(this.ctx, asRepo(repo), expected, path, opts)
  }

  /** Uploads a blob (bytes, stream or lazy stream): skips present blobs, mounts, monolithic or chunked. */
  pushBlob(repo: string | Repo, source: BlobSource, opts?: PushBlobOptions): Promise<PushedBlob> {
    return pushBlob(this.ctx, asRepo(repo), source, opts)
  }

  /** Cross-repository mount within one registry; false if the registry declined. */
  mountBlob(from: string | Repo, to: string | Repo, digest: string, opts?: CallOptions): Promise<boolean> {
    const src = asRepo(from)
    const dst = asRepo(to)
    if (src.registry !== dst.registry) {
      return Promise.reject(ociError({ ...dst, reference: digest }, { _tag: "Invalid" }, `Cannot mount across registries (${src.registry} → ${dst.registry})`))
    }
    return mountBlob(this.ctx, dst, src.repository, digest, opts)
  }

  /** Tags page by page (`n`/`last`, following `Link`). */
  listTags(repo: string | Repo, opts?: ListTagsOptions): AsyncGenerator<string[]> {
    return listTags(this.ctx, asRepo(repo), opts)
  }

  /** Repositories of a registry page by page (`/v2/_catalog`, where the registry offers it). */
  listRepositories(registry: string, opts?: ListTagsOptions): AsyncGenerator<string[]> {
    return listRepositories(this.ctx, registry, opts)
  }

  /** Every tag of a repository. */
  tags(repo: string | Repo, opts?: ListTagsOptions): Promise<string[]> {
    return allTags(this.ctx, asRepo(repo), opts)
  }

  /** Manifests whose `subject` is `ref`'s digest (referrers API, or the `sha256-<hex>` tag fallback). */
  async referrers(ref: string | Reference, opts?: ReferrersOptions): Promise<{ descriptors: Descriptor[]; source: ReferrersSource }> {
    const r = asRef(ref)
    const digest = r.digest ?? (await resolve(this.ctx, r, opts)).digest
    return referrers(this.ctx, r, digest, opts)
  }

  /** Copies an artifact and everything below it between repositories or registries, by digest. */
  copy(src: string | Reference, dst: string | Reference, opts?: CopyOptions): Promise<CopyResult> {
    return copy(this.ctx, asRef(src), asRef(dst), opts)
  }

  /** Pushes a chart `.tgz` the way `helm push` does, tagged with its (mangled) version. */
  pushChart(repo: string | Repo, tgz: Uint8Array, opts?: PushChartOptions): Promise<PushedChart> {
    return pushChart(this.ctx, asRepo(repo), tgz, opts)
  }

  /** Pulls a chart by tag or digest; the archive comes back byte for byte. */
  pullChart(ref: string | Reference, opts?: PullChartOptions): Promise<PulledChart> {
    return pullChart(this.ctx, asRef(ref), opts)
  }

  /** Closes the connection pool (if the client created it). */
  close(): Promise<void> {
    return this.transport.close()
  }
}
