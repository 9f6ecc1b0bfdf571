/**
 * The resolver's tagged errors, one class per user-visible cause, and `errorsToOutcome`: the one table that decides
 * each error's class (transient: the driver retries; terminal: reported, the resolver waits for a change), its
 * reasons and which conditions it sets (design/style.md §B.5). A new error class does not compile until it has a row
 * here. A defect (a bug, anything untyped) is `InternalError` on both conditions, the detail in the log.
 *
 * Where an error stops the pass decides `Discovered`: a discovery error (the node groups, the version gate, the
 * snapshot) sets both conditions False with its reason; a resolution error leaves `Discovered` True.
 */
import type { AicrJobReason } from "@aicr/aicr"
import { Discovered, Resolved } from "@aicr/api"
import { type ConditionIntent, INTERNAL_ERROR_MESSAGE } from "@aicr/conditions"
import { type ErrorTable, type FailureClass, outcomeOf } from "@aicr/runtime"
import { Data } from "effect"

type ResolvedReason = Parameters<typeof Resolved.false>[0]
type DiscoveredReason = Parameters<typeof Discovered.false>[0]

/** The node groups or the snapshot do not allow a resolution (operator.md §4.2). */
export class DiscoveryFailedError extends Data.TaggedError("DiscoveryFailedError")<{
  readonly reason: "NodeGroupEmpty" | "PlacementOverlap" | "AcceleratedGroupHeterogeneous" | "SnapshotIncomplete" | "CriteriaConflict"
  readonly message: string
}> {}

/** The pinned AICR does not pass the version gate (operator.md §4.3 step 3): no AICR Job runs. */
export class VersionGateError extends Data.TaggedError("VersionGateError")<{ readonly message: string }> {}

/** An AICR Job failed; `transient` when AICR says a retry may succeed. The message names the Job and AICR's cause. */
export class AicrJobFailedError extends Data.TaggedError("AicrJobFailedError")<{
  readonly job: "Snapshot" | "Recipe" | "Bundle"
  readonly reason: AicrJobReason
  readonly transient: boolean
  readonly message: string
}> {}

/** An AICR output does not parse, breaks its schema or records another AICR version than the pinned one. */
export class ArtifactInvalidError extends Data.TaggedError("ArtifactInvalidError")<{
  readonly stage: "discovery" | "resolution"
  readonly reason: "AICRArtifactUnsupported" | "AICRVersionMismatch"
  readonly message: string
}> {}

/** The spec asks for something the pinned AICR refuses or did not apply: the user's to fix. */
export class InvalidRequestError extends Data.TaggedError("InvalidRequestError")<{
  readonly reason: "AICRInvalidRequest" | "InvalidPlacement" | "InvalidOverride" | "OverridePathUnknown"
  readonly message: string
}> {}

/** The plan renders releases outside `--component-namespaces`. */
export class NamespaceNotAllowedError extends Data.TaggedError("NamespaceNotAllowedError")<{ readonly message: string }> {}

/** Recipe, values, flags and snapshot would not fit one ConfigMap. */
export class ContentTooLargeError extends Data.TaggedError("ContentTooLargeError")<{ readonly message: string }> {}

/** The docker config a bundle Job gets cannot be read. */
export class RegistryCredentialsUnavailableError extends Data.TaggedError("RegistryCredentialsUnavailableError")<{ readonly message: string }> {}

/** The pushed bundle cannot be read back: registry down (transient), refused, or not a bundle. */
export class BundleUnreadableError extends Data.TaggedError("BundleUnreadableError")<{
  readonly kind: "transient" | "unauthorized" | "invalid"
  /** `host/repository@sha256:…` */
  readonly digest: string
  readonly message: string
}> {}

export type ResolverError =
  | DiscoveryFailedError
  | VersionGateError
  | AicrJobFailedError
  | ArtifactInvalidError
  | InvalidRequestError
  | NamespaceNotAllowedError
  | ContentTooLargeError
  | RegistryCredentialsUnavailableError
  | BundleUnreadableError

/** How a failed pass ends: the conditions to report, and whether the driver retries. */
export interface FailureOutcome {
  readonly _tag: "Failed"
  readonly class: FailureClass
  /** Set when the failure is discovery's (the same reason on both conditions); absent, `Discovered` stays True. */
  readonly discovered?: ConditionIntent<"Discovered"> | undefined
  readonly resolved: ConditionIntent<"Resolved">
  /** Transient: what the driver's retry is for (the reconcile fails after writing status). */
  readonly retry?: string | undefined
  readonly error: ResolverError | unknown
}

const terminal = (reason: ResolvedReason, message: string, error: ResolverError): FailureOutcome => ({
  _tag: "Failed",
  class: "terminal",
  resolved: Resolved.false(reason, message),
  error,
})
const discoveryTerminal = (reason: DiscoveredReason & ResolvedReason, message: string, error: ResolverError): FailureOutcome => ({
  ...terminal(reason, message, error),
  discovered: Discovered.false(reason, message),
})
/** A retried resolution step: `Resolving` says what is retried; the driver backs off. */
const resolving = (what: string, cause: string, retry: string, error: ResolverError): FailureOutcome => ({
  _tag: "Failed",
  class: "transient",
  resolved: Resolved.false("Resolving", `${what}: retrying after a transient failure: ${cause}`),
  retry,
  error,
})

/**
 * The mapping table. `what` names the resolution in progress ("Resolving input 3f2a9c1d0e4b") for transient messages,
 * which keep the in-progress reason and say "retrying after a transient failure".
 */
export const errorsToOutcome = (what: string) =>
  ({
    DiscoveryFailedError: (e: DiscoveryFailedError) => discoveryTerminal(e.reason, e.message, e),
    VersionGateError: (e: VersionGateError) => discoveryTerminal("AICRVersionMismatch", e.message, e),
    AicrJobFailedError: (e: AicrJobFailedError): FailureOutcome => {
      if (e.job === "Snapshot") {
        // The snapshot's own reason on both conditions; a transient one is retried by the driver.
        const outcome = discoveryTerminal(e.reason, e.message, e)
        return e.transient ? { ...outcome, class: "transient", retry: e.message } : outcome
      }
      if (e.transient) return resolving(what, e.message, e.message, e)
      // A bundle Job refused by the registry is the registry's refusal (`Unauthorized`), as a pull would be.
      return terminal(e.job === "Bundle" && e.reason === "AICRUnauthorized" ? "Unauthorized" : e.reason, e.message, e)
    },
    ArtifactInvalidError: (e: ArtifactInvalidError) => (e.stage === "discovery" ? discoveryTerminal : terminal)(e.reason, e.message, e),
    InvalidRequestError: (e: InvalidRequestError) => terminal(e.reason, e.message, e),
    NamespaceNotAllowedError: (e: NamespaceNotAllowedError) => terminal("NamespaceNotAllowed", e.message, e),
    ContentTooLargeError: (e: ContentTooLargeError) => terminal("ContentTooLarge", e.message, e),
    RegistryCredentialsUnavailableError: (e: RegistryCredentialsUnavailableError) => terminal("RegistryCredentialsUnavailable", e.message, e),
    BundleUnreadableError: (e: BundleUnreadableError) =>
      e.kind === "transient"
        ? resolving(what, `[SERVICE_UNAVAILABLE] ${e.message}`, e.message, e)
        : terminal(e.kind === "unauthorized" ? "Unauthorized" : "AICRArtifactUnsupported", `The bundle ${e.digest} cannot be read back: ${e.message}`, e),
  }) satisfies ErrorTable<ResolverError, FailureOutcome>

export const toOutcome = (e: ResolverError, what: string): FailureOutcome => outcomeOf<ResolverError, FailureOutcome>(errorsToOutcome(what), e)

/** A defect (a bug, or anything untyped): `InternalError` on both conditions, the rooms kept, the detail in the log. */
export const defectOutcome = (cause: unknown): FailureOutcome => ({
  _tag: "Failed",
  class: "defect",
  discovered: Discovered.unknown("InternalError", INTERNAL_ERROR_MESSAGE),
  resolved: Resolved.unknown("InternalError", INTERNAL_ERROR_MESSAGE),
  error: cause,
})
