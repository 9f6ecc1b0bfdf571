/**
 * Manifests and indexes: resolve (HEAD), fetch (verified GET), push by tag or digest, and the referrers
 * tag-schema upkeep a client owes registries that do not process `subject` themselves.
 */
import { isOciError, ociError } from "./errors"
import { type CallOptions, type Ctx, pull, push, type Repo, target } from "./context"
import { digestAlgorithm, digestOf, verifyBytes } from "./digest"
import { type Descriptor, type Manifest, MANIFEST_MEDIA_TYPES } from "./media-types"
import { isDigest, manifestReference, type Reference } from "./reference"
import { readLimited } from "./transport/http"

/** A fetched manifest: its descriptor, the exact bytes (digest-verified) and the parsed JSON. */
export interface FetchedManifest {
  readonly descriptor: Descriptor
  readonly bytes: Buffer
  readonly manifest: Manifest
}

/** Options for resolving and fetching. `accept` overrides the manifest media types we ask for. */
export interface FetchOptions extends CallOptions {
  readonly accept?: readonly string[]
}

const manifestPath = (repo: Repo, ref: string) => `/v2/${repo.repository}/manifests/${ref}`

const acceptHeader = (accept: readonly string[] | undefined) => ({ accept: (accept ?? MANIFEST_MEDIA_TYPES).join(", ") })

/**
 * `HEAD /v2/<name>/manifests/<ref>`: digest, media type and size without downloading. Falls back to a GET when
 * the registry omits `Docker-Content-Digest`.
 */
export const resolve = async (ctx: Ctx, ref: Reference, opts: FetchOptions = {}): Promise<Descriptor> => {
  const r = manifestReference(ref)
  const t = target(ref, r)
  const res = await ctx.transport.send(
    { method: "HEAD", registry: ref.registry, path: manifestPath(ref, r), headers: acceptHeader(opts.accept), scopes: pull(ref), signal: opts.signal },
    t,
  )
  await res.body.dump()
  if (res.status !== 200) throw await ctx.transport.failure(res, t, `Resolving ${ref.repository}:${r}`)
  const digest = res.header("docker-content-digest")
  const mediaType = (res.header("content-type") ?? "").split(";")[0]!.trim()
  const size = Number(res.header("content-length"))
  if (digest === undefined || !isDigest(digest) || !Number.isFinite(size) || mediaType.length === 0) {
    return (await fetchManifest(ctx, ref, opts)).descriptor
  }
  if (isDigest(r) && digest !== r) {
    throw ociError(t, { _tag: "DigestMismatch", expected: r, actual: digest }, `Registry resolved ${r} to ${digest}`)
  }
  return { mediaType, digest, size }
}

/**
 * `GET /v2/<name>/manifests/<ref>`, verified: by digest, the bytes must hash to it; by tag, they must hash to the
 * `Docker-Content-Digest` the registry sent (when it sent one). Refuses manifests over the client's limit.
 */
export const fetchManifest = async (ctx: Ctx, ref: Reference, opts: FetchOptions = {}): Promise<FetchedManifest> => {
  const r = manifestReference(ref)
  const t = target(ref, r)
  const res = await ctx.transport.send(
    { method: "GET", registry: ref.registry, path: manifestPath(ref, r), headers: acceptHeader(opts.accept), scopes: pull(ref), signal: opts.signal },
    t,
  )
  if (res.status !== 200) throw await ctx.transport.failure(res, t, `Fetching manifest ${ref.repository}:${r}`)
  const limit = ctx.maxManifestBytes
  const length = Number(res.header("content-length") ?? 0)
  if (length > limit) {
    await res.body.dump()
    throw ociError(t, { _tag: "TooLarge", limit, size: length }, `Manifest ${ref.repository}:${r} is ${length} bytes, over the limit of ${limit}`)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) {
      res.body.destroy()
      throw ociError(t, { _tag: "TooLarge", limit }, `Manifest ${ref.repository}:${r} exceeds the limit of ${limit} bytes`)
    }
    chunks.push(chunk)
  }
  const bytes = Buffer.concat(chunks)
  const header = res.header("docker-content-digest")
  const expected = isDigest(r) ? r : header !== undefined && isDigest(header) ? header : undefined
  const digest = expected !== undefined ? expected : digestOf(bytes)
  if (expected !== undefined) verifyBytes(bytes, { digest: expected }, t)
  let manifest: Manifest
  try {
    manifest = JSON.parse(bytes.toString("utf8")) as Manifest
  } catch (cause) {
    throw ociError(t, { _tag: "Invalid" }, `Manifest ${ref.repository}:${r} is not JSON`, { cause })
  }
  const mediaType = manifest.mediaType ?? (res.header("content-type") ?? "").split(";")[0]!.trim()
  return {
    descriptor: { mediaType, digest, size: bytes.length, ...(manifest.artifactType !== undefined ? { artifactType: manifest.artifactType } : {}) },
    bytes,
    manifest,
  }
}

/** Options of {@link pushManifest}. */
export interface PushManifestOptions extends CallOptions {
  /** Media type to send; default: the manifest's own `mediaType`. */
  readonly mediaType?: string
  /**
   * When the manifest has a `subject` and the registry does not answer with `OCI-Subject`, add it to the
   * `sha256-<hex>` referrers index tag (image-spec v1.1 fallback). Default true.
   */
  readonly updateReferrersTag?: boolean
}

/** Serialises a manifest the way we push it: compact JSON, keys in insertion order. */
export const encodeManifest = (manifest: Manifest): Buffer => Buffer.from(JSON.stringify(manifest), "utf8")

/**
 * `PUT /v2/<name>/manifests/<tag|digest>`: pushes a manifest (object or exact bytes). `ref` without tag or digest
 * pushes by digest. Returns the descriptor of what was stored, after checking the registry's digest matches.
 */
export const pushManifest = async (
  ctx: Ctx,
  ref: Reference,
  content: Manifest | { readonly bytes: Uint8Array; readonly mediaType: string },
  opts: PushManifestOptions = {},
): Promise<Descriptor> => {
  const bytes = "bytes" in content ? Buffer.from(content.bytes) : encodeManifest(content)
  let manifest: Manifest
  try {
    manifest = "bytes" in content ? (JSON.parse(bytes.toString("utf8")) as Manifest) : content
  } catch (cause) {
    throw ociError(target(ref), { _tag: "Invalid" }, "Manifest bytes are not JSON", { cause })
  }
  const mediaType = opts.mediaType ?? ("bytes" in content ? content.mediaType : undefined) ?? manifest.mediaType
  if (mediaType === undefined) throw ociError(target(ref), { _tag: "Invalid" }, "Manifest has no mediaType")
  const digest = digestOf(bytes, ref.digest !== undefined ? digestAlgorithm(ref.digest, target(ref)) : "sha256")
  if (ref.digest !== undefined && ref.digest !== digest) {
    throw ociError(target(ref, ref.digest), { _tag: "DigestMismatch", expected: ref.digest, actual: digest }, `Manifest hashes to ${digest}, not ${ref.digest}`)
  }
  const r = ref.tag ?? digest
  const t = target(ref, r)
  const res = await ctx.transport.send(
    {
      method: "PUT",
      registry: ref.registry,
      path: manifestPath(ref, r),
      headers: { "content-type": mediaType, "content-length": String(bytes.length) },
      body: bytes,
      scopes: push(ref),
      signal: opts.signal,
    },
    t,
  )
  if (res.status !== 201) throw await ctx.transport.failure(res, t, `Pushing manifest ${ref.repository}:${r}`)
  await readLimited(res.body)
  const echoed = res.header("docker-content-digest")
  if (echoed !== undefined && echoed !== digest) {
    throw ociError(t, { _tag: "DigestMismatch", expected: digest, actual: echoed }, `Registry stored manifest ${digest} as ${echoed}`)
  }
  const descriptor: Descriptor = {
    mediaType,
    digest,
    size: bytes.length,
    ...(manifest.artifactType !== undefined ? { artifactType: manifest.artifactType } : {}),
  }
  if (manifest.subject !== undefined && res.header("oci-subject") === undefined && opts.updateReferrersTag !== false) {
    await addToReferrersTag(ctx, ref, manifest, descriptor, opts)
  }
  return descriptor
}

/** The tag-schema name of the referrers index of `digest`: `sha256-<hex>` (image-spec v1.1, truncated to 128). */
export const referrersTag = (digest: string): string => digest.replace(":", "-").slice(0, 128)

/** The descriptor of `manifest` as a referrer: artifactType (or config media type) and its annotations. */
export const referrerDescriptor = (manifest: Manifest, descriptor: Descriptor): Descriptor => {
  const artifactType = manifest.artifactType ?? ("config" in manifest ? manifest.config.mediaType : undefined)
  return {
    mediaType: descriptor.mediaType,
    digest: descriptor.digest,
    size: descriptor.size,
    ...(artifactType !== undefined ? { artifactType } : {}),
    ...(manifest.annotations !== undefined ? { annotations: manifest.annotations } : {}),
  }
}

/**
 * Adds a referrer to the fallback index tagged `sha256-<hex>` of its subject (read, append if absent, write).
 *
 * Gotchas: not atomic; two writers racing on one subject can lose an entry. The operator pushes each subject's
 * referrers from one controller, which keeps this safe in practice.
 */
const addToReferrersTag = async (ctx: Ctx, ref: Reference, manifest: Manifest, descriptor: Descriptor, opts: CallOptions) => {
  const subject = manifest.subject!
  const tagRef: Reference = { registry: ref.registry, repository: ref.repository, tag: referrersTag(subject.digest) }
  let existing: readonly Descriptor[] = []
  try {
    const current = await fetchManifest(ctx, tagRef, { ...opts, accept: ["application/vnd.oci.image.index.v1+json"] })
    existing = "manifests" in current.manifest ? current.manifest.manifests : []
  } catch (err) {
    if (!isOciError(err, "NotFound")) throw err
  }
  if (existing.some((d) => d.digest === descriptor.digest)) return
  const index: Manifest = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [...existing, referrerDescriptor(manifest, descriptor)],
  }
  await pushManifest(ctx, tagRef, index, { ...opts, updateReferrersTag: false })
}

/** True if `ref` (tag or digest) exists, false on 404. */
export const manifestExists = async (ctx: Ctx, ref: Reference, opts: FetchOptions = {}): Promise<Descriptor | undefined> => {
  try {
    return await resolve(ctx, ref, opts)
  } catch (err) {
    if (isOciError(err, "NotFound")) return undefined
    throw err
  }
}
