/**
 * The step-executor's V8 flags, set before the rest of the process loads (main.ts imports this module first): no
 * optimizing compilers (TurboFan, Maglev). Its passes are short (a few hundred objects from caches), so the
 * interpreter and Sparkplug serve them, and the node binary's optimizing-compiler code is never paged in: 7.6 MiB of
 * RSS less after an install ([ADR](../../../docs/adr/20261203-step-executor-node-flags.md)). Node refuses these flags in
 * NODE_OPTIONS, and the image starts every controller through one entry point, so they are set here.
 *
 * `AICR_V8_FLAGS` replaces them (space-separated V8 flags; empty: none), e.g. to measure the executor without them.
 */
import { setFlagsFromString } from "node:v8"

export const DEFAULT_V8_FLAGS: ReadonlyArray<string> = ["--no-opt", "--no-maglev"]

/** The flags to set for an `AICR_V8_FLAGS` value (undefined: the defaults). */
export const v8FlagsOf = (env: string | undefined): ReadonlyArray<string> => (env === undefined ? DEFAULT_V8_FLAGS : env.split(/\s+/u).filter(Boolean))

for (const flag of v8FlagsOf(process.env["AICR_V8_FLAGS"])) setFlagsFromString(flag)
