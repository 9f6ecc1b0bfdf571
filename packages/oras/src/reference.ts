/**
 * OCI references: `[registry/]repository[:tag][@digest]`, parsed with the grammar of distribution's `reference`
 * package and Docker's normalisation (`alpine` → `docker.io/library/alpine`), and Helm's chart version ↔ tag mapping.
 *
 * Also the package's light entry `@aicr/oras/reference`: pure functions without the client (whose undici costs a
 * controller ~20 MiB of RSS), for code that runs when no registry is being spoken to.
 */
import { ociError } from "./errors"

/**
 * A parsed reference. `registry` is the host as written (`docker.io` for Docker Hub, `127.0.0.1:5000`),
 * `repository` the full path (`library/alpine`, `aicr/c1/charts/gpu-operator`).
 * At most one of `tag`/`digest` is needed to address a manifest; with both, the digest wins.
 */
export interface Reference {
  readonly registry: string
  readonly repository: string
  readonly tag?: string | undefined
  readonly digest?: string | undefined
}

const pathComponent = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
const repositoryRe = new RegExp(`^${pathComponent}(?:/${pathComponent})*$`)
const tagRe = /^[\w][\w.-]{0,127}$/
const digestRe = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/
const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
const hostRe = new RegExp(`^(?:${domainComponent}(?:\\.${domainComponent})*|\\[[0-9a-fA-F:.]+\\])(?::[0-9]+)?$`)

/** Docker Hub's canonical name, and the host its API is served from. */
export const DOCKER_HUB = "docker.io"
const DOCKER_HUB_API = "registry-1.docker.io"
const DOCKER_HUB_ALIASES = new Set(["docker.io", "index.docker.io", "registry-1.docker.io"])

const invalid = (input: string, why: string) =>
  ociError({ registry: "", reference: input }, { _tag: "Invalid" }, `Invalid reference ${JSON.stringify(input)}: ${why}`)

/** Known digest algorithms and their hex lengths; other algorithms parse but are not verifiable. */
export const DIGEST_HEX_LENGTH: Readonly<Record<string, number>> = { sha256: 64, sha512: 128 }

/** True for a syntactically valid digest whose hex part has the right length for sha256/sha512. */
export const isDigest = (s: string): boolean => {
  if (!digestRe.test(s)) return false
  const [algorithm, hex] = s.split(":") as [string, string]
  const want = DIGEST_HEX_LENGTH[algorithm]
  return want === undefined ? true : hex.length === want && /^[a-f0-9]+$/.test(hex)
}

/** True for a valid tag (`[\w][\w.-]{0,127}`). */
export const isTag = (s: string): boolean => tagRe.test(s)

/** True for a valid repository path (lower-case components separated by `/`). */
export const isRepository = (s: string): boolean => s.length <= 255 && repositoryRe.test(s)

/**
 * Parses `[oci://][registry/]repository[:tag][@digest]`.
 *
 * Gotchas:
 * - A first path component is a registry only if it contains `.` or `:`, is `localhost`, or has upper case
 *   (Docker's rule); otherwise the registry is `docker.io`, and a single-component Docker Hub repository gains
 *   `library/`.
 * - `index.docker.io` and `registry-1.docker.io` normalise to `docker.io`.
 * - Throws {@link OciError} with reason `Invalid` on bad syntax.
 *
 * @example
 * ```ts
 * import { parseReference } from "@aicr/oras"
 * parseReference("127.0.0.1:5000/charts/demo:1.2.3")
 * // { registry: "127.0.0.1:5000", repository: "charts/demo", tag: "1.2.3" }
 * ```
 */
export const parseReference = (input: string): Reference => {
  let rest = input.startsWith("oci://") ? input.slice("oci://".length) : input
  if (rest.length === 0) throw invalid(input, "empty")
  let digest: string | undefined
  const at = rest.indexOf("@")
  if (at !== -1) {
    digest = rest.slice(at + 1)
    rest = rest.slice(0, at)
    if (!isDigest(digest)) throw invalid(input, `bad digest ${JSON.stringify(digest)}`)
  }
  let tag: string | undefined
  const lastSlash = rest.lastIndexOf("/")
  const colon = rest.lastIndexOf(":")
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1)
    rest = rest.slice(0, colon)
    if (!isTag(tag)) throw invalid(input, `bad tag ${JSON.stringify(tag)}`)
  }
  const slash = rest.indexOf("/")
  let registry: string
  let repository: string
  const first = slash === -1 ? "" : rest.slice(0, slash)
  if (slash !== -1 && (/[.:]/.test(first) || first === "localhost" || first !== first.toLowerCase())) {
    registry = first
    repository = rest.slice(slash + 1)
    if (!hostRe.test(registry)) throw invalid(input, `bad registry host ${JSON.stringify(registry)}`)
  } else {
    registry = DOCKER_HUB
    repository = rest
  }
  if (DOCKER_HUB_ALIASES.has(registry)) {
    registry = DOCKER_HUB
    if (!repository.includes("/")) repository = `library/${repository}`
  }
  if (!isRepository(repository)) throw invalid(input, `bad repository ${JSON.stringify(repository)}`)
  return { registry, repository, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) }
}

/** Formats a reference back to `registry/repository[:tag][@digest]` (no `oci://`). */
export const formatReference = (ref: Reference): string =>
  `${ref.registry}/${ref.repository}${ref.tag !== undefined ? `:${ref.tag}` : ""}${ref.digest !== undefined ? `@${ref.digest}` : ""}`

/** The string to put after `/manifests/`: the digest if present, else the tag; throws `Invalid` if neither. */
export const manifestReference = (ref: Reference): string => {
  const r = ref.digest ?? ref.tag
  if (r === undefined) {
    throw ociError(ref, { _tag: "Invalid" }, `Reference ${formatReference(ref)} has neither a tag nor a digest`)
  }
  return r
}

/** The same repository with another tag or digest (`{ tag }` drops the digest and vice versa). */
export const withReference = (ref: Reference, at: { readonly tag: string } | { readonly digest: string }): Reference =>
  "tag" in at ? { registry: ref.registry, repository: ref.repository, tag: at.tag } : { registry: ref.registry, repository: ref.repository, digest: at.digest }

/** The host[:port] to connect to for `registry` (Docker Hub's API lives on `registry-1.docker.io`). */
export const registryEndpoint = (registry: string): string => (registry === DOCKER_HUB ? DOCKER_HUB_API : registry)

/** True for `localhost`, `127.0.0.0/8` and `[::1]`, with or without a port. */
export const isLoopback = (registry: string): boolean => {
  const host = registry.startsWith("[") ? registry.slice(0, registry.indexOf("]") + 1) : registry.split(":")[0]!
  return host === "localhost" || host === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(host)
}

/** The OCI tag of a chart version: `+` is not allowed in tags, so Helm writes `_`. */
export const chartTag = (version: string): string => version.replaceAll("+", "_")

/** The chart version of an OCI tag (inverse of {@link chartTag}). */
export const chartVersion = (tag: string): string => tag.replaceAll("_", "+")
