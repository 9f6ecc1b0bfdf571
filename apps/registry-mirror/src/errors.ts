/**
 * The registry-mirror's tagged errors, one class per user-visible cause, and `errorsToOutcome`: the one table that
 * decides each error's class, `Mirrored` reason and requeue (design/style.md §B.5). A new error class does not
 * compile until it has a row here.
 */
import { type ConditionIntent, INTERNAL_ERROR_MESSAGE } from "@aicr/conditions"
import { Mirrored } from "@aicr/api"
import { type ErrorTable, type FailedOutcome, failedOutcome, Requeue } from "@aicr/runtime"
import { Data } from "effect"

/**
 * The runtime registry or an upstream answered 5xx/429 or could not be reached, after the client's retries; or the
 * mirror process (mirror-call.ts) ended without an answer.
 */
export class RegistryUnavailableError extends Data.TaggedError("RegistryUnavailableError")<{
  /** host[:port] that failed (the runtime registry or an upstream), or `the mirror process`. */
  readonly registry: string
  /** Short and stable, for the condition: `ECONNREFUSED`, `HTTP 503`, `digest mismatch`. */
  readonly cause: string
  /** The full story, for the log. */
  readonly message: string
}> {}

/** The runtime registry (or an upstream) refused our credentials or denied the push. */
export class UnauthorizedError extends Data.TaggedError("UnauthorizedError")<{
  readonly registry: string
  readonly message: string
}> {}

/** The configured docker config file cannot be read. */
export class RegistryCredentialsUnavailableError extends Data.TaggedError("RegistryCredentialsUnavailableError")<{
  readonly path: string
  readonly message: string
}> {}

/** A tag already holds other content: the operator never overwrites (spec §4.4). */
export class ConflictError extends Data.TaggedError("ConflictError")<{
  /** host/repository:tag */
  readonly reference: string
  /** What the tag holds now. */
  readonly existing: string
  /** What the mirror would have pushed. */
  readonly wanted: string
  readonly message: string
}> {}

/** A release's chart source cannot be mirrored: no chart and no manifests, Kustomize, an unknown scheme, or missing upstream. */
export class ChartSourceUnsupportedError extends Data.TaggedError("ChartSourceUnsupportedError")<{
  readonly release: string
  readonly message: string
}> {}

/** A chart or the bundle is larger than the mirror (or the registry) accepts. */
export class ContentTooLargeError extends Data.TaggedError("ContentTooLargeError")<{
  readonly what: string
  readonly message: string
}> {}

/** `status.resolution` names a content ConfigMap that is not there (yet). */
export class ResolutionMissingError extends Data.TaggedError("ResolutionMissingError")<{
  readonly configMap: string
  readonly message: string
}> {}

/** The content ConfigMap does not hold what the resolver's contract promises: the operator's own data is broken. */
export class ContentInvalidError extends Data.TaggedError("ContentInvalidError")<{
  readonly configMap: string
  readonly message: string
}> {}

export type MirrorError =
  | RegistryUnavailableError
  | UnauthorizedError
  | RegistryCredentialsUnavailableError
  | ConflictError
  | ChartSourceUnsupportedError
  | ContentTooLargeError
  | ResolutionMissingError
  | ContentInvalidError

export const isMirrorError = (u: unknown): u is MirrorError =>
  u instanceof RegistryUnavailableError ||
  u instanceof UnauthorizedError ||
  u instanceof RegistryCredentialsUnavailableError ||
  u instanceof ConflictError ||
  u instanceof ChartSourceUnsupportedError ||
  u instanceof ContentTooLargeError ||
  u instanceof ResolutionMissingError ||
  u instanceof ContentInvalidError

/** How a failed pass ends: the `Mirrored` intent to report and what happens next. */
export type FailureOutcome = FailedOutcome<ConditionIntent<"Mirrored">, MirrorError>

/** Terminal errors whose cause may go away outside the cluster (credentials fixed, a tag removed): look again. */
export const RECHECK_AFTER = "10 minutes"

const transient = (e: MirrorError, what: string): FailureOutcome =>
  failedOutcome(
    "transient",
    Mirrored.false(
      "Mirroring",
      `${what}: retrying after a transient failure: ${e._tag === "RegistryUnavailableError" ? `${e.registry} is unavailable (${e.cause})` : e.message}`,
    ),
    e,
  )
const terminal = (e: MirrorError, condition: ConditionIntent<"Mirrored">, requeue: Requeue): FailureOutcome => failedOutcome("terminal", condition, e, requeue)

/**
 * The mapping table. `what` names the work in progress (e.g. "Mirroring input 3f2a9c1d0e4b") for transient
 * messages, which keep the in-progress reason and say "retrying after a transient failure" as the docs describe.
 */
export const errorsToOutcome = (what: string) =>
  ({
    RegistryUnavailableError: (e: RegistryUnavailableError) => transient(e, what),
    UnauthorizedError: (e: UnauthorizedError) => terminal(e, Mirrored.false("Unauthorized", e.message), Requeue.after(RECHECK_AFTER)),
    RegistryCredentialsUnavailableError: (e: RegistryCredentialsUnavailableError) =>
      terminal(e, Mirrored.false("RegistryCredentialsUnavailable", e.message), Requeue.after(RECHECK_AFTER)),
    ConflictError: (e: ConflictError) => terminal(e, Mirrored.false("Conflict", e.message), Requeue.after(RECHECK_AFTER)),
    ChartSourceUnsupportedError: (e: ChartSourceUnsupportedError) =>
      terminal(e, Mirrored.false("ChartSourceUnsupported", e.message), Requeue.after(RECHECK_AFTER)),
    ContentTooLargeError: (e: ContentTooLargeError) => terminal(e, Mirrored.false("ContentTooLarge", e.message), Requeue.onChange),
    ResolutionMissingError: (e: ResolutionMissingError) => terminal(e, Mirrored.false("AwaitingResolution", e.message), Requeue.onChange),
    ContentInvalidError: (e: ContentInvalidError) => terminal(e, Mirrored.unknown("InternalError", INTERNAL_ERROR_MESSAGE), Requeue.onChange),
  }) satisfies ErrorTable<MirrorError, FailureOutcome>

/** A defect (a bug, or anything untyped): `InternalError`, detail to the log, driver backoff. */
export const defectOutcome = (cause: unknown): FailureOutcome => failedOutcome("defect", Mirrored.unknown("InternalError", INTERNAL_ERROR_MESSAGE), cause)
