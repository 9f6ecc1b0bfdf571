/**
 * planner's process entry point.
 *
 * Run: `node planner.js [--operator-namespace aicr-system] [--stabilization-window 10m] [--rollout-deadline 24h]
 *   [--engine-project aicr] [runtime flags]`.
 */
// First: its V8 flags (memory over speed, no optimizing compilers) before anything else loads. AICR_V8_FLAGS replaces them.
import "./v8-flags"
import { main } from "@aicr/runtime"
import { plannerApp } from "./app"

main(plannerApp)
