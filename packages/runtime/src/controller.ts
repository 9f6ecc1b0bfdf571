/**
 * The reconcile driver: informer events → keys → a de-duplicating work queue → `workers` fibers calling
 * `reconcile(key)`, and the outcome → requeue policy (design/style.md §B.5):
 * - success: forget the key's backoff; `Requeue.after(d)` schedules it again, `onChange`/`never` wait for events;
 * - `KubeError{Conflict}` (stale resourceVersion): debug log only, requeue at once through the backoff (5 ms first);
 * - any other typed error: requeue with backoff; logged at `warn` when the error changes, `error` for
 *   `FieldManagerConflict` (a contract violation);
 * - a defect: `error` log with the cause and stack, requeue with backoff.
 * Every reconcile runs inside log annotations `{ controller, reconcileID, <Kind>: key }`.
 * Closing the scope stops taking work, lets in-flight reconciles finish for up to `gracefulShutdown`, then
 * interrupts what is left.
 */
import { keyOf, type KubeObject, type ObjectKey, type ResourceKind } from "@aicr/api"
import type { Informer, InformerEvent } from "@aicr/kube"
import { Cause, Clock, Duration, Effect, Exit, Fiber, Option, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import type { Metrics, ReconcileResult } from "./metrics"
import type { BackoffOptions } from "./ratelimit"
import type { Requeue } from "./requeue"
import { makeWorkQueue, type WorkQueue } from "./workqueue"

/** An informer plus how its events map to root keys. */
export interface Source {
  readonly informer: Informer<KubeObject>
  readonly toKeys: (event: InformerEvent<KubeObject>) => ReadonlyArray<ObjectKey>
}

/** The root kind itself: each event enqueues the object's own key. */
export const self = <T extends KubeObject>(informer: Informer<T>): Source => ({
  informer: informer as unknown as Informer<KubeObject>,
  toKeys: (e) => [keyOf(e.object)],
})

/** A secondary kind mapped to root keys (e.g. an Application to the rollout named in its labels). */
export const mapped = <T extends KubeObject>(informer: Informer<T>, toKeys: (obj: T, event: InformerEvent<T>) => ReadonlyArray<ObjectKey>): Source => ({
  informer: informer as unknown as Informer<KubeObject>,
  toKeys: (e) => toKeys(e.object as T, e as InformerEvent<T>),
})

export interface ControllerOptions<E, R> {
  /** Controller name: log key `controller`, metrics label, work queue name. */
  readonly name: string
  /** The root kind, for the Kind-keyed object reference in logs (`{ RuntimeRollout: key }`). */
  readonly kind: ResourceKind
  readonly sources: ReadonlyArray<Source>
  /**
   * Keys reconciled once the caches have synced, whether or not any object exists for them: for a controller whose
   * work does not wait for its root (the ecr-credential-refresher writes Argo CD's registry Secret before any
   * ClusterRuntime exists). Default none.
   */
  readonly initialKeys?: ReadonlyArray<ObjectKey> | undefined
  readonly reconcile: (key: ObjectKey) => Effect.Effect<Requeue, E, R>
  /** Concurrent reconciles (distinct keys only). Default 1. */
  readonly workers?: number | undefined
  readonly backoff?: BackoffOptions | undefined
  readonly metrics?: Metrics | undefined
  /** How long in-flight reconciles may run after shutdown starts. Default 30 s (operator.md §4.1). */
  readonly gracefulShutdown?: Duration.Input | undefined
  /** Interrupt a reconcile that runs longer than this (it then counts as an error). */
  readonly reconcileTimeout?: Duration.Input | undefined
}

export interface ControllerHandle {
  readonly queue: WorkQueue
  /** Stop taking work and wait for in-flight reconciles (bounded by `gracefulShutdown`). Also run on scope close. */
  readonly drain: Effect.Effect<void>
}

const isConflict = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "KubeError" && (e as { reason?: { _tag?: unknown } }).reason?._tag === "Conflict"
const tagOf = (e: unknown): string => {
  const t = typeof e === "object" && e !== null ? (e as { _tag?: unknown; reason?: { _tag?: unknown } }) : {}
  return typeof t._tag === "string" ? (t._tag === "KubeError" && typeof t.reason?._tag === "string" ? `KubeError/${t.reason._tag}` : t._tag) : "Error"
}

export const runController = <E, R>(options: ControllerOptions<E, R>): Effect.Effect<ControllerHandle, never, R | Scope.Scope> =>
  Effect.gen(function* () {
    const { name, metrics } = options
    const workers = Math.max(1, options.workers ?? 1)
    const graceMs = Duration.toMillis(options.gracefulShutdown ?? "30 seconds")
    metrics?.registerController(name, workers)
    const queue = yield* makeWorkQueue({ name, backoff: options.backoff, metrics: metrics?.workqueue(name) })
    const lastError = new Map<ObjectKey, string>()

    for (const s of options.sources) {
      yield* s.informer.subscribe((e) => Effect.forEach(s.toKeys(e), queue.add, { discard: true }))
    }
    yield* Effect.forEach(options.sources, (s) => s.informer.awaitSynced, { discard: true })
    yield* Effect.logInfo("Caches synced, starting workers", { workers })
    yield* Effect.forEach(options.initialKeys ?? [], queue.add, { discard: true })

    const handle = (key: ObjectKey, exit: Exit.Exit<Requeue, E>): Effect.Effect<ReconcileResult | undefined> =>
      Effect.gen(function* () {
        if (Exit.isSuccess(exit)) {
          queue.forget(key)
          if (lastError.delete(key)) yield* Effect.logInfo("Reconcile recovered")
          if (exit.value._tag === "After") {
            yield* queue.addAfter(key, exit.value.delay)
            return "requeue_after"
          }
          return "success"
        }
        const cause = exit.cause
        if (Cause.hasInterruptsOnly(cause)) return undefined
        const error = Cause.findErrorOption(cause)
        if (Option.isSome(error) && !Cause.hasDies(cause) && isConflict(error.value)) {
          yield* Effect.logDebug("Conflict on a stale object, requeuing")
          yield* queue.addRateLimited(key)
          return "requeue"
        }
        const tag = Option.isSome(error) && !Cause.hasDies(cause) ? tagOf(error.value) : "Defect"
        if (tag === "Defect") yield* Effect.logError("Reconciler panicked", cause)
        else if (tag === "KubeError/FieldManagerConflict") yield* Effect.logError("Write into another controller's room refused (contract violation)", cause)
        else if (lastError.get(key) !== tag) yield* Effect.logWarning("Reconcile failed, retrying with backoff", cause)
        else yield* Effect.logDebug("Reconcile failed again, retrying with backoff", { error: tag })
        lastError.set(key, tag)
        yield* queue.addRateLimited(key)
        return "error"
      })

    const processOne = (key: ObjectKey): Effect.Effect<void, never, R> =>
      Effect.gen(function* () {
        const started = yield* Clock.currentTimeMillis
        metrics?.activeWorkers(name, 1)
        const body = options.reconcileTimeout
          ? options.reconcile(key).pipe(
              Effect.timeoutOrElse({
                duration: options.reconcileTimeout,
                orElse: () => Effect.die(new Error(`Reconcile exceeded ${Duration.format(Duration.fromInputUnsafe(options.reconcileTimeout!))}`)),
              }),
            )
          : options.reconcile(key)
        const exit = yield* Effect.exit(body)
        metrics?.activeWorkers(name, -1)
        const result = yield* handle(key, exit as Exit.Exit<Requeue, E>)
        if (result !== undefined) metrics?.reconciled(name, result, ((yield* Clock.currentTimeMillis) - started) / 1000)
      }).pipe(Effect.annotateLogs({ reconcileID: randomUUID(), [options.kind.kind]: key }))

    const worker: Effect.Effect<void, never, R> = Effect.gen(function* () {
      for (;;) {
        const next = yield* queue.take
        if (Option.isNone(next)) return
        yield* processOne(next.value).pipe(Effect.ensuring(queue.done(next.value)))
      }
    })

    const fibers = yield* Effect.forEach(Array.from({ length: workers }), () => Effect.forkScoped(worker))

    const drain = Effect.gen(function* () {
      yield* queue.shutdown
      const finished = yield* Effect.timeoutOption(Fiber.joinAll(fibers), graceMs)
      if (Option.isNone(finished)) {
        yield* Effect.logWarning("Graceful shutdown period over, interrupting in-flight reconciles", { keys: [...queue.processing()] })
        yield* Fiber.interruptAll(fibers)
      }
    })
    // Registered after the workers were forked, so it runs before their scope finalizers interrupt them.
    yield* Effect.addFinalizer(() => drain)
    return { queue, drain } satisfies ControllerHandle
  }).pipe(Effect.annotateLogs({ controller: options.name }))
