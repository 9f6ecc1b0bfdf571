/**
 * The Effect → pino bridge (design/style.md §B.6). Code logs with `Effect.logInfo("Applying status")` inside
 * `Effect.annotateLogs({ controller, reconcileID, ...objectRef(kind, obj) })`; the bridge writes one pino line with
 * the annotations as bound fields, plain-object message arguments merged in, and the cause (if any) as `err`.
 *
 * Gotchas: Effect filters by `References.MinimumLogLevel` *before* the bridge sees a line, so {@link layer} sets both
 * that reference and the pino level from one option.
 */
import { Cause, Layer, Logger, References, type LogLevel } from "effect"
import { makeRootLogger, type Level, type Pino, type RootLoggerOptions } from "./root"

const levelOf = (l: LogLevel.LogLevel): Level | undefined => {
  switch (l) {
    case "Fatal":
      return "fatal"
    case "Error":
      return "error"
    case "Warn":
      return "warn"
    case "Info":
      return "info"
    case "Debug":
      return "debug"
    case "Trace":
      return "trace"
    default:
      return undefined
  }
}

const effectLevelOf = (l: Level): LogLevel.LogLevel => {
  switch (l) {
    case "fatal":
      return "Fatal"
    case "error":
      return "Error"
    case "warn":
      return "Warn"
    case "info":
      return "Info"
    case "debug":
      return "Debug"
    case "trace":
      return "Trace"
  }
}

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u) && Object.getPrototypeOf(u) === Object.prototype

/** Serialise a failure for the `err` key: the squashed error (with its own fields, e.g. a tagged error's `reason`) and the pretty cause. */
export const errorField = (cause: Cause.Cause<unknown>): Record<string, unknown> | undefined => {
  if (cause.reasons.length === 0) return undefined
  const squashed = Cause.squash(cause)
  const base: Record<string, unknown> =
    squashed instanceof Error
      ? {
          ...(squashed as unknown as Record<string, unknown>),
          type: (squashed as { _tag?: string })._tag ?? squashed.name,
          message: squashed.message,
          stack: squashed.stack,
        }
      : { type: typeof squashed, message: String(squashed) }
  base["defect"] = Cause.hasDies(cause)
  if (cause.reasons.length > 1 || Cause.hasDies(cause)) base["cause"] = Cause.pretty(cause)
  return base
}

/**
 * Build the bridge logger over a pino instance. Message parts: strings are joined with a space into `msg`, plain
 * objects are merged into the line's fields, `Error`s become `err`.
 */
export const pinoBridge = (root: Pino): Logger.Logger<unknown, void> =>
  Logger.make(({ message, logLevel, cause, fiber }) => {
    const level = levelOf(logLevel)
    if (level === undefined || !root.isLevelEnabled(level)) return
    const fields: Record<string, unknown> = { ...fiber.getRef(References.CurrentLogAnnotations) }
    const parts: Array<string> = []
    for (const m of Array.isArray(message) ? message : [message]) {
      if (typeof m === "string") parts.push(m)
      else if (m instanceof Error) fields["err"] = m
      else if (isPlainObject(m)) Object.assign(fields, m)
      else parts.push(String(m))
    }
    const err = errorField(cause)
    if (err !== undefined) fields["err"] = err
    root[level](fields, parts.join(" "))
  })

export interface LayerOptions {
  readonly root: Pino
  /** Defaults to the root logger's level. */
  readonly level?: Level | undefined
}

/** Replace Effect's default logger with the pino bridge and align `MinimumLogLevel` with pino's level. */
export const layer = (options: LayerOptions): Layer.Layer<never> => {
  const level = options.level ?? (options.root.level as Level)
  options.root.level = level
  return Layer.mergeAll(Logger.layer([pinoBridge(options.root)]), Layer.succeed(References.MinimumLogLevel)(effectLevelOf(level)))
}

/** The usual composition root: a root logger for `app` plus the bridge layer. */
export const live = (options: RootLoggerOptions): Layer.Layer<never> => layer({ root: makeRootLogger(options), level: options.level })
