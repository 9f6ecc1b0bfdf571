/**
 * When to mint the next token (docs/adr/20261202-registry-credentials.md), pure: at the refresh interval (6 h, spec
 * §4.16) after the last mint, and always a margin before the token expires (a quarter of its lifetime, at most one
 * hour: 11 h for ECR's 12 h tokens, 15 s for a 20 s test token); then up to 10 % of the wait earlier, by a jitter
 * drawn once per mint, so replicas and clusters do not refresh in step. Never sooner than a second after the mint.
 */

export const DEFAULT_REFRESH_INTERVAL_MS = 6 * 3_600_000
export const MAX_EXPIRY_MARGIN_MS = 3_600_000
export const JITTER_FRACTION = 0.1
export const MIN_WAIT_MS = 1_000

/** The expiry margin for a token of `lifetimeMs`. */
export const expiryMargin = (lifetimeMs: number): number => Math.min(MAX_EXPIRY_MARGIN_MS, Math.max(0, lifetimeMs) / 4)

/**
 * Epoch ms of the next mint for a token minted at `mintedAt` that expires at `expiresAt`.
 * `jitter` is a uniform draw from [0, 1).
 */
export const refreshAt = (mintedAt: number, expiresAt: number, intervalMs: number, jitter: number): number => {
  const latest = Math.min(mintedAt + intervalMs, expiresAt - expiryMargin(expiresAt - mintedAt))
  const wait = latest - mintedAt
  return mintedAt + Math.max(MIN_WAIT_MS, Math.floor(wait * (1 - JITTER_FRACTION * Math.min(Math.max(jitter, 0), 1))))
}

/** Milliseconds from `now` until `at` (0 when due). */
export const until = (at: number, now: number): number => Math.max(0, at - now)
