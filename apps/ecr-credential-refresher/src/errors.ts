/**
 * The refresher's tagged errors, one class per user-visible cause, and `errorsToOutcome`: the one table that decides
 * each error's class, `RegistryCredentialsReady` reason and requeue (design/style.md §B.5). A new error class does
 * not compile until it has a row here.
 */
import { RegistryCredentialsReady } from "@aicr/api"
import { type ConditionIntent, INTERNAL_ERROR_MESSAGE } from "@aicr/conditions"
import { type ErrorTable, type FailedOutcome, failedOutcome, outcomeOf, Requeue } from "@aicr/runtime"
import { Data } from "effect"

/** The SDK's credential chain found no AWS identity (no Pod Identity, no IRSA token, no keys). */
export class NoAwsIdentityError extends Data.TaggedError("NoAwsIdentityError")<{ readonly message: string }> {}

/** IAM denied an action; `action` is the IAM action named in the denial (e.g. `ecr:GetAuthorizationToken`). */
export class AccessDeniedError extends Data.TaggedError("AccessDeniedError")<{
  readonly action: string
  readonly principal: string | undefined
  readonly message: string
}> {}

/** AWS rejected the credentials themselves: unknown key, bad signature, expired session. */
export class CredentialsRejectedError extends Data.TaggedError("CredentialsRejectedError")<{ readonly code: string; readonly message: string }> {}

/** AWS throttled the token request (after the SDK's own retries). */
export class ThrottledError extends Data.TaggedError("ThrottledError")<{ readonly message: string }> {}

/** ECR or STS could not be reached or answered 5xx (after the SDK's own retries). */
export class AwsUnavailableError extends Data.TaggedError("AwsUnavailableError")<{ readonly cause: string; readonly message: string }> {}

/** ECR answered with a token this refresher cannot use (malformed, or already expired: check the node's clock). */
export class TokenInvalidError extends Data.TaggedError("TokenInvalidError")<{ readonly message: string }> {}

/** `aws` with a registry that is not a private ECR registry. */
export class RegistryUnsupportedError extends Data.TaggedError("RegistryUnsupportedError")<{ readonly host: string; readonly message: string }> {}

/** `static`: the admin's docker-config Secret is missing or does not hold a login for the registry. */
export class StaticCredentialsError extends Data.TaggedError("StaticCredentialsError")<{ readonly secret: string; readonly message: string }> {}

/** The API server refused a Secret write (RBAC): the chart's Role for the refresher is wrong. */
export class SecretWriteForbiddenError extends Data.TaggedError("SecretWriteForbiddenError")<{ readonly secret: string; readonly message: string }> {}

/** The API server refused a Secret write as invalid or owned by another manager (e.g. a hand-made Secret of another type). */
export class SecretWriteRefusedError extends Data.TaggedError("SecretWriteRefusedError")<{
  readonly secret: string
  readonly cause: string
  readonly message: string
}> {}

export type RefreshError =
  | NoAwsIdentityError
  | AccessDeniedError
  | CredentialsRejectedError
  | ThrottledError
  | AwsUnavailableError
  | TokenInvalidError
  | RegistryUnsupportedError
  | StaticCredentialsError
  | SecretWriteForbiddenError
  | SecretWriteRefusedError

/** The errors `Ecr.mint` fails with. */
export type MintError = NoAwsIdentityError | AccessDeniedError | CredentialsRejectedError | ThrottledError | AwsUnavailableError | TokenInvalidError

/** How a failed pass ends: the condition to report and what happens next. */
export type FailureOutcome = FailedOutcome<ConditionIntent<"RegistryCredentialsReady">, RefreshError>

/** Terminal AWS failures are fixed outside the cluster (IAM, Pod Identity associations): look again this often. */
export const RECHECK_AFTER_MS = 5 * 60_000

const RETRYING = "retrying after a transient failure"
const terminal = (
  e: RefreshError,
  condition: ConditionIntent<"RegistryCredentialsReady">,
  requeue: Requeue = Requeue.after(RECHECK_AFTER_MS),
): FailureOutcome => failedOutcome("terminal", condition, e, requeue)
const transient = (e: RefreshError, condition: ConditionIntent<"RegistryCredentialsReady">): FailureOutcome => failedOutcome("transient", condition, e)

const R = RegistryCredentialsReady
export const errorsToOutcome = {
  NoAwsIdentityError: (e: NoAwsIdentityError) =>
    terminal(
      e,
      R.false(
        "RegistryCredentialsUnavailable",
        `No AWS identity: the SDK's credential chain found none (${e.message}); associate an EKS Pod Identity with the operator's ServiceAccount, or set operator.serviceAccountAnnotations eks.amazonaws.com/role-arn for IRSA`,
      ),
    ),
  AccessDeniedError: (e: AccessDeniedError) =>
    terminal(
      e,
      R.false(
        "Unauthorized",
        `AWS denied ${e.action}${e.principal === undefined ? "" : ` to ${e.principal}`}: attach the chart's files/ecr-iam-policy.json (it allows ${e.action}) to the operator's IAM role`,
      ),
    ),
  CredentialsRejectedError: (e: CredentialsRejectedError) =>
    terminal(
      e,
      R.false("Unauthorized", `AWS rejected the operator's credentials (${e.code}): check the Pod Identity association or the IRSA role and its trust policy`),
    ),
  ThrottledError: (e: ThrottledError) => transient(e, R.false("Throttled", `AWS throttled ecr:GetAuthorizationToken: ${RETRYING}`)),
  AwsUnavailableError: (e: AwsUnavailableError) => transient(e, R.false("RegistryCredentialsUnavailable", `Minting an ECR token: ${RETRYING}: ${e.cause}`)),
  TokenInvalidError: (e: TokenInvalidError) => terminal(e, R.false("RegistryCredentialsUnavailable", e.message)),
  RegistryUnsupportedError: (e: RegistryUnsupportedError) => terminal(e, R.false("RegistryUnsupported", e.message), Requeue.never),
  StaticCredentialsError: (e: StaticCredentialsError) => terminal(e, R.false("RegistryCredentialsUnavailable", e.message), Requeue.onChange),
  SecretWriteForbiddenError: (e: SecretWriteForbiddenError) =>
    terminal(e, R.false("Unauthorized", `The API server refused to write Secret ${e.secret}: grant the refresher get and patch on it by name (and create)`)),
  SecretWriteRefusedError: (e: SecretWriteRefusedError) =>
    terminal(
      e,
      R.false(
        "RegistryCredentialsUnavailable",
        `Secret ${e.secret} cannot be written (${e.cause}): it exists with another type, or another manager owns its fields; delete it and the refresher writes it anew`,
      ),
    ),
} satisfies ErrorTable<RefreshError, FailureOutcome>

export const toOutcome = (e: RefreshError): FailureOutcome => outcomeOf<RefreshError, FailureOutcome>(errorsToOutcome, e)

/** A defect (a bug, or anything untyped): `InternalError`, detail to the log, driver backoff. */
export const defectOutcome = (cause: unknown): FailureOutcome => failedOutcome("defect", R.unknown("InternalError", INTERNAL_ERROR_MESSAGE), cause)
