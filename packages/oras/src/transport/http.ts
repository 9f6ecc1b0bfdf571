/**
 * The HTTP layer every registry call goes through: URL building (plain HTTP for loopback/insecure registries),
 * authentication handshakes, retries with backoff, redirects, and the mapping of failed responses to `OciError`.
 */
import { Readable, Transform } from "node:stream"
import { Agent, type Dispatcher, request } from "undici"
import { type ErrorTarget, ociError, OciError, parseRegistryErrors, reasonForStatus } from "../errors"
import { Authenticator } from "../auth/authenticator"
import { type CredentialProvider } from "../auth/credentials"
import { type TokenResponse } from "../auth/token-cache"
import { registryEndpoint } from "../reference"
import { backoffDelay, isRetryableError, isRetryableStatus, parseRetryAfter, type RetryPolicy, sleep } from "./retry"

export type HttpMethod = "GET" | "HEAD" | "PUT" | "POST" | "PATCH" | "DELETE"

/** A request body: bytes are replayable (retried, re-sent after a challenge); a stream is sent at most once. */
export type Body = string | Uint8Array | Readable

/** One registry call. `path` starts with `/v2/`, or is an absolute URL (an upload `Location`). */
export interface RegistryRequest {
  readonly method: HttpMethod
  readonly registry: string
  readonly path: string
  readonly query?: Readonly<Record<string, string | number | undefined>>
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: Body
  /** Token scopes this call needs (`repository:x:pull`). */
  readonly scopes: readonly string[]
  readonly signal?: AbortSignal | undefined
  /** Send no registry credentials and answer no challenge (token endpoint calls carry their own header). */
  readonly skipAuth?: boolean
}

/** A response whose status the caller has yet to judge. Consume or `dump()` `body`. */
export interface RegistryResponse {
  readonly status: number
  readonly url: string
  readonly attempts: number
  readonly body: Readable & { dump(): Promise<void>; text(): Promise<string> }
  header(name: string): string | undefined
}

/** Transport configuration; all fields have defaults in `OciClient`. */
export interface TransportOptions {
  readonly credentials: CredentialProvider
  readonly plainHttp: (registry: string) => boolean
  readonly retry: RetryPolicy
  readonly dispatcher?: Dispatcher | undefined
  readonly userAgent: string
  readonly now?: () => number
  readonly random?: () => number
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

/** Request/byte counters, for tests and benchmarks ("a second copy uploads 0 bytes"). */
export interface TransportStats {
  requests: number
  bytesSent: number
}

const MAX_REDIRECTS = 5
const MAX_ERROR_BODY = 64 * 1024

const isReplayable = (body: Body | undefined): boolean => !(body instanceof Readable)

const counting = (stats: TransportStats) =>
  new Transform({
    transform(chunk: Buffer, _enc, done) {
      stats.bytesSent += chunk.length
      done(null, chunk)
    },
  })

/** Reads at most `limit` bytes of a body as text and discards the rest. */
export const readLimited = async (body: Readable, limit = MAX_ERROR_BODY): Promise<string> => {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size < limit) chunks.push(chunk.subarray(0, limit - size))
    size += chunk.length
  }
  return Buffer.concat(chunks).toString("utf8")
}

/**
 * Sends registry requests. Owns the connection pool (an undici `Agent`) unless one was given.
 */
export class Transport {
  readonly stats: TransportStats = { requests: 0, bytesSent: 0 }
  readonly authenticator: Authenticator
  private readonly dispatcher: Dispatcher
  private readonly ownsDispatcher: boolean
  private readonly now: () => number
  private readonly random: () => number
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>

  constructor(private readonly options: TransportOptions) {
    this.ownsDispatcher = options.dispatcher === undefined
    this.dispatcher = options.dispatcher ?? new Agent({ connections: 32, keepAliveTimeout: 10_000 })
    this.now = options.now ?? Date.now
    this.random = options.random ?? Math.random
    this.sleep = options.sleep ?? sleep
    this.authenticator = new Authenticator(options.credentials, (url, auth, registry, signal) => this.fetchToken(url, auth, registry, signal), this.now)
  }

  /** The base URL of `registry`'s API (`http://127.0.0.1:5000`, `https://registry-1.docker.io`). */
  baseUrl(registry: string): string {
    return `${this.options.plainHttp(registry) ? "http" : "https"}://${registryEndpoint(registry)}`
  }

  /** Builds the absolute URL of a request (relative `Location`s resolve against the registry's base URL). */
  url(req: Pick<RegistryRequest, "registry" | "path" | "query">): string {
    const url = new URL(req.path, this.baseUrl(req.registry))
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.append(k, String(v))
    return url.toString()
  }

  /**
   * Sends `req`, authenticating and retrying as needed, and returns the final response whatever its status.
   * Throws `OciError` (`Unavailable`) only when the registry could not be reached within the retry budget.
   */
  async send(req: RegistryRequest, target: ErrorTarget): Promise<RegistryResponse> {
    const policy = this.options.retry
    const replayable = isReplayable(req.body)
    const url = this.url(req)
    let attempt = 0
    let challenged = false
    let override: string | undefined
    for (;;) {
      attempt++
      const authorization = req.skipAuth === true ? undefined : (override ?? (await this.authenticator.authorize(req.registry, req.scopes, req.signal)))
      let res: RegistryResponse
      try {
        res = await this.exchange(req, url, authorization, attempt)
      } catch (err) {
        if (err instanceof OciError) throw err
        if (isRetryableError(err) && replayable && attempt < policy.maxAttempts) {
          await this.sleep(backoffDelay(policy, attempt, undefined, this.random), req.signal)
          continue
        }
        if (req.signal?.aborted) throw req.signal.reason
        throw ociError(target, { _tag: "Unavailable", attempts: attempt }, `Cannot reach registry ${req.registry}: ${describe(err)}`, { cause: err })
      }
      if (res.status === 401 && !challenged && replayable && req.skipAuth !== true) {
        challenged = true
        const next = await this.authenticator.challenge(req.registry, res.header("www-authenticate"), req.scopes, authorization, req.signal)
        if (next !== undefined) {
          await res.body.dump()
          override = next
          attempt--
          continue
        }
        return res
      }
      if (isRetryableStatus(res.status) && replayable && attempt < policy.maxAttempts) {
        const retryAfter = parseRetryAfter(res.header("retry-after"), this.now())
        await res.body.dump()
        await this.sleep(backoffDelay(policy, attempt, retryAfter, this.random), req.signal)
        continue
      }
      return res
    }
  }

  /** One HTTP exchange, following redirects for GET/HEAD (dropping credentials when leaving the origin). */
  private async exchange(req: RegistryRequest, url: string, authorization: string | undefined, attempts: number): Promise<RegistryResponse> {
    const origin = new URL(url).origin
    let current = url
    for (let hop = 0; ; hop++) {
      const sameOrigin = new URL(current).origin === origin
      const headers: Record<string, string> = { "user-agent": this.options.userAgent, ...req.headers }
      if (authorization !== undefined && sameOrigin) headers.authorization = authorization
      let body: string | Uint8Array | Readable | undefined = req.body
      if (hop > 0) body = undefined
      if (body instanceof Readable) {
        const source = body
        const counted = counting(this.stats)
        // pipe() does not forward errors: a source that fails (e.g. a digest mismatch) must fail the request.
        source.once("error", (err) => counted.destroy(err))
        body = source.pipe(counted)
      } else if (body !== undefined) this.stats.bytesSent += typeof body === "string" ? Buffer.byteLength(body) : body.length
      this.stats.requests++
      const res = await request(current, {
        method: req.method,
        headers,
        body: body ?? null,
        dispatcher: this.dispatcher,
        signal: req.signal ?? null,
      })
      const location = res.headers.location
      if ((req.method === "GET" || req.method === "HEAD") && res.statusCode >= 300 && res.statusCode < 400 && typeof location === "string") {
        await res.body.dump()
        if (hop + 1 >= MAX_REDIRECTS) throw ociError({ registry: req.registry }, { _tag: "Invalid" }, `Too many redirects from ${url}`)
        current = new URL(location, current).toString()
        continue
      }
      return {
        status: res.statusCode,
        url: current,
        attempts,
        body: res.body,
        header: (name) => {
          const v = res.headers[name.toLowerCase()]
          return Array.isArray(v) ? v.join(", ") : v
        },
      }
    }
  }

  private async fetchToken(url: string, authorization: string | undefined, registry: string, signal?: AbortSignal): Promise<TokenResponse> {
    const target = { registry }
    const parsed = new URL(url)
    const res = await this.send(
      {
        method: "GET",
        registry: parsed.host,
        path: url,
        scopes: [],
        skipAuth: true,
        signal,
        headers: authorization !== undefined ? { authorization } : {},
      },
      target,
    )
    if (res.status !== 200) throw await this.failure(res, target, `Requesting a token from ${parsed.origin}${parsed.pathname}`)
    try {
      return JSON.parse(await res.body.text()) as TokenResponse
    } catch (cause) {
      throw ociError(target, { _tag: "Invalid" }, `Token endpoint ${parsed.origin}${parsed.pathname} returned invalid JSON`, { cause })
    }
  }

  /** Reads the error body of `res` and builds the matching `OciError`; `what` says what was being done. */
  async failure(res: RegistryResponse, target: ErrorTarget, what: string): Promise<OciError> {
    const text = await readLimited(res.body).catch(() => "")
    const entries = parseRegistryErrors(text)
    const first = entries[0]
    const reason = reasonForStatus(res.status, first?.code, res.attempts)
    const detail = first !== undefined ? ` ${first.code}${first.message !== undefined ? `: ${first.message}` : ""}` : ""
    return ociError(target, reason, `${what} failed with HTTP ${res.status}${detail}`, {
      status: res.status,
      code: first?.code,
    })
  }

  /** Closes the connection pool if this transport created it. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close()
  }
}

const describe = (err: unknown): string => {
  const parts: string[] = []
  for (let e: unknown = err, d = 0; e !== undefined && e !== null && d < 4; d++) {
    if (typeof e === "object" && "message" in e && typeof e.message === "string") {
      parts.push("code" in e && typeof e.code === "string" ? `${e.message} (${e.code})` : e.message)
      e = "cause" in e ? e.cause : undefined
    } else {
      parts.push(String(e))
      break
    }
  }
  return parts.join(": ")
}
