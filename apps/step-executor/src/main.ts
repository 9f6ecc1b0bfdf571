/**
 * step-executor's process entry point.
 *
 * Run: `node step-executor.js [--operator-namespace aicr-system] [--engine-namespace argocd] [--engine-project aicr]
 *   [--step-timeout 15m] [--release-step-timeout NAME=DURATION]… [runtime flags]`.
 */
// First: its V8 flags (no optimizing compilers) before anything else loads. AICR_V8_FLAGS replaces them.
import "./v8-flags"
import { main } from "@aicr/runtime"
import { stepExecutorApp } from "./app"

main(stepExecutorApp)
