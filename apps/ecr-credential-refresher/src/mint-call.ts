/**
 * The refresher's `Ecr` as calls to its mint process (mint-process.ts): each mint is one child process that loads the
 * AWS SDK, calls `ecr:GetAuthorizationToken` and exits, so the refresher never holds the SDK
 * ([ADR](../../../docs/adr/20261204-mint-process.md)). Failures come back as the same `MintError` classes with the
 * same fields (so the same reasons and messages); a child that ends without an answer is a transient
 * `AwsUnavailableError`; a defect it reports is a defect. The child inherits the environment at the call: the SDK's
 * credential chain (Pod Identity, IRSA, `AWS_*`) sees what the refresher's container has then.
 */
import { callInProcess, type CallDecoder } from "@aicr/runtime"
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

type Field = "string" | "string?"
type Tag = MintError["_tag"]

/** Each `MintError` class with its fields, as they cross the process boundary. A new class does not compile until it has a row. */
const MINT_ERRORS: { readonly [K in Tag]: { readonly fields: Readonly<Record<string, Field>>; readonly make: (f: never) => Extract<MintError, { _tag: K }> } } =
  {
    NoAwsIdentityError: { fields: { message: "string" }, make: (f: { message: string }) => new NoAwsIdentityError(f) },
    AccessDeniedError: {
      fields: { action: "string", principal: "string?", message: "string" },
      make: (f: { action: string; principal: string | undefined; message: string }) => new AccessDeniedError(f),
    },
    CredentialsRejectedError: {
      fields: { code: "string", message: "string" },
      make: (f: { code: string; message: string }) => new CredentialsRejectedError(f),
    },
    ThrottledError: { fields: { message: "string" }, make: (f: { message: string }) => new ThrottledError(f) },
    AwsUnavailableError: { fields: { cause: "string", message: "string" }, make: (f: { cause: string; message: string }) => new AwsUnavailableError(f) },
    TokenInvalidError: { fields: { message: "string" }, make: (f: { message: string }) => new TokenInvalidError(f) },
  }

/** The tags a mint process can answer with. */
export const MINT_ERROR_TAGS = Object.keys(MINT_ERRORS) as ReadonlyArray<Tag>

/** A `MintError` as JSON: its `_tag` and its fields. */
export const mintErrorToWire = (e: MintError): Record<string, string | null> => {
  const fields = e as unknown as Record<string, string | undefined>
  return { _tag: e._tag, ...Object.fromEntries(Object.keys(MINT_ERRORS[e._tag].fields).map((k) => [k, fields[k] ?? null])) }
}

/** The `MintError` a wire failure stands for (the same class, the same fields), or undefined if it is none. */
export const mintErrorFromWire = (v: unknown): MintError | undefined => {
  if (typeof v !== "object" || v === null) return undefined
  const w = v as Record<string, unknown>
  const tag = w["_tag"]
  if (typeof tag !== "string" || !Object.hasOwn(MINT_ERRORS, tag)) return undefined
  const row = MINT_ERRORS[tag as Tag]
  const fields: Record<string, string | undefined> = {}
  for (const [k, kind] of Object.entries(row.fields)) {
    const value = w[k]
    if (typeof value === "string") fields[k] = value
    else if (kind === "string?" && (value === null || value === undefined)) fields[k] = undefined
    else return undefined
  }
  return (row.make as (f: Record<string, string | undefined>) => MintError)(fields)
}

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
