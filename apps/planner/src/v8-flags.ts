/**
 * The planner's V8 flags, set before the rest of the process loads (main.ts imports this module first): no optimizing
 * compilers, and `--optimize-for-size`, under which every full GC gives V8's pooled pages back to the system. Composing
 * a plan from a recipe's content allocates in bursts, and the pages freed after it otherwise stay resident
 * ([ADR](../../../docs/adr/20261204-resolver-optimize-for-size.md), `packages/runtime/src/v8-flags.ts`).
 * `AICR_V8_FLAGS` replaces them.
 */
import { applyV8Flags, MEMORY_V8_FLAGS } from "@aicr/runtime/v8-flags"

applyV8Flags(MEMORY_V8_FLAGS)
