/**
 * What a reconcile asks for next (design/style.md §B.2). Backoff on errors belongs to the driver, never here, and
 * there is deliberately no `requeue: true` (controller-runtime deprecated it).
 */
import { Duration } from "effect"

export type Requeue =
  /** Wait for a watch event on the root or a mapped secondary. The normal outcome. */
  | { readonly _tag: "OnChange" }
  /** Come back after a known delay: polling, or a deadline such as a token's expiry minus a margin. */
  | { readonly _tag: "After"; readonly delay: Duration.Duration }
  /** A terminal outcome: nothing will change until the user does something (a watch event still triggers). */
  | { readonly _tag: "Never" }

export const Requeue = {
  onChange: { _tag: "OnChange" } as Requeue,
  never: { _tag: "Never" } as Requeue,
  after: (delay: Duration.Input): Requeue => ({ _tag: "After", delay: Duration.fromInputUnsafe(delay) }),
  /** The sooner of two requests (`OnChange`/`Never` lose to any `After`). */
  min: (a: Requeue, b: Requeue): Requeue =>
    a._tag !== "After" ? b : b._tag !== "After" ? a : Duration.toMillis(a.delay) <= Duration.toMillis(b.delay) ? a : b,
} as const
