/**
 * Informer: a list+watch cache of one `ResourceKind` (optionally one namespace and label/field selectors) that feeds
 * add/update/delete events to subscribers, e.g. the work queue of `@aicr/runtime`.
 *
 * Behaviour (test-infra.md §7.2):
 * - list → replace the cache, emitting the *diff* (`add` new, `update` changed resourceVersion, `delete` vanished);
 *   then watch from the list's resourceVersion with bookmarks.
 * - a clean end of the watch (server timeout) re-watches from the last resourceVersion; `Gone` (410) relists at once;
 *   any other failure (connection refused/reset, 5xx) backs off with jittered exponential delay, then relists.
 * - watchdog: no event or bookmark for `watchdog` → the stream is presumed half-open; drop it and relist.
 * - `transform` (default: drop `managedFields` and the last-applied annotation) runs before anything is stored: the
 *   cache holds the projection the controller reads, never the whole object (controller-runtime's cache transforms);
 *   the list applies it page by page and the watch as each line is decoded, so a relist holds one page of whole
 *   objects at a time and a burst of events waiting for their turn holds projections only.
 * - `tolerate`: a list failure it accepts (e.g. `NotFound` while a CRD is not installed, `Forbidden` without RBAC)
 *   counts as synced with an empty cache and is kept as `listError()`, so the controller starts and reports it as a
 *   condition instead of waiting forever; the list is retried with backoff and the error clears once it succeeds.
 * - stopping is closing the scope: the loop fiber is interrupted, so a stop can never schedule a restart (the
 *   client-node `stop()` → AbortError → `start()` trap does not exist here).
 */
import { keyOf, type KubeObject, type ObjectKey, type ResourceKind } from "@aicr/api"
import { Clock, Deferred, Duration, Effect, Option, Random, Result, type Scope } from "effect"
import type { KubeError } from "./errors"
import { Kube } from "./kube"
import type { WatchEvent } from "./types"

export type InformerEvent<T> =
  | { readonly type: "add"; readonly object: T }
  | { readonly type: "update"; readonly object: T; readonly old: T }
  | { readonly type: "delete"; readonly object: T }

export interface InformerOptions<T extends KubeObject> {
  readonly kind: ResourceKind
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** Applied to every object before it is cached. Default {@link stripManagedFields}. */
  readonly transform?: ((obj: T) => T) | undefined
  /** No event or bookmark for this long → relist. Default 3 minutes (the API server bookmarks about once a minute). */
  readonly watchdog?: Duration.Input | undefined
  /** Server-side watch timeout; default a random 300–600 s per watch, as client-go does. */
  readonly watchTimeoutSeconds?: number | undefined
  /** Reconnect backoff after a failure: doubles from `initial` to `max`, ±25 % jitter. Default 1 s → 30 s. */
  readonly backoff?: { readonly initial?: Duration.Input | undefined; readonly max?: Duration.Input | undefined } | undefined
  /** List failures that count as synced-and-empty (kept as `listError()`) instead of holding the controller back. */
  readonly tolerate?: ((error: KubeError) => boolean) | undefined
  /**
   * After a tolerated list failure, wait for this before the backoff and the next list: no request while it waits
   * (e.g. until the kind's CRD shows in another informer's cache, instead of listing a missing kind every 30 s).
   */
  readonly retryWhen?: ((error: KubeError) => Effect.Effect<void>) | undefined
}

export interface Informer<T extends KubeObject> {
  readonly kind: ResourceKind
  /** What it lists and watches: the namespace (all when absent) and the selectors. */
  readonly scope: { readonly namespace?: string | undefined; readonly labelSelector?: string | undefined; readonly fieldSelector?: string | undefined }
  /** From the cache; `none` when absent. Only as fresh as the last event. */
  readonly get: (key: ObjectKey) => Option.Option<T>
  readonly list: () => ReadonlyArray<T>
  /** True once the first list has been stored. */
  readonly hasSynced: () => boolean
  readonly awaitSynced: Effect.Effect<void>
  /** Register a handler; the current cache content is replayed to it as `add` events first. */
  readonly subscribe: (handler: (event: InformerEvent<T>) => Effect.Effect<void>) => Effect.Effect<void>
  /** The resourceVersion the cache reflects (last list, event or bookmark). */
  readonly resourceVersion: () => string
  /** How many lists (initial + relists) have run; for tests and metrics. */
  readonly listCount: () => number
  /** The tolerated failure of the last list (the cache is then empty), or undefined once a list succeeded. */
  readonly listError: () => KubeError | undefined
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

/** The default transform: `managedFields` and the last-applied annotation are the biggest parts of most objects. */
export const stripManagedFields = <T extends KubeObject>(obj: T): T => {
  const meta = obj.metadata as KubeObject["metadata"] & { managedFields?: unknown }
  if (meta.managedFields === undefined && meta.annotations?.[LAST_APPLIED] === undefined) return obj
  const { managedFields: _drop, ...rest } = meta
  let annotations = rest.annotations
  if (annotations?.[LAST_APPLIED] !== undefined) {
    const { [LAST_APPLIED]: _a, ...others } = annotations
    annotations = others
  }
  return { ...obj, metadata: annotations === undefined ? rest : { ...rest, annotations } }
}

type Outcome = { readonly _tag: "closed"; readonly ms: number } | { readonly _tag: "stale" } | { readonly _tag: "failed"; readonly error: KubeError }

export const makeInformer = <T extends KubeObject>(options: InformerOptions<T>): Effect.Effect<Informer<T>, never, Kube | Scope.Scope> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const { kind } = options
    const transform = options.transform ?? stripManagedFields
    const watchdogMs = Duration.toMillis(options.watchdog ?? "3 minutes")
    const initialMs = Duration.toMillis(options.backoff?.initial ?? "1 second")
    const maxMs = Duration.toMillis(options.backoff?.max ?? "30 seconds")
    const selectors = { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector }
    /** Given to the list and the watch, which apply it as each item is read. */
    const project = (o: KubeObject): KubeObject => transform(o as T)

    let cache = new Map<ObjectKey, T>()
    let rv = ""
    let lists = 0
    let lastActivity = 0
    let listError: KubeError | undefined
    const handlers: Array<(e: InformerEvent<T>) => Effect.Effect<void>> = []
    const synced = yield* Deferred.make<void>()

    const emit = (e: InformerEvent<T>): Effect.Effect<void> =>
      Effect.forEach(handlers, (h) => h(e).pipe(Effect.catchCause((cause) => Effect.logError("Informer handler failed", cause))), { discard: true })

    const rvOf = (o: T) => o.metadata.resourceVersion ?? ""

    /** A list's items, already projected (the list applies `transform` page by page). */
    const replace = (items: ReadonlyArray<T>): Effect.Effect<void> =>
      Effect.gen(function* () {
        const next = new Map<ObjectKey, T>()
        for (const o of items) next.set(keyOf(o), o)
        const old = cache
        cache = next
        for (const [k, o] of old) if (!next.has(k)) yield* emit({ type: "delete", object: o })
        for (const [k, o] of next) {
          const prev = old.get(k)
          if (prev === undefined) yield* emit({ type: "add", object: o })
          else if (rvOf(prev) !== rvOf(o)) yield* emit({ type: "update", object: o, old: prev })
        }
      })

    const onEvent = (ev: WatchEvent<T>): Effect.Effect<void> =>
      Effect.gen(function* () {
        lastActivity = yield* Clock.currentTimeMillis
        if (ev.type === "BOOKMARK") {
          rv = ev.resourceVersion
          return
        }
        const o = ev.object // projected by the watch (its `transform`) as the line was decoded
        const k = keyOf(o)
        rv = rvOf(o) || rv
        const prev = cache.get(k)
        if (ev.type === "DELETED") {
          cache.delete(k)
          yield* emit({ type: "delete", object: prev ?? o })
          return
        }
        cache.set(k, o)
        if (prev === undefined) yield* emit({ type: "add", object: o })
        else if (rvOf(prev) !== rvOf(o)) yield* emit({ type: "update", object: o, old: prev })
      })

    const jittered = (ms: number) => Random.next.pipe(Effect.map((r) => Math.round(ms * (0.75 + r * 0.5))))

    const watchdogTimer: Effect.Effect<Outcome> = Effect.gen(function* () {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        const due = lastActivity + watchdogMs
        if (now >= due) return { _tag: "stale" } as const
        yield* Effect.sleep(due - now)
      }
    })

    const watchOnce: Effect.Effect<Outcome> = Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      lastActivity = started
      const timeoutSeconds = options.watchTimeoutSeconds ?? (yield* Random.nextIntBetween(300, 600))
      const watched = kube.watch<T>(kind, { ...selectors, resourceVersion: rv, allowBookmarks: true, timeoutSeconds, transform: project }, onEvent).pipe(
        Effect.result,
        Effect.flatMap((r) =>
          Clock.currentTimeMillis.pipe(
            Effect.map((now): Outcome => (Result.isSuccess(r) ? { _tag: "closed", ms: now - started } : { _tag: "failed", error: r.failure })),
          ),
        ),
      )
      return yield* Effect.raceFirst(watched, watchdogTimer)
    })

    const loop: Effect.Effect<never> = Effect.gen(function* () {
      let delay = initialMs
      let failing = false
      const backoff = Effect.gen(function* () {
        yield* Effect.sleep(yield* jittered(delay))
        delay = Math.min(delay * 2, maxMs)
      })
      for (;;) {
        const listed = yield* Effect.result(kube.list<T>(kind, { ...selectors, transform: project }))
        if (Result.isFailure(listed)) {
          const tolerated = options.tolerate?.(listed.failure) === true
          if (!failing) yield* (tolerated ? Effect.logInfo : Effect.logWarning)("Listing failed, retrying with backoff", { err: listed.failure.message })
          failing = true
          if (tolerated) {
            listError = listed.failure
            yield* replace([])
            yield* Deferred.succeed(synced, undefined)
            if (options.retryWhen !== undefined) yield* options.retryWhen(listed.failure)
          }
          yield* backoff
          continue
        }
        lists++
        if (failing) yield* Effect.logInfo("Listing recovered")
        failing = false
        listError = undefined
        delay = initialMs
        yield* replace(listed.success.items)
        rv = listed.success.resourceVersion
        yield* Deferred.succeed(synced, undefined)
        for (;;) {
          const outcome = yield* watchOnce
          if (outcome._tag === "closed") {
            // A server-side timeout: continue from the last resourceVersion. A stream that closes at once is a failure.
            if (outcome.ms < 1000) yield* backoff
            continue
          }
          if (outcome._tag === "stale") {
            yield* Effect.logInfo("No watch events or bookmarks within the watchdog period, relisting", { watchdogMs })
            break
          }
          if (outcome.error.reason._tag === "Gone") {
            yield* Effect.logDebug("Watch resourceVersion expired, relisting")
            break
          }
          yield* Effect.logWarning("Watch failed, relisting with backoff", { err: outcome.error.message })
          failing = true
          yield* backoff
          break
        }
      }
    })

    yield* Effect.forkScoped(loop.pipe(Effect.annotateLogs({ informer: kind.kind, ...(options.namespace ? { namespace: options.namespace } : {}) })))

    const informer: Informer<T> = {
      kind,
      scope: selectors,
      get: (key) => Option.fromNullishOr(cache.get(key)),
      list: () => [...cache.values()],
      hasSynced: () => Deferred.isDoneUnsafe(synced),
      awaitSynced: Deferred.await(synced),
      subscribe: (handler) =>
        Effect.suspend(() => {
          handlers.push(handler)
          const snapshot = [...cache.values()]
          return Effect.forEach(snapshot, (object) => handler({ type: "add", object }), { discard: true })
        }),
      resourceVersion: () => rv,
      listCount: () => lists,
      listError: () => listError,
    }
    return informer
  })
