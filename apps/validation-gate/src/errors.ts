/**
 * The gate's tagged errors. Only the evidence push can fail outside a verdict: the registry unavailable (transient:
 * `Validated` keeps `Validating` with "retrying after a transient failure" and the driver's backoff retries), or
 * refused (credentials, a tag holding other evidence: `Validated=Unknown/InternalError`-free, reported as
 * `Validating` with the cause until fixed, rechecked every 10 minutes). Nothing here ever turns into a pass.
 */
import { Data } from "effect"

export class EvidenceError extends Data.TaggedError("EvidenceError")<{
  readonly transient: boolean
  /**
   * Short and stable: `RegistryUnavailable`, `Unauthorized`, `RegistryCredentialsUnavailable`, `Conflict`,
   * `RegistryRefused`, `SigningFailed`, `EvidenceProcessFailed` (the evidence process ended without an answer).
   */
  readonly reason: string
  readonly message: string
}> {}

/** Terminal errors whose cause may go away outside the cluster (credentials fixed, a key allowed): look again. */
export const RECHECK_AFTER = "10 minutes"
