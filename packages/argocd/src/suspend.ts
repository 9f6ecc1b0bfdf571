/**
 * suspendEngine on Argo CD v3: `spec.syncPolicy.automated.enabled: false` stops syncing and self-heal and keeps every
 * other policy field (operator.md §4.13); removing it turns automation back on, and Argo CD repairs the drift.
 */
import type { Application } from "./application"

/** Argo CD's `IsAutomatedSyncEnabled`: automated is set and `enabled` is absent or true. */
export const automatedSyncEnabled = (app: Application): boolean => {
  const automated = app.spec?.syncPolicy?.automated
  return automated !== undefined && automated.enabled !== false
}

/** Suspended by the operator: automated is set and `enabled` is false. */
export const suspended = (app: Application): boolean => app.spec?.syncPolicy?.automated?.enabled === false

/** The JSON merge patch that suspends (true) or resumes (false) one Application; nothing else changes. */
export const suspensionPatch = (suspend: boolean) => ({ spec: { syncPolicy: { automated: { enabled: suspend ? false : null } } } })

/**
 * Why a suspension does not hold on this Application yet, or undefined when nothing stands in its way: Argo CD
 * finishes a sync operation that is requested or running even after `automated.enabled: false` (it only stops
 * starting new ones), so while one is in flight the Application is still being changed.
 */
export const suspensionBlockedBy = (app: Application): string | undefined => {
  const op = app.status?.operationState
  const running = op?.phase === "Running" || op?.phase === "Terminating"
  if (app.operation === undefined && !running) return undefined
  const revision = op?.operation?.sync?.revision ?? op?.syncResult?.revision
  const what = running
    ? `a sync operation is ${op!.phase === "Running" ? "running" : "terminating"}${revision ? ` at ${revision}` : ""}${op!.message ? ` (${op!.message})` : ""}`
    : "a sync operation is requested"
  return `${what}; Argo CD finishes it before automated sync stays off`
}
