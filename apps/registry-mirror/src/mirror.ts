/**
 * Executes a {@link MirrorPlan} against the runtime registry with `@aicr/oras` (Promise API; `act.ts` gives it its
 * Effect face). Every step is idempotent: a tag that already holds the same content is recorded and left alone
 * (nothing is uploaded, so a second mirror of the same plan uploads 0 bytes); a tag that holds other content is a
 * {@link ConflictError} naming the tag and both digests; nothing is ever deleted or overwritten.
 *
 * Failures are translated into the controller's tagged errors (errors.ts): upstream and registry outages →
 * `RegistryUnavailableError` (transient), refused credentials → `UnauthorizedError`, a missing or unusable
 * upstream chart → `ChartSourceUnsupportedError`, size limits → `ContentTooLargeError`.
 */
import { shortDigest } from "@aicr/api"
import { chartLayer, type ChartLayout, digestOf, mapLimit, type OciClient, OciError, parseReference, writeTgz } from "@aicr/oras"
import { fetch as undiciFetch } from "undici"
import { parse as parseYaml } from "yaml"
import { type BundleArtifact, bundleArtifact, chartArtifact } from "./artifacts"
import { ChartSourceUnsupportedError, ConflictError, ContentTooLargeError, isMirrorError, RegistryUnavailableError, UnauthorizedError } from "./errors"
import type { MirrorPlan, PlanItem } from "./plan"
import { type ChartSource, rewrite, type Rewrites } from "./source"

export interface MirrorOptions {
  /** Rewrites applied to chart archive URLs found in Helm repository indexes (the same as for sources). */
  readonly rewrites?: Rewrites
  /** Parallel artifacts. Default 4. */
  readonly concurrency?: number
  /** Largest chart archive accepted from an HTTP repository. Default 64 MiB. */
  readonly maxChartBytes?: number
  /**
   * `fetch` for HTTP Helm repositories (tests inject failures). Default: undici's, the same undici `@aicr/oras` loads
   * (Node's global fetch would load a second copy: +MiBs of RSS in a controller).
   */
  readonly fetch?: typeof fetch
  /** Per-request timeout for HTTP Helm repositories. Default 60 s. */
  readonly httpTimeoutMs?: number
  readonly signal?: AbortSignal
  /** Called when an artifact is done. */
  readonly onArtifact?: (a: MirroredArtifact) => void
}

/** One artifact in the runtime registry. */
export interface MirroredArtifact {
  /** Status key (`status.mirror.charts[].release`), or `bundle`. */
  readonly key: string
  /** `host/repository:tag@digest` */
  readonly ref: string
  readonly digest: string
  /** `pushed`: this run wrote it; `present`: the tag already held exactly this content. */
  readonly action: "pushed" | "present"
}

export interface MirrorResult {
  readonly inputDigest: string
  readonly charts: readonly MirroredArtifact[]
  readonly bundle: MirroredArtifact
  /** Request-body bytes sent to registries during this run (blobs and manifests). */
  readonly bytesUploaded: number
  readonly pushed: number
  readonly present: number
}

/** A short, stable cause for a condition message: the HTTP status or the socket error code. */
export const shortCause = (err: OciError): string => {
  if (err.reason._tag === "DigestMismatch") return "digest mismatch"
  if (err.status !== undefined) return `HTTP ${err.status}`
  return /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/u.exec(err.message)?.[1] ?? "unreachable"
}

/** Translates an `OciError` raised while talking to `side` into the controller's errors; anything else passes. */
const translate = (err: unknown, side: "registry" | "upstream", release: string, what: string): unknown => {
  if (isMirrorError(err) || !(err instanceof OciError)) return err
  const where = err.repository !== undefined ? `${err.registry}/${err.repository}` : err.registry
  switch (err.reason._tag) {
    case "Unavailable":
    case "DigestMismatch":
      return new RegistryUnavailableError({ registry: err.registry, cause: shortCause(err), message: `${what}: ${err.message}` })
    case "Unauthorized":
    case "Denied":
      return new UnauthorizedError({
        registry: err.registry,
        message:
          side === "registry"
            ? `The runtime registry ${err.registry} refused the push to ${where}: ${err.reason._tag === "Denied" ? "denied" : "unauthorized"}; check the registry credentials`
            : `The upstream ${where} of release ${release} refused the pull: ${err.reason._tag}`,
      })
    case "TooLarge":
      return new ContentTooLargeError({ what, message: `${what}: ${err.message}` })
    case "NotFound":
    case "Invalid":
      return side === "upstream" ? new ChartSourceUnsupportedError({ release, message: `Release ${release}: ${what}: ${err.message}` }) : err
    case "Conflict":
      return new ConflictError({ reference: where, existing: "", wanted: "", message: `${what}: the registry refused it as a conflict: ${err.message}` })
  }
}

const guarded = async <A>(side: "registry" | "upstream", release: string, what: string, f: () => Promise<A>): Promise<A> => {
  try {
    return await f()
  } catch (err) {
    throw translate(err, side, release, what)
  }
}

const conflict = (reference: string, existing: string, wanted: string, what: string) =>
  new ConflictError({
    reference,
    existing,
    wanted,
    message: `Tag ${reference} already holds ${existing}, not ${wanted} (${what}); the mirror never overwrites a tag`,
  })

// ---- HTTP Helm repositories --------------------------------------------------------------------------------

interface IndexEntry {
  readonly version: string
  readonly urls: readonly string[]
  readonly digest?: string
}

const transientStatus = (s: number) => s === 408 || s === 429 || s >= 500

const httpGet = async (o: MirrorOptions, url: string, release: string, what: string, maxBytes: number): Promise<Buffer> => {
  const doFetch = o.fetch ?? (undiciFetch as unknown as typeof fetch)
  for (let attempt = 1; ; attempt++) {
    let res: Response
    try {
      res = await doFetch(url, { signal: AbortSignal.any([AbortSignal.timeout(o.httpTimeoutMs ?? 60_000), ...(o.signal ? [o.signal] : [])]) })
    } catch (cause) {
      if (o.signal?.aborted) throw cause
      if (attempt < 3) {
        await new Promise((r) => setTimeout(r, 200 * 4 ** (attempt - 1)))
        continue
      }
      const why =
        cause instanceof Error
          ? ((cause.cause as { code?: string } | undefined)?.code ?? (cause.name === "TimeoutError" ? "timeout" : cause.message))
          : String(cause)
      throw new RegistryUnavailableError({ registry: new URL(url).host, cause: why, message: `${what}: GET ${url} failed (${why})` })
    }
    if (res.ok) {
      const declared = Number(res.headers.get("content-length") ?? "-1")
      if (declared > maxBytes) {
        await res.body?.cancel()
        throw new ContentTooLargeError({ what, message: `${what}: ${url} is ${declared} bytes, more than the ${maxBytes} the mirror accepts` })
      }
      // One buffer of the announced size (no chunk list + concat copy); grown only if the length was not announced.
      let out = Buffer.allocUnsafe(declared >= 0 ? declared : 64 * 1024)
      let size = 0
      for await (const chunk of res.body ?? []) {
        const c = chunk as Uint8Array
        if (size + c.length > maxBytes)
          throw new ContentTooLargeError({ what, message: `${what}: ${url} is more than the ${maxBytes} bytes the mirror accepts` })
        if (size + c.length > out.length) {
          const grown = Buffer.allocUnsafe(Math.min(maxBytes, Math.max(out.length * 2, size + c.length)))
          out.copy(grown, 0, 0, size)
          out = grown
        }
        out.set(c, size)
        size += c.length
      }
      return out.subarray(0, size)
    }
    await res.body?.cancel()
    if (transientStatus(res.status) && attempt < 3) {
      await new Promise((r) => setTimeout(r, 200 * 4 ** (attempt - 1)))
      continue
    }
    if (transientStatus(res.status))
      throw new RegistryUnavailableError({
        registry: new URL(url).host,
        cause: `HTTP ${res.status}`,
        message: `${what}: GET ${url} answered HTTP ${res.status}`,
      })
    if (res.status === 401 || res.status === 403)
      throw new UnauthorizedError({
        registry: new URL(url).host,
        message: `The upstream ${url} of release ${release} refused the download: HTTP ${res.status}`,
      })
    throw new ChartSourceUnsupportedError({ release, message: `Release ${release}: ${what}: GET ${url} answered HTTP ${res.status}` })
  }
}

const stripV = (v: string) => v.replace(/^v/u, "")

/** Finds `chart`@`version` in a parsed index.yaml (exact version first, then ignoring a leading `v`). */
export const findIndexEntry = (index: unknown, chart: string, version: string): IndexEntry | undefined => {
  const entries = (index as { entries?: Record<string, unknown> } | null)?.entries?.[chart]
  if (!Array.isArray(entries)) return undefined
  const list = entries.filter(
    (e): e is IndexEntry => typeof e === "object" && e !== null && typeof (e as IndexEntry).version === "string" && Array.isArray((e as IndexEntry).urls),
  )
  return list.find((e) => e.version === version) ?? list.find((e) => stripV(e.version) === stripV(version))
}

type IndexCache = Map<string, Promise<unknown>>

const fetchIndex = (o: MirrorOptions, cache: IndexCache, s: Extract<ChartSource, { _tag: "HelmRepo" }>, release: string): Promise<unknown> => {
  const url = `${s.repoUrl.replace(/\/+$/u, "")}/index.yaml`
  let p = cache.get(url)
  if (p === undefined) {
    p = httpGet(o, url, release, `Reading the Helm repository index of ${s.original}`, 256 * 1024 * 1024).then((bytes) => {
      try {
        return parseYaml(bytes.toString("utf8"), { maxAliasCount: -1 }) as unknown
      } catch {
        throw new ChartSourceUnsupportedError({ release, message: `Release ${release}: the index.yaml of ${s.original} is not YAML` })
      }
    })
    cache.set(url, p)
  }
  return p
}

// ---- pushing -------------------------------------------------------------------------------------------------

const pushChartArtifact = async (client: OciClient, repository: string, tgz: Uint8Array, a: ChartLayout, signal?: AbortSignal): Promise<void> => {
  await client.pushBlob(repository, a.config.bytes, { digest: a.config.descriptor.digest, signal })
  await client.pushBlob(repository, tgz, { digest: a.chart.digest, signal })
  await client.pushManifest(`${repository}:${a.tag}`, { bytes: a.manifest.bytes, mediaType: a.manifest.descriptor.mediaType }, { signal })
}

/** What the tag holds: undefined if nothing, else its digest and chart layer. */
const existingChart = async (client: OciClient, ref: string, signal?: AbortSignal): Promise<{ digest: string; chartLayer?: string } | undefined> => {
  const found = await client.manifestExists(ref, { signal })
  if (found === undefined) return undefined
  const { manifest } = await client.fetchManifest(`${ref.slice(0, ref.lastIndexOf(":"))}@${found.digest}`, { signal })
  const layer = chartLayer(manifest)?.digest
  return layer === undefined ? { digest: found.digest } : { digest: found.digest, chartLayer: layer }
}

const artifact = (key: string, repository: string, tag: string, digest: string, action: "pushed" | "present"): MirroredArtifact => ({
  key,
  ref: `${repository}:${tag}@${digest}`,
  digest,
  action,
})

/** Pushes a chart archive under its version tag, unless the tag already holds this archive. */
const putChart = async (client: OciClient, item: PlanItem, tgz: Buffer, what: string, signal?: AbortSignal, expectName?: string): Promise<MirroredArtifact> => {
  let a: ChartLayout
  try {
    a = chartArtifact(tgz)
  } catch (err) {
    throw new ChartSourceUnsupportedError({
      release: item.release,
      message: `Release ${item.release}: ${what}: ${err instanceof Error ? err.message : String(err)}`,
    })
  }
  if (expectName !== undefined && a.metadata.name !== expectName) {
    throw new ChartSourceUnsupportedError({
      release: item.release,
      message: `Release ${item.release}: ${what}: the archive holds chart ${a.metadata.name}, not ${expectName}`,
    })
  }
  if (a.tag !== item.tag) {
    throw new ChartSourceUnsupportedError({
      release: item.release,
      message: `Release ${item.release}: ${what}: the archive is ${a.metadata.name} ${a.metadata.version}, not version tag ${item.tag}`,
    })
  }
  const ref = `${item.repository}:${item.tag}`
  return guarded("registry", item.release, what, async () => {
    const existing = await existingChart(client, ref, signal)
    if (existing !== undefined) {
      if (existing.digest === a.manifest.descriptor.digest || existing.chartLayer === a.chart.digest)
        return artifact(item.key, item.repository, item.tag, existing.digest, "present")
      throw conflict(ref, existing.digest, a.manifest.descriptor.digest, what)
    }
    await pushChartArtifact(client, item.repository, tgz, a, signal)
    return artifact(item.key, item.repository, item.tag, a.manifest.descriptor.digest, "pushed")
  })
}

const mirrorHelmRepo = async (
  client: OciClient,
  o: MirrorOptions,
  cache: IndexCache,
  item: Extract<PlanItem, { _tag: "Chart" }>,
  s: Extract<ChartSource, { _tag: "HelmRepo" }>,
) => {
  const what = `Mirroring chart ${s.chart} ${s.version} of release ${item.release}`
  const index = await fetchIndex(o, cache, s, item.release)
  const entry = findIndexEntry(index, s.chart, s.version)
  if (entry === undefined || entry.urls.length === 0) {
    throw new ChartSourceUnsupportedError({
      release: item.release,
      message:
        s.repoUrl === s.original
          ? `Release ${item.release}: chart ${s.chart} version ${s.version} is not in the Helm repository ${s.original}: the mirror cannot copy a chart its upstream does not publish`
          : `Release ${item.release}: chart ${s.chart} version ${s.version} is not in the Helm repository ${s.original}, read at ${s.repoUrl} by an upstream rewrite: add that chart version there, or fix the rewrite (chart registryMirror.upstreamRewrites, --upstream-rewrite)`,
    })
  }
  const ref = `${item.repository}:${item.tag}`
  // The index names the archive's digest: a tag that already holds it needs no download at all.
  const indexDigest = entry.digest !== undefined && /^[a-f0-9]{64}$/u.test(entry.digest) ? `sha256:${entry.digest}` : undefined
  if (indexDigest !== undefined) {
    const existing = await guarded("registry", item.release, what, () => existingChart(client, ref, o.signal))
    if (existing?.chartLayer === indexDigest) return artifact(item.key, item.repository, item.tag, existing.digest, "present")
  }
  const base = s.repoUrl.endsWith("/") ? s.repoUrl : `${s.repoUrl}/`
  const url = rewrite(new URL(entry.urls[0]!, base).toString(), o.rewrites ?? [])
  const tgz = await httpGet(o, url, item.release, what, o.maxChartBytes ?? 64 * 1024 * 1024)
  if (indexDigest !== undefined && digestOf(tgz) !== indexDigest) {
    throw new RegistryUnavailableError({
      registry: new URL(url).host,
      cause: "digest mismatch",
      message: `${what}: ${url} hashes to ${digestOf(tgz)}, the index says ${indexDigest}`,
    })
  }
  return putChart(client, item, tgz, what, o.signal, s.chart)
}

const mirrorOci = async (client: OciClient, o: MirrorOptions, item: Extract<PlanItem, { _tag: "Chart" }>, s: Extract<ChartSource, { _tag: "Oci" }>) => {
  const what = `Mirroring chart ${s.chart} ${s.version} of release ${item.release}`
  const src = `${s.repository}:${s.tag}`
  const dst = `${item.repository}:${item.tag}`
  const found = await guarded("upstream", item.release, what, () => client.fetchManifest(src, { signal: o.signal }))
  const srcLayer = chartLayer(found.manifest)?.digest
  if (srcLayer === undefined)
    throw new ChartSourceUnsupportedError({ release: item.release, message: `Release ${item.release}: ${s.original}/${s.chart}:${s.tag} is not a Helm chart` })
  return guarded("registry", item.release, what, async () => {
    const existing = await existingChart(client, dst, o.signal)
    if (existing !== undefined) {
      if (existing.digest === found.descriptor.digest || existing.chartLayer === srcLayer)
        return artifact(item.key, item.repository, item.tag, existing.digest, "present")
      throw conflict(dst, existing.digest, found.descriptor.digest, what)
    }
    try {
      const r = await client.copy(`${s.repository}@${found.descriptor.digest}`, dst, { signal: o.signal })
      return artifact(item.key, item.repository, item.tag, r.descriptor.digest, "pushed")
    } catch (err) {
      // A failure reading the source half-way is the upstream's, not the runtime registry's.
      if (err instanceof OciError && parseReference(s.repository).registry === err.registry && parseReference(item.repository).registry !== err.registry) {
        throw translate(err, "upstream", item.release, what)
      }
      throw err
    }
  })
}

const mirrorWrapper = (client: OciClient, o: MirrorOptions, item: Extract<PlanItem, { _tag: "Wrapper" }>) =>
  putChart(client, item, writeTgz(item.files), `Pushing wrapper chart ${item.chart} ${item.version} of release ${item.release}`, o.signal)

const mirrorBundle = async (client: OciClient, o: MirrorOptions, plan: MirrorPlan): Promise<MirroredArtifact> => {
  const { repository, tag } = plan.bundle
  const what = `Pushing the bundle of input ${shortDigest(plan.inputDigest)}`
  const b: BundleArtifact = bundleArtifact(plan.bundle.files, plan.bundle.modes, plan.inputDigest)
  const ref = `${repository}:${tag}`
  return guarded("registry", BUNDLE_KEY, what, async () => {
    const existing = await client.manifestExists(ref, { signal: o.signal })
    if (existing !== undefined) {
      if (existing.digest === b.manifest.digest) return artifact(BUNDLE_KEY, repository, tag, existing.digest, "present")
      throw conflict(ref, existing.digest, b.manifest.digest, what)
    }
    await client.pushBlob(repository, Buffer.from("{}"), { signal: o.signal })
    await client.pushBlob(repository, b.layer.bytes, { digest: b.layer.descriptor.digest, signal: o.signal })
    await client.pushManifest(ref, { bytes: b.manifest.bytes, mediaType: b.manifest.mediaType }, { signal: o.signal })
    return artifact(BUNDLE_KEY, repository, tag, b.manifest.digest, "pushed")
  })
}

export const BUNDLE_KEY = "bundle"

/**
 * What each `host/repository:tag` holds now (one manifest HEAD each; undefined when the tag is gone), for the check
 * of a recorded mirror (verify.ts). Failures are translated like a mirror's (registry down → transient, refused
 * credentials → `UnauthorizedError`).
 */
export const checkTags = (
  client: OciClient,
  references: ReadonlyArray<string>,
  o: Pick<MirrorOptions, "concurrency" | "signal"> = {},
): Promise<Array<{ reference: string; digest: string | undefined }>> =>
  mapLimit(references, o.concurrency ?? 4, (reference) =>
    guarded("registry", BUNDLE_KEY, `Checking tag ${reference}`, async () => ({
      reference,
      digest: (await client.manifestExists(reference, { signal: o.signal }))?.digest,
    })),
  )

/** Mirrors every artifact of `plan`, then the bundle. Rejects with the first failure (a tagged error, or a defect). */
export const runMirror = async (client: OciClient, plan: MirrorPlan, o: MirrorOptions = {}): Promise<MirrorResult> => {
  const before = client.stats.bytesSent
  const cache: IndexCache = new Map()
  const charts = await mapLimit(plan.items, o.concurrency ?? 4, async (item) => {
    const done =
      item._tag === "Wrapper"
        ? await mirrorWrapper(client, o, item)
        : item.source._tag === "HelmRepo"
          ? await mirrorHelmRepo(client, o, cache, item, item.source)
          : await mirrorOci(client, o, item, item.source)
    o.onArtifact?.(done)
    return done
  })
  const bundle = await mirrorBundle(client, o, plan)
  o.onArtifact?.(bundle)
  const all = [...charts, bundle]
  return {
    inputDigest: plan.inputDigest,
    charts,
    bundle,
    bytesUploaded: client.stats.bytesSent - before,
    pushed: all.filter((a) => a.action === "pushed").length,
    present: all.filter((a) => a.action === "present").length,
  }
}
