/**
 * V8 flags a controller sets in itself before the rest of it loads (its `main.ts` imports its own `v8-flags.ts` first,
 * which calls `applyV8Flags`): by default no optimizing compilers (TurboFan, Maglev). A controller's passes are short
 * (a few hundred objects from caches), so the interpreter and Sparkplug serve them, and the node binary's
 * optimizing-compiler code is never paged in ([ADR](../../../docs/adr/20261203-step-executor-node-flags.md)). A
 * controller may pass its own defaults (the resolver adds `--optimize-for-size`,
 * [ADR](../../../docs/adr/20261204-resolver-optimize-for-size.md)). Node refuses these flags in
 * NODE_OPTIONS, and the image starts every controller through one entry point, so they are set here. Imports nothing
 * but `node:v8`, so nothing else is evaluated before the flags are set.
 *
 * `AICR_V8_FLAGS` replaces them (space-separated V8 flags; empty: none), e.g. to measure a controller without them.
 */
import { setFlagsFromString } from "node:v8"

export const DEFAULT_V8_FLAGS: ReadonlyArray<string> = ["--no-opt", "--no-maglev"]

/**
 * The defaults and `--optimize-for-size`, for a controller whose work allocates in bursts (a list of thousands of
 * Nodes, a plan composed from a recipe): every full GC then gives the pages V8 freed back to the system instead of
 * pooling them ([ADR](../../../docs/adr/20261204-resolver-optimize-for-size.md)).
 */
export const MEMORY_V8_FLAGS: ReadonlyArray<string> = ["--optimize-for-size", ...DEFAULT_V8_FLAGS]

/** The flags to set for an `AICR_V8_FLAGS` value (undefined: the controller's defaults). */
export const v8FlagsOf = (env: string | undefined, defaults: ReadonlyArray<string> = DEFAULT_V8_FLAGS): ReadonlyArray<string> =>
  env === undefined ? defaults : env.split(/\s+/u).filter(Boolean)

/** Sets the flags `AICR_V8_FLAGS` names, or the controller's defaults. */
export const applyV8Flags = (defaults: ReadonlyArray<string> = DEFAULT_V8_FLAGS): void => {
  for (const flag of v8FlagsOf(process.env["AICR_V8_FLAGS"], defaults)) setFlagsFromString(flag)
}
