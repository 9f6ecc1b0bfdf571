/** Namespaced re-exports: `import { Logging } from "@aicr/logging"` then `Logging.layer(...)`. */
export { makeRootLogger, REDACT_PATHS, REDACTED, type Level, type RootLoggerOptions } from "./root"
export { pinoBridge, errorField, layer, live } from "./bridge"
export { objectRef } from "./objectRef"
