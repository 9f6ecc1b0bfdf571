/**
 * The one root pino logger of a process (design/style.md §B.6): JSON lines, level as a label, `base: { app }`,
 * ISO time, and redaction of credential paths. Nothing outside `packages/logging` imports pino; code logs through
 * Effect (`Effect.logInfo`, `Effect.annotateLogs`) and the bridge in `bridge.ts` forwards to this logger.
 */
import { pino, type DestinationStream, type Logger as Pino } from "pino"

/** Level names as pino spells them. */
export type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace"

/**
 * Paths redacted from every log line. `*.x` matches one level below the root, so the top-level spelling is listed too.
 * Secret payloads (`data`, `stringData`, Docker `auths`) and tokens never reach a log sink.
 */
export const REDACT_PATHS: ReadonlyArray<string> = [
  "password",
  "*.password",
  "*.*.password",
  "token",
  "*.token",
  "*.*.token",
  "authorizationToken",
  "*.authorizationToken",
  "*.*.authorizationToken",
  // ECR's GetAuthorizationToken output: the token sits inside an array, which no `*.authorizationToken` reaches.
  "authorizationData",
  "*.authorizationData",
  "auths",
  "*.auths",
  "*.*.auths",
  "authorization",
  "*.authorization",
  "*.headers.authorization",
  "*.headers.Authorization",
  "data.*",
  "*.data.*",
  "stringData.*",
  "*.stringData.*",
  "bearerToken",
  "*.bearerToken",
]

export const REDACTED = "[REDACTED]"

export interface RootLoggerOptions {
  /** Goes into every line as `app`, e.g. `approval-guard`. */
  readonly app: string
  readonly level?: Level | undefined
  /** Where lines go; defaults to stdout (fd 1, synchronous writes so nothing is lost at exit). */
  readonly destination?: DestinationStream | undefined
  /** Extra paths to redact on top of {@link REDACT_PATHS}. */
  readonly redact?: ReadonlyArray<string> | undefined
}

/** The root logger; every line carries `level` (label), `time` (ISO), `app` and `msg`. */
export const makeRootLogger = (options: RootLoggerOptions): Pino =>
  pino(
    {
      level: options.level ?? "info",
      base: { app: options.app },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACT_PATHS, ...(options.redact ?? [])], censor: REDACTED },
      // The bridge already serialises causes into plain objects; only raw Errors go through pino's serializer.
      serializers: { err: (e: unknown) => (e instanceof Error ? pino.stdSerializers.err(e) : e) },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  )

export type { Pino }
