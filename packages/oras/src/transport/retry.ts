/**
 * Retry policy: which failures are transient, and how long to wait before the next attempt
 * (jittered exponential backoff, or the registry's `Retry-After` when it sent one).
 */

/** How many times to try and how long to wait. All durations in milliseconds. */
export interface RetryPolicy {
  /** Total attempts including the first (1 disables retries). Default 5. */
  readonly maxAttempts: number
  /** Base of the exponential backoff. Default 200. */
  readonly baseDelayMs: number
  /** Upper bound of one computed backoff. Default 10 000. */
  readonly maxDelayMs: number
  /** Upper bound for a `Retry-After` the registry asks for. Default 60 000. */
  readonly maxRetryAfterMs: number
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
}

/** 408, 429 and 5xx except 501 (Not Implemented is an answer, not an outage). */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || (status >= 500 && status <= 599 && status !== 501)

const RETRYABLE_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
])

/**
 * True for connection-level failures worth retrying (reset, refused, timeouts, socket closed). Walks `cause` so
 * that a `fetch failed` TypeError wrapping `ECONNRESET` counts. Aborts are never retryable.
 */
export const isRetryableError = (err: unknown): boolean => {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (typeof e !== "object") return false
    if ("name" in e && e.name === "AbortError") return false
    if ("code" in e && typeof e.code === "string" && RETRYABLE_CODES.has(e.code)) return true
    e = "cause" in e ? e.cause : undefined
  }
  return false
}

/**
 * Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds from `now`; undefined if absent or
 * unparseable. A date in the past gives 0.
 */
export const parseRetryAfter = (value: string | undefined, now: number): number | undefined => {
  if (value === undefined) return undefined
  const v = value.trim()
  if (/^\d+$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * The wait before retry number `attempt` (1 = the wait after the first failure): "full jitter",
 * `random() * min(maxDelay, base * 2^(attempt-1))`, or the registry's `Retry-After` (capped) when given.
 */
export const backoffDelay = (policy: RetryPolicy, attempt: number, retryAfterMs: number | undefined, random: () => number = Math.random): number => {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs)
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  return Math.floor(random() * ceiling)
}

/** Resolves after `ms`, or rejects with the signal's reason when aborted. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener("abort", onAbort, { once: true })
  })
