/**
 * How a failed pass ends (design/style.md §B.5), the part every controller shares. Each app keeps only its own table
 * in its `errors.ts`: which class each of its errors is, and (for controllers whose failures are conditions) which
 * reason, message and requeue. A table is an `ErrorTable` or a `KubeErrorClasses`, so a new error or a new `KubeError`
 * reason does not compile until it has a row.
 *
 * - transient: the driver retries with backoff. Nothing more is reported, or the condition the pass already wrote
 *   stays (`RetryAfterTransientFailure`).
 * - terminal: the app reports it and waits for a change (or rechecks after a while).
 * - defect: a bug, or a request the API server should never refuse. The app writes `InternalError`, the detail goes
 *   to the log (`logDefect`), and the pass fails with `InternalError` (the driver backs off).
 *
 * A failure that is a transition emits one Warning Event (`warnOnTransition`). A pass that fails the same way again
 * writes nothing and so emits nothing.
 */
import type { KubeObject } from "@aicr/api"
import { EventRecorder, type KubeError, type KubeErrorTag } from "@aicr/kube"
import { Cause, Data, Effect, Option } from "effect"
import { Requeue } from "./requeue"

/** transient: the driver retries with backoff; terminal: reported, wait for a change; defect: `InternalError`. */
export type FailureClass = "transient" | "terminal" | "defect"

/** The class of an error that is never terminal: an API call's, or a pass's own that it does not report. */
export type PassFailureClass = Exclude<FailureClass, "terminal">

/** An exhaustive table over a tagged error union: one row per tag, each row given its own error type. */
export type ErrorTable<E extends { readonly _tag: string }, O> = { readonly [K in E["_tag"]]: (e: Extract<E, { readonly _tag: K }>) => O }

/** The row of `table` for `e`. */
export const outcomeOf = <E extends { readonly _tag: string }, O>(table: ErrorTable<E, O>, e: E): O =>
  (table as unknown as Readonly<Record<string, (e: E) => O>>)[e._tag]!(e)

/** Every `KubeError` reason, classed: an API call's failure is retried or it is a defect, never terminal. */
export type KubeErrorClasses = { readonly [K in KubeErrorTag]: PassFailureClass }

/** The class of a `KubeError` by an app's table. */
export const kubeClassOf =
  (table: KubeErrorClasses) =>
  (e: KubeError): PassFailureClass =>
    table[e.reason._tag]

/** The pass failed on a defect; `InternalError` is written. The driver backs off and logs it. */
export class InternalError extends Data.TaggedError("InternalError")<{ readonly message: string }> {}

/** A transient failure after its condition was written: the driver's backoff retries the key. */
export class RetryAfterTransientFailure extends Data.TaggedError("RetryAfterTransientFailure")<{
  /** The reason the pass reported, when it reported one. */
  readonly reason?: string | undefined
  readonly message: string
}> {}

/** A failed pass, classed: the error to hand back to the driver, or a defect with its message and cause. */
export type Failure<E> =
  { readonly class: "transient"; readonly error: E } | { readonly class: "defect"; readonly message: string; readonly cause: Cause.Cause<unknown> }

/** Classes the cause of a failed pass: transient only when it failed with an error the table says is transient. */
export const classify = <E extends { readonly message: string }>(cause: Cause.Cause<E>, classOf: (e: E) => PassFailureClass): Failure<E> => {
  const error = Cause.findErrorOption(cause)
  if (Option.isSome(error) && !Cause.hasDies(cause) && classOf(error.value) === "transient") return { class: "transient", error: error.value }
  const squashed = Cause.squash(cause)
  const message = Option.isSome(error) ? error.value.message : squashed instanceof Error ? squashed.message : String(squashed)
  return { class: "defect", message, cause }
}

/** A defect's detail, to the log only (a condition says `InternalError` and no more). */
export const logDefect = (what: string, defect: unknown): Effect.Effect<void> =>
  Cause.isCause(defect)
    ? Effect.logError(what, defect)
    : Effect.logError(what, { err: String(defect), stack: defect instanceof Error ? defect.stack : undefined })

/**
 * One Warning Event per transition into a failure: only when the pass's status write changed the object (`applied`);
 * a pass that fails the same way again writes nothing and emits nothing.
 */
export const warnOnTransition = (
  obj: KubeObject,
  applied: boolean,
  warning: { readonly reason: string; readonly action: string; readonly note: string },
): Effect.Effect<void, never, EventRecorder> =>
  applied
    ? Effect.flatMap(EventRecorder, (events) =>
        events.event(obj, { type: "Warning", reason: warning.reason, action: warning.action, note: warning.note.slice(0, 1024) }),
      )
    : Effect.void

export interface FailedPassOptions<E, R> {
  /** The app's table: the class of each error its pass fails with. */
  readonly classOf: (e: E) => PassFailureClass
  /** The log line of a defect (e.g. "Planner pass failed unexpectedly"). */
  readonly log: string
  /** Writes `InternalError` into the app's rooms; `true` when that changed `warning.object` (a transition). */
  readonly report: Effect.Effect<boolean, unknown, R>
  /** The Warning Event of a transition: on `object`, reason `InternalError`, the note followed by the defect's message. */
  readonly warning: { readonly object: KubeObject; readonly action: string; readonly note: string }
}

/**
 * The end of a failed pass for a controller whose pass fails with its errors (`Effect.catchCause`): an interruption
 * stays one; a transient failure goes back to the driver as it is; a defect is logged, reported (`report`, a failure
 * to report is logged too), warned once per transition, and fails with `InternalError`.
 */
export const failedPass = <E extends { readonly message: string }, R>(
  cause: Cause.Cause<E>,
  o: FailedPassOptions<E, R>,
): Effect.Effect<never, E | InternalError, R | EventRecorder> =>
  Effect.gen(function* () {
    if (Cause.hasInterruptsOnly(cause)) return yield* Effect.failCause(cause)
    const failure = classify(cause, o.classOf)
    if (failure.class === "transient") return yield* Effect.fail(failure.error)
    yield* logDefect(o.log, failure.cause)
    const reported = Effect.gen(function* () {
      const applied = yield* o.report
      yield* warnOnTransition(o.warning.object, applied, { reason: "InternalError", action: o.warning.action, note: `${o.warning.note}: ${failure.message}` })
    })
    yield* reported.pipe(Effect.catchCause((c) => Effect.logError("Reporting InternalError failed", c)))
    return yield* Effect.fail(new InternalError({ message: failure.message }))
  })

/**
 * How a failed pass ends for a controller whose failures are conditions (registry-mirror, the refresher): the
 * outcome its `errors.ts` table gives an error, written into its room by the pass like any other outcome.
 */
export interface FailedOutcome<C extends ReportedCondition, E> {
  readonly _tag: "Failed"
  readonly class: FailureClass
  readonly condition: C
  /** Terminal: when to look again. Transient and defect: the driver's backoff decides (the reconcile fails). */
  readonly requeue: Requeue
  readonly error: E | unknown
}

/** The part of a condition a failure reports. */
export interface ReportedCondition {
  readonly status: string
  readonly reason: string
  readonly message: string
}

/** A row of an app's table: the outcome of `error`, in `class`, reporting `condition`. */
export const failedOutcome = <C extends ReportedCondition, E>(
  klass: FailureClass,
  condition: C,
  error: E,
  requeue: Requeue = Requeue.onChange,
): FailedOutcome<C, E> => ({ _tag: "Failed", class: klass, condition, requeue, error })

export interface EndFailedOptions {
  /** The object the pass reported on (the Warning Event's), if any. */
  readonly object: KubeObject | undefined
  /** Whether the pass's status write changed it: only a transition emits a Warning Event. */
  readonly applied: boolean
  /** The Warning Event's action, e.g. "Mirror". */
  readonly action: string
  /** What failed, for the log (e.g. "Mirroring"). */
  readonly what: string
  /** Whether this failure warns at all (default: terminal and transient ones; waiting is no failure). */
  readonly warns?: ((outcome: FailedOutcome<ReportedCondition, unknown>) => boolean) | undefined
}

/**
 * The end of a pass whose outcome is a failure its status write already reported: a defect's detail to the log; one
 * Warning Event per transition; terminal: wait for `outcome.requeue`; transient and defect: fail with
 * `RetryAfterTransientFailure` (the error's own message, for the driver's log), so the driver backs off.
 */
export const endFailed = (
  outcome: FailedOutcome<ReportedCondition, unknown>,
  o: EndFailedOptions,
): Effect.Effect<Requeue, RetryAfterTransientFailure, EventRecorder> =>
  Effect.gen(function* () {
    const { condition } = outcome
    if (outcome.class === "defect") yield* logDefect(`${o.what} failed unexpectedly`, outcome.error)
    const warns = outcome.class !== "defect" && (o.warns === undefined || o.warns(outcome))
    if (o.object !== undefined && warns) yield* warnOnTransition(o.object, o.applied, { reason: condition.reason, action: o.action, note: condition.message })
    if (outcome.class === "terminal") {
      yield* Effect.logInfo(`${o.what} stopped`, { reason: condition.reason, message: condition.message })
      return outcome.requeue
    }
    if (outcome.class === "transient" && o.applied)
      yield* Effect.logWarning(`${o.what} failed transiently`, { reason: condition.reason, message: condition.message })
    const detail = (outcome.error as { readonly message?: unknown } | undefined)?.message
    return yield* Effect.fail(new RetryAfterTransientFailure({ reason: condition.reason, message: typeof detail === "string" ? detail : condition.message }))
  })
