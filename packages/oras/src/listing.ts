/**
 * Listings: tags (paginated with `n`/`last` and `Link`) and referrers (the v1.1 referrers API, with the
 * `sha256-<hex>` tag-schema fallback for registries without it).
 */
import { type ErrorTarget, isOciError, ociError } from "./errors"
import { type CallOptions, type Ctx, pull, type Repo, target } from "./context"
import { nextLink } from "./link"
import { fetchManifest, referrersTag } from "./manifests"
import { type Descriptor, type ImageIndex, MediaType } from "./media-types"
import { readLimited } from "./transport/http"

/** Options of {@link listTags} and {@link listRepositories}. */
export interface ListTagsOptions extends CallOptions {
  /** Page size (`n`); the registry may return fewer, and some (distribution 2.8 for tags) ignore it. */
  readonly pageSize?: number
  /** Start after this name (`last`), in lexical order; names not after it are dropped even if the registry sends them. */
  readonly last?: string
}

const readJson = async <A>(ctx: Ctx, body: Parameters<typeof readLimited>[0], t: ReturnType<typeof target>, what: string): Promise<A> => {
  const text = await readLimited(body, ctx.maxManifestBytes)
  try {
    return JSON.parse(text) as A
  } catch (cause) {
    throw ociError(t, { _tag: "Invalid" }, `${what} returned invalid JSON`, { cause })
  }
}

/** Follows `n`/`last` + `Link: rel="next"` pagination, yielding `field` of each page. */
async function* paginate(
  ctx: Ctx,
  registry: string,
  first: string,
  field: "tags" | "repositories",
  scopes: string[],
  t: ErrorTarget,
  what: string,
  opts: ListTagsOptions,
): AsyncGenerator<string[]> {
  let path: string | undefined = first
  let query: Record<string, string | number | undefined> = { n: opts.pageSize, last: opts.last }
  const seen = new Set<string>()
  while (path !== undefined) {
    const key = path + JSON.stringify(query)
    if (seen.has(key)) throw ociError(t, { _tag: "Invalid" }, `${what} paginates in a loop at ${path}`)
    seen.add(key)
    const res = await ctx.transport.send({ method: "GET", registry, path, query, scopes, signal: opts.signal }, t)
    if (res.status !== 200) throw await ctx.transport.failure(res, t, what)
    const link = res.header("link")
    const page = await readJson<Partial<Record<typeof field, string[] | null>>>(ctx, res.body, t, what)
    const names = page[field] ?? []
    yield opts.last !== undefined ? names.filter((n) => n > opts.last!) : names
    path = nextLink(link)
    query = {}
  }
}

/**
 * Lists tags page by page: `GET /v2/<name>/tags/list?n=&last=`, following `Link: <…>; rel="next"`.
 * Yields one array per page; a repository with no tags yields one empty page.
 *
 * Gotchas:
 * - distribution 2.8 ignores `n` and `last` for tags and returns every tag, unsorted, in one page; the
 *   client then yields that one page (and still honours `last` by filtering).
 *
 * @example
 * ```ts
 * import { OciClient } from "@aicr/oras"
 * const client = new OciClient()
 * for await (const page of client.listTags("127.0.0.1:5000/charts/demo", { pageSize: 100 })) console.log(page)
 * ```
 */
export const listTags = (ctx: Ctx, repo: Repo, opts: ListTagsOptions = {}): AsyncGenerator<string[]> =>
  paginate(ctx, repo.registry, `/v2/${repo.repository}/tags/list`, "tags", pull(repo), target(repo), `Listing tags of ${repo.repository}`, opts)

/** All tags of a repository (every page). */
export const allTags = async (ctx: Ctx, repo: Repo, opts: ListTagsOptions = {}): Promise<string[]> => {
  const out: string[] = []
  for await (const page of listTags(ctx, repo, opts)) out.push(...page)
  return out
}

/**
 * Lists a registry's repositories page by page (`GET /v2/_catalog?n=&last=`, `Link` pagination).
 *
 * Gotchas: optional in the distribution spec; many hosted registries (ECR included) refuse or restrict it, and
 * a token needs the `registry:catalog:*` scope.
 */
export const listRepositories = (ctx: Ctx, registry: string, opts: ListTagsOptions = {}): AsyncGenerator<string[]> =>
  paginate(ctx, registry, "/v2/_catalog", "repositories", ["registry:catalog:*"], { registry }, `Listing repositories of ${registry}`, opts)

/** Options of {@link referrers}. */
export interface ReferrersOptions extends CallOptions {
  /** Only referrers of this artifact type (filtered by the registry if it can, else here). */
  readonly artifactType?: string
  /** Skip the referrers API and read the tag-schema index directly. */
  readonly forceTagSchema?: boolean
}

/** Where a referrers answer came from. */
export type ReferrersSource = "api" | "tag-schema"

const byType = (list: readonly Descriptor[], artifactType: string | undefined) =>
  artifactType === undefined ? [...list] : list.filter((d) => d.artifactType === artifactType)

/**
 * The manifests that refer to `subjectDigest` in `repo` (their `subject` is it).
 *
 * Gotchas:
 * - A registry that answers the referrers API with 404 does not implement it (a conforming one never does); the
 *   client then reads the `sha256-<hex>` index tag and remembers, per registry, to go there directly.
 * - An empty result is not an error: no index tag means no referrers.
 */
export const referrers = async (
  ctx: Ctx,
  repo: Repo,
  subjectDigest: string,
  opts: ReferrersOptions = {},
): Promise<{ readonly descriptors: Descriptor[]; readonly source: ReferrersSource }> => {
  const t = target(repo, subjectDigest)
  if (opts.forceTagSchema !== true && ctx.referrersApi.get(repo.registry) !== false) {
    const found: Descriptor[] = []
    let path: string | undefined = `/v2/${repo.repository}/referrers/${subjectDigest}`
    let query: Record<string, string | undefined> = { artifactType: opts.artifactType }
    let filtered = true
    while (path !== undefined) {
      const res = await ctx.transport.send(
        { method: "GET", registry: repo.registry, path, query, headers: { accept: MediaType.OciIndex }, scopes: pull(repo), signal: opts.signal },
        t,
      )
      if (res.status === 404 && found.length === 0) {
        await res.body.dump()
        ctx.referrersApi.set(repo.registry, false)
        break
      }
      if (res.status !== 200) throw await ctx.transport.failure(res, t, `Listing referrers of ${subjectDigest} in ${repo.repository}`)
      ctx.referrersApi.set(repo.registry, true)
      filtered &&= (res.header("oci-filters-applied") ?? "")
        .split(",")
        .map((s) => s.trim())
        .includes("artifactType")
      const link = res.header("link")
      const index = await readJson<ImageIndex>(ctx, res.body, t, `Referrers of ${subjectDigest}`)
      found.push(...(index.manifests ?? []))
      path = nextLink(link)
      query = {}
    }
    if (ctx.referrersApi.get(repo.registry) === true) {
      return { descriptors: filtered ? found : byType(found, opts.artifactType), source: "api" }
    }
  }
  try {
    const { manifest } = await fetchManifest(
      ctx,
      { registry: repo.registry, repository: repo.repository, tag: referrersTag(subjectDigest) },
      { ...opts, accept: [MediaType.OciIndex] },
    )
    return { descriptors: byType("manifests" in manifest ? manifest.manifests : [], opts.artifactType), source: "tag-schema" }
  } catch (err) {
    if (isOciError(err, "NotFound")) return { descriptors: [], source: "tag-schema" }
    throw err
  }
}
