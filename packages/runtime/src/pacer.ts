/**
 * StatusPacer: a status rewrite that changes only message texts (`@aicr/kube`'s `onlyMessagesChange`) is written at
 * most once per interval per object; any other change is written at once. A controller that reads from informer
 * caches passes on nearly every watch event, and a message quoting what does not hold yet (a sync status, a health)
 * would otherwise be rewritten with each of them: every write wakes every watcher of the object.
 *
 * - `pace(key, messageOnly, write)`: runs `write` now unless `messageOnly` and `key`'s last write is younger than the
 *   interval; answers how many ms are left before the deferred write is due (0 when it ran). The caller requeues
 *   after that long, so the latest message is written then: deferred, never lost.
 * - A write that ran (message-only or not) starts the interval again.
 *
 * State lives in memory only: a restarted process writes its first message-only change at once (one extra write
 * per restart at most). Time comes from Effect's `Clock`, so tests drive it with `TestClock`.
 */
import { Clock, Context, Duration, Effect } from "effect"

export interface StatusPacerShape {
  readonly pace: <E, R>(key: string, messageOnly: boolean, write: Effect.Effect<boolean, E, R>) => Effect.Effect<number, E, R>
}

/** One process's status pacer, shared by its reconciles. */
export class StatusPacer extends Context.Service<StatusPacer, StatusPacerShape>()("@aicr/runtime/StatusPacer") {}

/** The default interval between message-only rewrites of one object. */
export const MESSAGE_INTERVAL_DEFAULT = "10 seconds"

export const makeStatusPacer = (options: { readonly interval?: Duration.Input | undefined } = {}): StatusPacerShape => {
  const intervalMs = Duration.toMillis(options.interval ?? MESSAGE_INTERVAL_DEFAULT)
  const last = new Map<string, number>()
  return {
    pace: (key, messageOnly, write) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (const [k, t] of last) if (now - t >= intervalMs) last.delete(k)
        const since = last.get(key)
        if (messageOnly && since !== undefined) return since + intervalMs - now
        if (yield* write) last.set(key, now)
        return 0
      }),
  }
}
