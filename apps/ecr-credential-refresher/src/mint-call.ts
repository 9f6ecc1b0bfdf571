/**
 * The refresher's `Ecr` as calls to its mint process (mint-process.ts): each mint is one child process that loads the
 * AWS SDK, calls `ecr:GetAuthorizationToken` and exits, so the refresher never holds the SDK
 * ([ADR](../../../docs/adr/20261204-mint-process.md)). Failures come back as the same `MintError` classes with the
 * same fields (so the same reasons and messages); a child that ends without an answer is a transient
 * `AwsUnavailableError`; a defect it reports is a defect. The child inherits the environment at the call: the SDK's
 * credential chain (Pod Identity, IRSA, `AWS_*`) sees what the refresher's container has then.
 */
import { callInProcess, type CallDecoder, type TaggedErrorClasses, taggedErrorFromWire, taggedErrorToWire } from "@aicr/runtime"
import type { EcrShape, Token } from "./act"
import {
  AccessDeniedError,
  AwsUnavailableError,
  CredentialsRejectedError,
  type MintError,
  NoAwsIdentityError,
  ThrottledError,
  TokenInvalidError,
} from "./errors"
import type { EcrRegistry } from "./registry"

/** One request to the mint process. */
export interface MintCall {
  readonly userAgent: string
  readonly registry: EcrRegistry
}

/** Each `MintError` class by its tag: what the caller rebuilds a failure as. A new class does not compile until it has an entry. */
const MINT_ERRORS: TaggedErrorClasses<MintError> = {
  NoAwsIdentityError,
  AccessDeniedError,
  CredentialsRejectedError,
  ThrottledError,
  AwsUnavailableError,
  TokenInvalidError,
}
/** The fields besides `message` each must carry (an `AccessDeniedError`'s `principal` may be absent). */
const REQUIRED = { AccessDeniedError: ["action"], CredentialsRejectedError: ["code"], AwsUnavailableError: ["cause"] } as const

/** The tags a mint process can answer with. */
export const MINT_ERROR_TAGS = Object.keys(MINT_ERRORS) as ReadonlyArray<MintError["_tag"]>

/** A `MintError` as JSON (its tag and fields), and back as the same class; undefined: none of them (a defect). */
export const mintErrorToWire = taggedErrorToWire
export const mintErrorFromWire = taggedErrorFromWire(MINT_ERRORS, REQUIRED)

const isToken = (v: unknown): v is Token => {
  const t = v as Partial<Token> | null
  return typeof t === "object" && t !== null && typeof t.username === "string" && typeof t.password === "string" && Number.isFinite(t.expiresAt)
}

const mint: CallDecoder<Token, MintError> = {
  what: "the mint process",
  ok: isToken,
  failed: mintErrorFromWire,
  // A child that ended without an answer (it could not start, or was killed: OOM, a node under pressure) is retried;
  // the condition says only that, the error's message (logged) has its exit and stderr.
  lost: (e) => new AwsUnavailableError({ cause: "the mint process ended without an answer", message: e.message }),
}

/** The `Ecr` service, each mint in its own process started from `entry` (the bundle's `mint-process.mjs`). */
export const processEcr = (entry: string, userAgent: string): EcrShape => ({
  mint: (registry) =>
    callInProcess(
      entry,
      {
        userAgent,
        registry: { host: registry.host, accountId: registry.accountId, region: registry.region, partition: registry.partition },
      } satisfies MintCall,
      mint,
    ),
})
