/**
 * report: pure. Both owned conditions and both status rooms on every pass (server-side apply drops what a write
 * leaves out). An internal failure sets both conditions Unknown/InternalError and keeps the rooms as they were.
 */
import type { ClusterRuntime } from "@aicr/api"
import { Discovered, Resolved } from "@aicr/api"
import { INTERNAL_ERROR_MESSAGE, materialize } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import type { Pass } from "./resolve"

export const report = (runtime: ClusterRuntime, pass: Pass, now: number): StatusWrite => {
  const conditions = materialize([pass.discovered, pass.resolved], { existing: runtime.status?.conditions, generation: runtime.metadata.generation, now })
  return { conditions, discovery: pass.discovery, ...(pass.resolution !== undefined ? { resolution: pass.resolution } : {}) }
}

export const reportInternalError = (runtime: ClusterRuntime, now: number): StatusWrite => {
  const conditions = materialize([Discovered.unknown("InternalError", INTERNAL_ERROR_MESSAGE), Resolved.unknown("InternalError", INTERNAL_ERROR_MESSAGE)], {
    existing: runtime.status?.conditions,
    generation: runtime.metadata.generation,
    now,
  })
  const s = runtime.status
  return { conditions, ...(s?.discovery !== undefined ? { discovery: s.discovery } : {}), ...(s?.resolution !== undefined ? { resolution: s.resolution } : {}) }
}
