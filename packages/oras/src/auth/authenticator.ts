/**
 * Registry authentication: remembers which scheme each registry asked for (basic or Docker bearer token), attaches
 * credentials up front once known, answers `401` challenges, and caches bearer tokens per scope set.
 */
import { ociError } from "../errors"
import { type CredentialProvider, type Credential } from "./credentials"
import { mergeScopes, parseWwwAuthenticate } from "./challenge"
import { TokenCache, tokenEntry, tokenKey, type TokenResponse } from "./token-cache"

type Scheme = { readonly kind: "basic" } | { readonly kind: "bearer"; readonly realm: string; readonly service: string }

/** Fetches a token: GET `url` with the optional basic `authorization`; resolves the parsed JSON or throws. */
export type TokenFetcher = (url: string, authorization: string | undefined, registry: string, signal?: AbortSignal) => Promise<TokenResponse>

/** `Basic base64(user:password)`. */
export const basicAuthorization = (c: Credential): string => `Basic ${Buffer.from(`${c.username}:${c.password}`, "utf8").toString("base64")}`

/** The token endpoint URL for `scopes` (repeated `scope=` parameters, as distribution expects). */
export const tokenUrl = (realm: string, service: string, scopes: readonly string[]): string => {
  const url = new URL(realm)
  if (service.length > 0) url.searchParams.set("service", service)
  for (const s of scopes) url.searchParams.append("scope", s)
  return url.toString()
}

/**
 * Per-client authentication state. One instance serves all registries of an `OciClient`.
 *
 * Gotchas:
 * - Credentials are looked up again at every handshake, never stored here, so a provider can rotate them.
 * - Concurrent requests that need the same token share one token request.
 */
export class Authenticator {
  private readonly schemes = new Map<string, Scheme>()
  private readonly tokens: TokenCache
  private readonly inflight = new Map<string, Promise<string>>()

  constructor(
    private readonly credentials: CredentialProvider,
    private readonly fetchToken: TokenFetcher,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = new TokenCache(now)
  }

  /** The `Authorization` to send before any challenge, or undefined while the registry's scheme is unknown. */
  async authorize(registry: string, scopes: readonly string[], signal?: AbortSignal): Promise<string | undefined> {
    const scheme = this.schemes.get(registry)
    if (scheme === undefined) return undefined
    if (scheme.kind === "basic") {
      const cred = await this.credentials(registry)
      return cred === undefined ? undefined : basicAuthorization(cred)
    }
    return `Bearer ${await this.token(registry, scheme, mergeScopes(scopes), signal)}`
  }

  /**
   * Handles a `401`: records the scheme from `wwwAuthenticate` and returns the `Authorization` to retry with, or
   * undefined when retrying cannot help (no credentials for basic, or the same credentials were just refused).
   */
  async challenge(
    registry: string,
    wwwAuthenticate: string | undefined,
    scopes: readonly string[],
    rejected: string | undefined,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const challenges = parseWwwAuthenticate(wwwAuthenticate ?? "")
    const bearer = challenges.find((c) => c.scheme === "bearer" && c.params.realm !== undefined)
    if (bearer !== undefined) {
      const scheme = { kind: "bearer", realm: bearer.params.realm!, service: bearer.params.service ?? "" } as const
      this.schemes.set(registry, scheme)
      const own = mergeScopes(scopes)
      const wanted = mergeScopes([...scopes, ...(bearer.params.scope !== undefined ? [bearer.params.scope] : [])])
      if (rejected?.startsWith("Bearer ") === true) this.tokens.deleteToken(rejected.slice("Bearer ".length))
      const token = await this.token(registry, scheme, wanted, signal)
      // Remember it for the operation's own scope set too, so the next request sends it up front.
      const entry = this.tokens.get(tokenKey(registry, scheme.service, wanted))
      if (entry !== undefined) this.tokens.set(tokenKey(registry, scheme.service, own), entry)
      const header = `Bearer ${token}`
      return header === rejected ? undefined : header
    }
    // Basic, or a registry that did not say: try basic if we have credentials.
    this.schemes.set(registry, { kind: "basic" })
    const cred = await this.credentials(registry)
    if (cred === undefined) return undefined
    const header = basicAuthorization(cred)
    return header === rejected ? undefined : header
  }

  private token(
    registry: string,
    scheme: { readonly realm: string; readonly service: string },
    scopes: readonly string[],
    signal?: AbortSignal,
  ): Promise<string> {
    const key = tokenKey(registry, scheme.service, scopes)
    const cached = this.tokens.get(key) ?? this.tokens.covering(registry, scheme.service, scopes)
    if (cached !== undefined) return Promise.resolve(cached.token)
    const pending = this.inflight.get(key)
    if (pending !== undefined) return pending
    const request = (async () => {
      const cred = await this.credentials(registry)
      const res = await this.fetchToken(
        tokenUrl(scheme.realm, scheme.service, scopes),
        cred === undefined ? undefined : basicAuthorization(cred),
        registry,
        signal,
      )
      const entry = tokenEntry(res, this.now())
      if (entry === undefined) {
        throw ociError({ registry }, { _tag: "Unauthorized" }, `Token endpoint ${scheme.realm} returned no token`)
      }
      this.tokens.set(key, entry)
      return entry.token
    })().finally(() => this.inflight.delete(key))
    this.inflight.set(key, request)
    return request
  }
}
