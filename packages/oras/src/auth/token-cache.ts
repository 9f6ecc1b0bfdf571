/**
 * Bearer tokens cached per (registry, service, scope set) until shortly before they expire.
 */

/** A cached bearer token and when it stops being usable (epoch ms, already minus the safety margin). */
export interface CachedToken {
  readonly token: string
  readonly expiresAt: number
}

/** True when the granted scopes include every action of every wanted scope (`*` grants all actions). */
export const scopesCover = (granted: readonly string[], wanted: readonly string[]): boolean => {
  const actions = new Map<string, Set<string>>()
  for (const g of granted) {
    const i = g.lastIndexOf(":")
    actions.set(g.slice(0, i), new Set(g.slice(i + 1).split(",")))
  }
  return wanted.every((w) => {
    const i = w.lastIndexOf(":")
    const have = actions.get(w.slice(0, i))
    return (
      have !== undefined &&
      (have.has("*") ||
        w
          .slice(i + 1)
          .split(",")
          .every((a) => have.has(a)))
    )
  })
}

/** A token endpoint's JSON answer (Docker token spec: `token` or OAuth2's `access_token`). */
export interface TokenResponse {
  readonly token?: string
  readonly access_token?: string
  readonly expires_in?: number
  readonly issued_at?: string
}

/** Tokens shorter-lived than this are assumed to live this long (Docker token spec: 60 s minimum). */
export const DEFAULT_TOKEN_TTL_S = 60

/**
 * Turns a token response into a cache entry. Lifetime is `expires_in` (default 60 s) from `issued_at` (or `now`
 * when absent or in the future by clock skew), minus `marginMs` so a token is not used in its last seconds.
 */
export const tokenEntry = (res: TokenResponse, now: number, marginMs = 10_000): CachedToken | undefined => {
  const token = res.token ?? res.access_token
  if (token === undefined || token.length === 0) return undefined
  const ttlS = typeof res.expires_in === "number" && res.expires_in > 0 ? res.expires_in : DEFAULT_TOKEN_TTL_S
  const issued = res.issued_at !== undefined ? Date.parse(res.issued_at) : Number.NaN
  const start = Number.isNaN(issued) || issued > now ? now : issued
  const margin = Math.min(marginMs, (ttlS * 1000) / 2)
  return { token, expiresAt: start + ttlS * 1000 - margin }
}

/** Cache key of a token: registry, token service and the sorted scope list. */
export const tokenKey = (registry: string, service: string, scopes: readonly string[]): string => `${registry}|${service}|${[...scopes].sort().join(" ")}`

/**
 * An in-memory token cache with a clock you can inject (tests pass a fake `now`).
 *
 * @example
 * ```ts
 * import { TokenCache } from "@aicr/oras"
 * const cache = new TokenCache(() => 0)
 * cache.set("k", { token: "t", expiresAt: 50_000 })
 * cache.get("k") // { token: "t", expiresAt: 50000 }
 * ```
 */
export class TokenCache {
  private readonly entries = new Map<string, CachedToken>()

  constructor(private readonly now: () => number = Date.now) {}

  /** The token for `key` if it has not expired; expired entries are dropped. */
  get(key: string): CachedToken | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined) return undefined
    if (this.now() >= hit.expiresAt) {
      this.entries.delete(key)
      return undefined
    }
    return hit
  }

  set(key: string, entry: CachedToken): void {
    this.entries.set(key, entry)
  }

  /**
   * A live token for `registry`/`service` whose scopes cover `wanted` (keys made by {@link tokenKey}), so a
   * `pull,push` token also serves later pulls of the same repository.
   */
  covering(registry: string, service: string, wanted: readonly string[]): CachedToken | undefined {
    const prefix = `${registry}|${service}|`
    for (const key of this.entries.keys()) {
      if (!key.startsWith(prefix)) continue
      const granted = key
        .slice(prefix.length)
        .split(" ")
        .filter((s) => s.length > 0)
      if (scopesCover(granted, wanted)) {
        const hit = this.get(key)
        if (hit !== undefined) return hit
      }
    }
    return undefined
  }

  /** Forgets every entry holding `token` (after a registry rejected it). */
  deleteToken(token: string): void {
    for (const [key, entry] of this.entries) if (entry.token === token) this.entries.delete(key)
  }

  /** Forgets `key` (after a registry rejected the token). */
  delete(key: string): void {
    this.entries.delete(key)
  }

  get size(): number {
    return this.entries.size
  }
}
