/**
 * The step-executor's V8 flags, set before the rest of the process loads (main.ts imports this module first): no
 * optimizing compilers, 7.6 MiB of RSS less after an install ([ADR](../../../docs/adr/20261203-step-executor-node-flags.md),
 * `packages/runtime/src/v8-flags.ts`). `AICR_V8_FLAGS` replaces them.
 */
import { applyV8Flags } from "@aicr/runtime/v8-flags"

applyV8Flags()
