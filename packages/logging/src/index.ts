/**
 * @aicr/logging — the only importer of pino: the root logger, the Effect logger bridge and `objectRef`.
 *
 * @example
 * import { Effect } from "effect"
 * import { Logging } from "@aicr/logging"
 * const root = Logging.makeRootLogger({ app: "approval-guard" })
 * Effect.logInfo("Starting").pipe(Effect.provide(Logging.layer({ root })))
 */
export { makeRootLogger, REDACT_PATHS, REDACTED, type Level, type RootLoggerOptions, type Pino } from "./root"
export { pinoBridge, errorField, layer, live, type LayerOptions } from "./bridge"
export { objectRef, type KindLike, type ObjectLike } from "./objectRef"
export * as Logging from "./facade"
