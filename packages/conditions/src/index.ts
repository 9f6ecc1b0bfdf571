/**
 * @aicr/conditions: the wire `Condition`, typed condition definitions, materialize/compare, and current-only reads.
 * Pure: no Kubernetes client, no I/O.
 */
export * from "./condition"
export * from "./def"
export * from "./materialize"
export * from "./message"
export * from "./read"
