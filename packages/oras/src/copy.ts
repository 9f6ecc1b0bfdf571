/**
 * Copying an artifact (image, index, Helm chart, anything) by digest between repositories or registries: the
 * manifest and everything below it, skipping what the destination already has and mounting within one registry.
 */
import { isOciError } from "./errors"
import { pullBlob } from "./blobs"
import { type CallOptions, type Ctx, type Repo } from "./context"
import { referrers } from "./listing"
import { fetchManifest, manifestExists, pushManifest } from "./manifests"
import { childrenOf, type Descriptor, isIndexMediaType, isManifestMediaType, type Manifest } from "./media-types"
import { type Reference } from "./reference"
import { backoffDelay, sleep } from "./transport/retry"
import { pushBlob } from "./upload"

/** Options of {@link copy}. */
export interface CopyOptions extends CallOptions {
  /** Parallel blob/child copies. Default 4. */
  readonly concurrency?: number
  /** Also copy the referrers of every copied manifest (signatures, SBOMs, evidence), recursively. Default false. */
  readonly referrers?: boolean
  /** Called once per blob with what happened to it. */
  readonly onBlob?: (event: BlobEvent) => void
}

/** What happened to one blob during a copy. */
export interface BlobEvent {
  readonly digest: string
  readonly size: number
  readonly action: "skipped" | "mounted" | "uploaded"
}

/** Totals of a copy. A repeated copy of the same content has `bytesUploaded: 0` and pushes no manifest. */
export interface CopyResult {
  /** The root manifest as stored at the destination. */
  readonly descriptor: Descriptor
  readonly manifestsPushed: number
  readonly manifestsSkipped: number
  readonly blobsUploaded: number
  readonly blobsMounted: number
  readonly blobsSkipped: number
  readonly bytesUploaded: number
}

type Totals = { -readonly [K in keyof Omit<CopyResult, "descriptor">]: CopyResult[K] }

/** Runs `fn` over `items` with at most `limit` in flight; rejects with the first failure. */
export const mapLimit = async <A, B>(items: readonly A[], limit: number, fn: (a: A) => Promise<B>): Promise<B[]> => {
  const out: B[] = new Array<B>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return out
}

const nonDistributable = (d: Descriptor) => (d.urls?.length ?? 0) > 0 && (d.mediaType.includes("nondistributable") || d.mediaType.includes("foreign"))

const copyBlob = async (ctx: Ctx, src: Repo, dst: Repo, d: Descriptor, totals: Totals, opts: CopyOptions) => {
  const sameRegistry = src.registry === dst.registry
  for (let attempt = 1; ; attempt++) {
    try {
      const pushed = await pushBlob(ctx, dst, () => pullBlob(ctx, src, { digest: d.digest, size: d.size }, opts), {
        digest: d.digest,
        size: d.size,
        mountFrom: sameRegistry && src.repository !== dst.repository ? src.repository : undefined,
        mode: "monolithic",
        signal: opts.signal,
      })
      const action = pushed.skipped ? "skipped" : pushed.mounted ? "mounted" : "uploaded"
      if (action === "skipped") totals.blobsSkipped++
      else if (action === "mounted") totals.blobsMounted++
      else totals.blobsUploaded++
      totals.bytesUploaded += pushed.bytesUploaded
      opts.onBlob?.({ digest: d.digest, size: d.size, action })
      return
    } catch (err) {
      // A streamed transfer cannot be replayed by the transport; retry the whole blob here.
      if (!isOciError(err, "Unavailable") || attempt >= ctx.retry.maxAttempts) throw err
      await sleep(backoffDelay(ctx.retry, attempt, undefined), opts.signal)
    }
  }
}

/** Copies one manifest (by digest) and its subtree; pushes it under `tag` when given. */
const copyManifest = async (
  ctx: Ctx,
  src: Repo,
  dst: Repo,
  desc: Descriptor,
  tag: string | undefined,
  totals: Totals,
  opts: CopyOptions,
  fetched?: { bytes: Buffer; manifest: Manifest },
): Promise<Descriptor> => {
  const dstRef: Reference = { ...dst, digest: desc.digest }
  const present = await manifestExists(ctx, dstRef, opts)
  const tagged = tag === undefined ? present : await manifestExists(ctx, { ...dst, tag }, opts)
  if (present !== undefined && (tag === undefined || tagged?.digest === desc.digest)) {
    totals.manifestsSkipped++
  } else {
    const { bytes, manifest } = fetched ?? (await fetchManifest(ctx, { ...src, digest: desc.digest }, opts))
    if (present === undefined) {
      const children = childrenOf(manifest)
      if (isIndexMediaType(desc.mediaType) || "manifests" in manifest) {
        await mapLimit(children, opts.concurrency ?? 4, (child): Promise<unknown> =>
          isManifestMediaType(child.mediaType) ? copyManifest(ctx, src, dst, child, undefined, totals, opts) : copyBlob(ctx, src, dst, child, totals, opts),
        )
      } else {
        await mapLimit(
          children.filter((c) => !nonDistributable(c)),
          opts.concurrency ?? 4,
          (b) => copyBlob(ctx, src, dst, b, totals, opts),
        )
      }
    }
    await pushManifest(ctx, tag !== undefined ? { ...dst, tag } : dstRef, { bytes, mediaType: desc.mediaType }, opts)
    totals.manifestsPushed++
  }
  if (opts.referrers === true) {
    const { descriptors } = await referrers(ctx, src, desc.digest, opts)
    for (const r of descriptors) await copyManifest(ctx, src, dst, r, undefined, totals, opts)
  }
  return desc
}

/**
 * Copies `src` (tag or digest) to `dst`. The destination is tagged with `dst.tag`, else `src.tag`; a source
 * addressed by digest with no destination tag is pushed by digest. Manifests keep their exact bytes, so digests
 * are preserved.
 *
 * Gotchas:
 * - A manifest already present at the destination is assumed complete (registries refuse manifests whose blobs
 *   are missing), so its subtree is not walked again.
 * - Within one registry, blobs are mounted from the source repository; across registries they stream through
 *   this process (pull → verify → push) without being buffered.
 * - Never deletes anything at either end.
 *
 * @example
 * ```ts
 * import { OciClient } from "@aicr/oras"
 * const client = new OciClient()
 * const r = await client.copy("ghcr.io/org/charts/demo:1.2.3", "127.0.0.1:5000/aicr/c1/charts/demo")
 * console.log(r.descriptor.digest, r.bytesUploaded)
 * ```
 */
export const copy = async (ctx: Ctx, src: Reference, dst: Reference, opts: CopyOptions = {}): Promise<CopyResult> => {
  const totals: Totals = { manifestsPushed: 0, manifestsSkipped: 0, blobsUploaded: 0, blobsMounted: 0, blobsSkipped: 0, bytesUploaded: 0 }
  const root = await fetchManifest(ctx, src, opts)
  const tag = dst.tag ?? src.tag
  const dstRepo: Repo = { registry: dst.registry, repository: dst.repository }
  const srcRepo: Repo = { registry: src.registry, repository: src.repository }
  const descriptor = await copyManifest(ctx, srcRepo, dstRepo, root.descriptor, tag, totals, opts, root)
  return { descriptor, ...totals }
}
