/**
 * @aicr/api: the public API of operator.aicr.run/v1alpha1. Resource kinds and rooms, effect Schemas for both CRDs
 * and plan.json, condition catalogs with owners, wire names and digests.
 *
 * Subpaths keep build-time code out of controllers: `@aicr/api/crds` (CRD and catalog generation, needs `yaml`)
 * and `@aicr/api/samples` (documented sample objects for tests).
 */
export * from "./resource"
export * from "./common"
export * from "./meta"
export * from "./clusterruntime"
export * from "./runtimerollout"
export * from "./clusterruntime-conditions"
export * from "./runtimerollout-conditions"
export * from "./names"
export * from "./digest"
export * from "./plan"
export * from "./catalog"
