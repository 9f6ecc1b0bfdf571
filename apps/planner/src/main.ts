/**
 * planner's process entry point.
 *
 * Run: `node planner.js [--operator-namespace aicr-system] [--stabilization-window 10m] [--rollout-deadline 24h]
 *   [--engine-project aicr] [runtime flags]`.
 */
import { main } from "@aicr/runtime"
import { plannerApp } from "./app"

main(plannerApp)
