/**
 * The one error type of `@aicr/oras`: {@link OciError}, an effect `Data.TaggedError` whose `reason` is a tagged
 * union, shaped like effect's `HttpClientError` so that `Effect.catchReason("OciError", "NotFound", …)` works.
 *
 * It is also a plain `Error` subclass: the Promise API rejects with it and `instanceof OciError` holds.
 */
import { Data } from "effect"

/** The registry or a manifest/blob/tag is not there (HTTP 404, `*_UNKNOWN`). */
export interface NotFound {
  readonly _tag: "NotFound"
}
/** No credentials, or the registry refused them (HTTP 401). */
export interface Unauthorized {
  readonly _tag: "Unauthorized"
}
/** Authenticated but not allowed (HTTP 403, `DENIED`). */
export interface Denied {
  readonly _tag: "Denied"
}
/** Content did not hash to the digest it was asked for, or a registry computed a different digest than ours. */
export interface DigestMismatch {
  readonly _tag: "DigestMismatch"
  readonly expected: string
  readonly actual?: string
}
/** Transient: 429, 5xx or a connection failure, still failing after the retry budget. */
export interface Unavailable {
  readonly _tag: "Unavailable"
  readonly attempts: number
}
/** The registry's state disagrees with the request (HTTP 409, 416 on an upload out of sync). */
export interface Conflict {
  readonly _tag: "Conflict"
}
/** The request or the registry's answer is malformed (bad reference, HTTP 400, unparseable JSON, 405). */
export interface Invalid {
  readonly _tag: "Invalid"
}
/** Content exceeds a limit (HTTP 413, or a manifest/config larger than the client accepts in memory). */
export interface TooLarge {
  readonly _tag: "TooLarge"
  readonly limit: number
  readonly size?: number
}

/** Why an {@link OciError} happened. Switch on `reason._tag`. */
export type OciErrorReason = NotFound | Unauthorized | Denied | DigestMismatch | Unavailable | Conflict | Invalid | TooLarge

/** The `_tag`s of {@link OciErrorReason}, for mapping tables. */
export type OciErrorReasonTag = OciErrorReason["_tag"]

/** All reason tags, in a stable order. */
export const ociErrorReasonTags: readonly OciErrorReasonTag[] = [
  "NotFound",
  "Unauthorized",
  "Denied",
  "DigestMismatch",
  "Unavailable",
  "Conflict",
  "Invalid",
  "TooLarge",
]

/**
 * A failed registry operation.
 *
 * Fields: `reason` (tagged union), `registry` (host[:port] as addressed), `repository` and `reference` (tag or
 * digest) when the operation had them, `status` (HTTP status if one was received), `code` (the distribution error
 * code from the body, e.g. `BLOB_UNKNOWN`), `message` (human-first) and `cause`.
 *
 * Gotchas:
 * - Compare `err.reason._tag`, never `err.message`.
 * - `Unavailable` is raised only after the retry budget is spent; retrying it again later is reasonable.
 *
 * @example
 * ```ts
 * import { OciError } from "@aicr/oras"
 * const err = new OciError({ reason: { _tag: "NotFound" }, registry: "127.0.0.1:5000", repository: "charts/demo",
 *   reference: "1.2.3", message: "Manifest charts/demo:1.2.3 not found" })
 * if (err.reason._tag === "NotFound") console.log(err.repository)
 * ```
 */
export class OciError extends Data.TaggedError("OciError")<{
  readonly reason: OciErrorReason
  readonly registry: string
  readonly repository?: string | undefined
  readonly reference?: string | undefined
  readonly status?: number | undefined
  readonly code?: string | undefined
  readonly message: string
  readonly cause?: unknown
}> {}

/** Where an error happened; every operation knows at least the registry. */
export interface ErrorTarget {
  readonly registry: string
  readonly repository?: string | undefined
  readonly reference?: string | undefined
}

/** Builds an {@link OciError} for `target` with a bare reason tag (no reason fields). */
export const ociError = (
  target: ErrorTarget,
  reason: OciErrorReason,
  message: string,
  extra: { readonly status?: number | undefined; readonly code?: string | undefined; readonly cause?: unknown } = {},
): OciError =>
  new OciError({
    reason,
    registry: target.registry,
    repository: target.repository,
    reference: target.reference,
    message,
    ...(extra.status !== undefined ? { status: extra.status } : {}),
    ...(extra.code !== undefined ? { code: extra.code } : {}),
    ...(extra.cause !== undefined ? { cause: extra.cause } : {}),
  })

/** True when `u` is an {@link OciError}, optionally with the given reason tag. */
export const isOciError = (u: unknown, reason?: OciErrorReasonTag): u is OciError => u instanceof OciError && (reason === undefined || u.reason._tag === reason)

/** One entry of a distribution error body `{"errors":[{code,message,detail}]}`. */
export interface RegistryErrorEntry {
  readonly code: string
  readonly message?: string
  readonly detail?: unknown
}

/** Parses a distribution error body; returns `[]` for anything else (HTML 404 pages, empty bodies). */
export const parseRegistryErrors = (body: string): RegistryErrorEntry[] => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed !== "object" || parsed === null || !("errors" in parsed) || !Array.isArray(parsed.errors)) return []
    return parsed.errors.flatMap((e: unknown) =>
      typeof e === "object" && e !== null && "code" in e && typeof e.code === "string"
        ? [{ code: e.code, ...("message" in e && typeof e.message === "string" ? { message: e.message } : {}), ...("detail" in e ? { detail: e.detail } : {}) }]
        : [],
    )
  } catch {
    return []
  }
}

/**
 * Maps an HTTP status (and the registry's error code, if any) to a reason. Transient statuses map to
 * `Unavailable`; the caller decides about retries before it gets here.
 */
export const reasonForStatus = (status: number, code: string | undefined, attempts = 1): OciErrorReason => {
  if (code === "DIGEST_INVALID") return { _tag: "DigestMismatch", expected: "" }
  if (code === "DENIED") return { _tag: "Denied" }
  if (code === "UNAUTHORIZED") return { _tag: "Unauthorized" }
  if (code === "SIZE_INVALID" && status === 413) return { _tag: "TooLarge", limit: 0 }
  switch (status) {
    case 401:
      return { _tag: "Unauthorized" }
    case 403:
      return { _tag: "Denied" }
    case 404:
      return { _tag: "NotFound" }
    case 409:
    case 416:
      return { _tag: "Conflict" }
    case 413:
      return { _tag: "TooLarge", limit: 0 }
    case 408:
    case 429:
      return { _tag: "Unavailable", attempts }
    case 501:
      return { _tag: "Invalid" }
    default:
      return status >= 500 ? { _tag: "Unavailable", attempts } : { _tag: "Invalid" }
  }
}
