/**
 * Rate limiting: per-key exponential backoff with jitter and a cap (client-go `ItemExponentialFailureRateLimiter`),
 * and a client-side token bucket (qps/burst) for API calls. Both read time from Effect's `Clock`, so tests drive
 * them with `TestClock`.
 */
import { Clock, Duration, Effect, Random } from "effect"

export interface BackoffOptions {
  /** First retry delay (default 5 ms, as controller-runtime: a conflict is retried almost at once). */
  readonly base?: Duration.Input | undefined
  /** Cap (default 5 minutes). */
  readonly max?: Duration.Input | undefined
  /** Extra random delay as a fraction of the delay, in [0, jitter) (default 0.1). */
  readonly jitter?: number | undefined
}

export interface KeyedBackoff {
  /** The next delay for `key` (grows with each call until `forget`). */
  readonly next: (key: string) => Effect.Effect<number>
  readonly forget: (key: string) => void
  readonly failures: (key: string) => number
}

export const makeKeyedBackoff = (options: BackoffOptions = {}): KeyedBackoff => {
  const base = Duration.toMillis(options.base ?? "5 millis")
  const max = Duration.toMillis(options.max ?? "5 minutes")
  const jitter = options.jitter ?? 0.1
  const failures = new Map<string, number>()
  return {
    next: (key) =>
      Random.next.pipe(
        Effect.map((r) => {
          const n = failures.get(key) ?? 0
          failures.set(key, n + 1)
          const delay = Math.min(max, base * 2 ** Math.min(n, 52))
          return Math.min(max, delay * (1 + jitter * r))
        }),
      ),
    forget: (key) => void failures.delete(key),
    failures: (key) => failures.get(key) ?? 0,
  }
}

export interface TokenBucketOptions {
  /** Sustained requests per second (default 20). */
  readonly qps?: number | undefined
  /** Requests allowed at once after idling (default 30). */
  readonly burst?: number | undefined
}

export interface TokenBucket {
  /** Wait for a token. Callers are served in call order; the wait is a `Clock` sleep. */
  readonly take: Effect.Effect<void>
  /** Take a token if one is available now. */
  readonly tryTake: Effect.Effect<boolean>
}

export const makeTokenBucket = (options: TokenBucketOptions = {}): TokenBucket => {
  const qps = options.qps ?? 20
  const burst = Math.max(1, options.burst ?? 30)
  let tokens = burst
  let last: number | undefined
  const refill = (now: number) => {
    if (last !== undefined) tokens = Math.min(burst, tokens + ((now - last) * qps) / 1000)
    last = now
  }
  return {
    // Reserve first (tokens may go negative), then sleep off the debt: concurrent callers queue up fairly.
    take: Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => {
        refill(now)
        tokens -= 1
        return tokens >= 0 ? Effect.void : Effect.sleep(Math.ceil((-tokens * 1000) / qps))
      }),
    ),
    tryTake: Clock.currentTimeMillis.pipe(
      Effect.map((now) => {
        refill(now)
        if (tokens < 1) return false
        tokens -= 1
        return true
      }),
    ),
  }
}
