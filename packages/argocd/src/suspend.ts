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
