/**
 * The validation gate's V8 flags, set before the rest of the process loads (main.ts imports this module first): no
 * optimizing compilers, as the step-executor ([ADR](../../../docs/adr/20261204-evidence-process.md),
 * `packages/runtime/src/v8-flags.ts`). `AICR_V8_FLAGS` replaces them.
 */
import { applyV8Flags } from "@aicr/runtime/v8-flags"

applyV8Flags()
