/**
 * `@aicr/aicr`: AICR as the operator drives it. Capabilities by version, parsers with schema validation for the
 * snapshot, the recipe and the helm bundle (both layouts), AICR's structured errors mapped to reasons, and the Jobs
 * that run the pinned AICR image with how they ended. See docs/adr/20261202-aicr-jobs.md.
 */
export * from "./capabilities"
export * from "./errors"
export * from "./artifact"
export * from "./recipe"
export * from "./snapshot"
export * from "./bundle"
export * from "./job"
export * from "./outcome"
export * from "./rbac"
export * from "./run"
export * from "./upgrade-check"
export * from "./validate"
export * from "./overrides"
