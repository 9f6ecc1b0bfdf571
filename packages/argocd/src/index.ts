/**
 * @aicr/argocd — Argo CD Applications as the operator writes and reads them: the Application shape and its markers,
 * readiness at the revision just written, sync failures, and suspension (ADR 20261202-step-executor).
 */
export * from "./application"
export * from "./ready"
export * from "./record"
export * from "./suspend"
