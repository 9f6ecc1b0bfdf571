/**
 * `KubeError`: every failure of a call to the API server, as one tagged error with a `reason` union
 * (design/style.md §B.5, following Effect's `HttpClientError`). Nothing outside `packages/kube` sees an
 * `ApiException` or an undici error: they are converted here, at the boundary.
 *
 * Handle a reason with `Effect.catchReason("KubeError", "NotFound", ...)`; the runtime driver treats `Conflict`
 * (stale resourceVersion) as a silent requeue and `FieldManagerConflict` (someone else's room) as a contract violation.
 */
import { Data } from "effect"

export type KubeErrorTag =
  | "NotFound"
  | "Conflict"
  | "FieldManagerConflict"
  | "Forbidden"
  | "Unauthorized"
  | "Invalid"
  | "AlreadyExists"
  | "Gone"
  | "Unavailable"
  | "Timeout"
  | "TooManyRequests"

/** One entry of a `Status.details.causes` list (metav1.StatusCause; the JSON key of its type is `reason`). */
export interface StatusCause {
  readonly reason?: string | undefined
  readonly message?: string | undefined
  readonly field?: string | undefined
}

export interface KubeErrorReasonOf<T extends KubeErrorTag> {
  readonly _tag: T
  /** HTTP status code; 0 when no response arrived (connection refused, reset, timeout). */
  readonly code: number
  /** The `Status.message` from the API server, or the transport error's message. */
  readonly message: string
  /** `Status.details.causes`, e.g. one `FieldManagerConflict` per conflicting field. */
  readonly causes: ReadonlyArray<StatusCause>
  /** From `Retry-After` or `Status.details.retryAfterSeconds`, when the server sent one. */
  readonly retryAfterSeconds?: number | undefined
}

export type KubeErrorReason = { readonly [T in KubeErrorTag]: KubeErrorReasonOf<T> }[KubeErrorTag]

export class KubeError extends Data.TaggedError("KubeError")<{
  readonly reason: KubeErrorReason
  /** HTTP method, e.g. `PATCH`. */
  readonly verb: string
  /** Request path without the server, e.g. `/apis/operator.aicr.run/v1alpha1/runtimerollouts/r1/status`. */
  readonly path: string
}> {
  override get message(): string {
    return `${this.verb} ${this.path}: ${this.reason._tag}${this.reason.code ? ` (${this.reason.code})` : ""}: ${this.reason.message}`
  }
}

/** Transient reasons: the driver backs off and retries; nothing is wrong with the request itself. */
export const isTransient = (e: KubeError): boolean => e.reason._tag === "Unavailable" || e.reason._tag === "Timeout" || e.reason._tag === "TooManyRequests"

const reason = <T extends KubeErrorTag>(
  _tag: T,
  code: number,
  message: string,
  causes: ReadonlyArray<StatusCause> = [],
  retryAfterSeconds?: number,
): KubeErrorReasonOf<T> => (retryAfterSeconds === undefined ? { _tag, code, message, causes } : { _tag, code, message, causes, retryAfterSeconds })

const asRecord = (u: unknown): Record<string, unknown> | undefined => {
  if (typeof u === "string") {
    try {
      return asRecord(JSON.parse(u))
    } catch {
      return undefined
    }
  }
  return typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : undefined
}

/**
 * Map an HTTP status code and the `Status` body the API server sent (object or JSON string) to a reason.
 * The body's `reason` and `details.causes` refine the code: 409 + `AlreadyExists` → AlreadyExists,
 * 409 + a `FieldManagerConflict` cause → FieldManagerConflict, anything else on 409 → Conflict.
 */
export const reasonFromStatus = (code: number, body?: unknown, headers?: Readonly<Record<string, string>>): KubeErrorReason => {
  const status = asRecord(body)
  const statusReason = typeof status?.["reason"] === "string" ? (status["reason"] as string) : undefined
  const message =
    typeof status?.["message"] === "string"
      ? (status["message"] as string)
      : typeof body === "string" && body !== "" && status === undefined
        ? body
        : `HTTP ${code}${statusReason ? ` ${statusReason}` : ""}`
  const details = asRecord(status?.["details"])
  const causes: ReadonlyArray<StatusCause> = Array.isArray(details?.["causes"])
    ? (details["causes"] as ReadonlyArray<unknown>).flatMap((c) => {
        const r = asRecord(c)
        return r === undefined
          ? []
          : [{ reason: r["reason"] as string | undefined, message: r["message"] as string | undefined, field: r["field"] as string | undefined }]
      })
    : []
  const retryHeader = headers?.["retry-after"] ?? headers?.["Retry-After"]
  const retryAfter =
    typeof details?.["retryAfterSeconds"] === "number"
      ? (details["retryAfterSeconds"] as number)
      : retryHeader !== undefined && /^\d+$/.test(retryHeader)
        ? Number(retryHeader)
        : undefined
  const effectiveCode = code || (typeof status?.["code"] === "number" ? (status["code"] as number) : 0)
  switch (effectiveCode) {
    case 401:
      return reason("Unauthorized", 401, message, causes)
    case 403:
      return reason("Forbidden", 403, message, causes)
    case 404:
      return reason("NotFound", 404, message, causes)
    case 409:
      if (statusReason === "AlreadyExists") return reason("AlreadyExists", 409, message, causes)
      if (causes.some((c) => c.reason === "FieldManagerConflict")) return reason("FieldManagerConflict", 409, message, causes)
      return reason("Conflict", 409, message, causes)
    case 410:
      return reason("Gone", 410, message, causes)
    case 429:
      return reason("TooManyRequests", 429, message, causes, retryAfter)
    case 504:
      return reason("Timeout", 504, message, causes, retryAfter)
  }
  if (statusReason === "Timeout" || statusReason === "ServerTimeout") return reason("Timeout", effectiveCode, message, causes, retryAfter)
  if (effectiveCode >= 500) return reason("Unavailable", effectiveCode, message, causes, retryAfter)
  // 400 BadRequest, 405, 406, 415 UnsupportedMediaType, 422 Invalid, 412 and the rest: the request is wrong.
  return reason("Invalid", effectiveCode, message, causes)
}

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT", "ESOCKETTIMEDOUT"])

/**
 * Map anything a client call can throw: an `ApiException` (duck-typed on `code` + `body`), an undici/`fetch`
 * error (`TypeError: fetch failed` with a `cause` carrying `code`), a `TimeoutError`/`AbortError`, or a plain error.
 */
export const reasonFromUnknown = (err: unknown): KubeErrorReason => {
  if (typeof err === "object" && err !== null) {
    const e = err as { code?: unknown; body?: unknown; headers?: unknown; statusCode?: unknown; name?: unknown; message?: unknown; cause?: unknown }
    if (typeof e.code === "number" && e.code >= 100 && e.code < 600)
      return reasonFromStatus(e.code, e.body, asRecord(e.headers) as Record<string, string> | undefined)
    if (typeof e.statusCode === "number") return reasonFromStatus(e.statusCode, e.body)
    if (e.name === "TimeoutError") return reason("Timeout", 0, String(e.message ?? "request timed out"))
    const code = typeof e.code === "string" ? e.code : undefined
    if (code !== undefined && TIMEOUT_CODES.has(code)) return reason("Timeout", 0, `${code}: ${String(e.message ?? "")}`)
    if (e.cause !== undefined && e.cause !== err) {
      const inner = reasonFromUnknown(e.cause)
      return inner._tag === "Timeout" ? inner : reason("Unavailable", 0, `${String(e.message ?? "request failed")}: ${inner.message}`)
    }
    return reason("Unavailable", 0, code !== undefined ? `${code}: ${String(e.message ?? "")}` : String(e.message ?? err))
  }
  return reason("Unavailable", 0, String(err))
}

export const kubeErrorFromUnknown = (verb: string, path: string, err: unknown): KubeError =>
  err instanceof KubeError ? err : new KubeError({ reason: reasonFromUnknown(err), verb, path })

export const kubeErrorFromStatus = (verb: string, path: string, code: number, body?: unknown, headers?: Readonly<Record<string, string>>): KubeError =>
  new KubeError({ reason: reasonFromStatus(code, body, headers), verb, path })
