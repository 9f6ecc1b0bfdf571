/**
 * A keyed, de-duplicating work queue (client-go `workqueue` semantics, design/style.md §0 rule 3):
 * - a key waiting in the queue is there once, however often it is added;
 * - a key is never handed to two workers at once: adding it while it is processing marks it dirty, and it is queued
 *   again (once) when the worker calls `done`;
 * - `addAfter` keeps only the earliest pending delay per key; `addRateLimited` uses the per-key backoff, which
 *   `forget` resets after a success;
 * - `shutdown` stops handing out work at once (`take` returns none) while in-flight keys finish.
 */
import { Clock, Deferred, Duration, Effect, Fiber, Option, type Scope } from "effect"
import { makeKeyedBackoff, type BackoffOptions } from "./ratelimit"

/** Hooks for the `workqueue_*` metrics; all optional. Durations in seconds. */
export interface WorkQueueMetrics {
  readonly depth?: (n: number) => void
  readonly add?: () => void
  readonly retry?: () => void
  readonly queueDuration?: (seconds: number) => void
  readonly workDuration?: (seconds: number) => void
}

export interface WorkQueueOptions {
  readonly name: string
  readonly backoff?: BackoffOptions | undefined
  readonly metrics?: WorkQueueMetrics | undefined
}

export interface WorkQueue {
  readonly name: string
  readonly add: (key: string) => Effect.Effect<void>
  readonly addAfter: (key: string, delay: Duration.Input) => Effect.Effect<void>
  readonly addRateLimited: (key: string) => Effect.Effect<void>
  /** Reset the key's backoff (after a success). */
  readonly forget: (key: string) => void
  readonly numRequeues: (key: string) => number
  /** The next key (waiting if none); `none` once shut down. The caller must call `done(key)` afterwards. */
  readonly take: Effect.Effect<Option.Option<string>>
  readonly done: (key: string) => Effect.Effect<void>
  readonly shutdown: Effect.Effect<void>
  readonly isShuttingDown: () => boolean
  /** Keys waiting (not processing, not delayed). */
  readonly len: () => number
  readonly processing: () => ReadonlySet<string>
  /** Keys with a pending delayed add. */
  readonly delayed: () => ReadonlyMap<string, number>
}

export const makeWorkQueue = (options: WorkQueueOptions): Effect.Effect<WorkQueue, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const backoff = makeKeyedBackoff(options.backoff)
    const m = options.metrics ?? {}
    const queue: Array<string> = []
    const dirty = new Set<string>()
    const processing = new Set<string>()
    const addedAt = new Map<string, number>()
    const startedAt = new Map<string, number>()
    const delayed = new Map<string, { due: number; fiber: Fiber.Fiber<void> }>()
    let shuttingDown = false
    let wake = yield* Deferred.make<void>()

    const signal = Effect.suspend(() => {
      const w = wake
      wake = Deferred.makeUnsafe<void>()
      return Deferred.succeed(w, undefined)
    })

    const add = (key: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (shuttingDown || dirty.has(key)) return
        m.add?.()
        dirty.add(key)
        addedAt.set(key, yield* Clock.currentTimeMillis)
        if (processing.has(key)) return
        queue.push(key)
        m.depth?.(queue.length)
        yield* signal
      })

    const addAfter = (key: string, delay: Duration.Input): Effect.Effect<void> =>
      Effect.gen(function* () {
        const ms = Duration.toMillis(delay)
        if (shuttingDown) return
        if (ms <= 0) return yield* add(key)
        const due = (yield* Clock.currentTimeMillis) + ms
        const pending = delayed.get(key)
        if (pending !== undefined && pending.due <= due) return
        if (pending !== undefined) yield* Fiber.interrupt(pending.fiber)
        const fiber = yield* Effect.forkIn(
          Effect.sleep(ms).pipe(
            Effect.andThen(
              Effect.suspend(() => {
                delayed.delete(key)
                return add(key)
              }),
            ),
          ),
          scope,
        )
        delayed.set(key, { due, fiber })
      })

    const take: Effect.Effect<Option.Option<string>> = Effect.gen(function* () {
      for (;;) {
        if (shuttingDown) return Option.none()
        const key = queue.shift()
        if (key !== undefined) {
          m.depth?.(queue.length)
          const now = yield* Clock.currentTimeMillis
          const added = addedAt.get(key)
          if (added !== undefined) m.queueDuration?.((now - added) / 1000)
          addedAt.delete(key)
          startedAt.set(key, now)
          processing.add(key)
          dirty.delete(key)
          return Option.some(key)
        }
        yield* Deferred.await(wake)
      }
    })

    const done = (key: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const started = startedAt.get(key)
        if (started !== undefined) m.workDuration?.((now - started) / 1000)
        startedAt.delete(key)
        processing.delete(key)
        if (dirty.has(key) && !shuttingDown) {
          queue.push(key)
          m.depth?.(queue.length)
          yield* signal
        }
      })

    const shutdown = Effect.gen(function* () {
      shuttingDown = true
      yield* Effect.forEach([...delayed.values()], (d) => Fiber.interrupt(d.fiber), { discard: true })
      delayed.clear()
      yield* signal
    })

    yield* Effect.addFinalizer(() => shutdown)

    return {
      name: options.name,
      add,
      addAfter,
      addRateLimited: (key) =>
        Effect.gen(function* () {
          m.retry?.()
          yield* addAfter(key, yield* backoff.next(key))
        }),
      forget: backoff.forget,
      numRequeues: backoff.failures,
      take,
      done,
      shutdown,
      isShuttingDown: () => shuttingDown,
      len: () => queue.length,
      processing: () => processing,
      delayed: () => new Map([...delayed].map(([k, v]) => [k, v.due])),
    } satisfies WorkQueue
  })
