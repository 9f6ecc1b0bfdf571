/**
 * The AWS side, loaded only with `aws`: in the mint process (mint-process.ts) as shipped, one process per mint, or
 * from sources by a dynamic `import()` from `act.ts` (so a `static` refresher never loads the SDK):
 * `GetAuthorizationToken` through `@aws-sdk/client-ecr` with the SDK's default credential chain, which covers EKS Pod
 * Identity (`AWS_CONTAINER_CREDENTIALS_FULL_URI` + `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`) and IRSA (`AWS_ROLE_ARN` +
 * `AWS_WEB_IDENTITY_TOKEN_FILE`) with no code of ours. SDK errors become the refresher's tagged
 * errors; a token never leaves this module except as the `Token` value.
 */
import { ECRClient, GetAuthorizationTokenCommand } from "@aws-sdk/client-ecr"
import { Effect } from "effect"
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

export const GET_AUTHORIZATION_TOKEN = "ecr:GetAuthorizationToken"

const REJECTED = new Set([
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "ExpiredTokenException",
  "InvalidClientTokenId",
  "SignatureDoesNotMatch",
  "InvalidIdentityToken",
  "IDPRejectedClaim",
  "ExpiredToken",
  "InvalidIdentityTokenException",
  "IDPCommunicationError",
])
const THROTTLED = new Set([
  "ThrottlingException",
  "ThrottledException",
  "TooManyRequestsException",
  "RequestLimitExceeded",
  "Throttling",
  "LimitExceededException",
])
const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"])

interface SdkError {
  readonly name?: string
  readonly message?: string
  readonly code?: string
  readonly $metadata?: { readonly httpStatusCode?: number }
}

/** An SDK failure as a tagged error; `undefined` for anything unexpected (a defect). */
export const classify = (e: unknown): MintError | undefined => {
  const err = (typeof e === "object" && e !== null ? e : {}) as SdkError
  const name = err.name ?? ""
  const message = (err.message ?? String(e)).split("\n")[0]!.slice(0, 300)
  if (name === "CredentialsProviderError") return new NoAwsIdentityError({ message })
  if (name === "AccessDeniedException" || name === "AccessDenied") {
    const action =
      /perform: ([a-z0-9-]+:[A-Za-z0-9]+)/u.exec(message)?.[1] ?? (name === "AccessDenied" ? "sts:AssumeRoleWithWebIdentity" : GET_AUTHORIZATION_TOKEN)
    const principal = /User: (\S+) is not authorized/u.exec(message)?.[1]
    return new AccessDeniedError({ action, principal, message })
  }
  if (REJECTED.has(name)) return new CredentialsRejectedError({ code: name, message })
  if (THROTTLED.has(name)) return new ThrottledError({ message })
  const status = err.$metadata?.httpStatusCode
  const code = err.code ?? (NETWORK.has(name) ? name : undefined)
  if (code !== undefined && NETWORK.has(code)) return new AwsUnavailableError({ cause: code, message })
  if (name === "TimeoutError" || name === "RequestTimeout") return new AwsUnavailableError({ cause: "timeout", message })
  if (status !== undefined && status >= 500) return new AwsUnavailableError({ cause: `HTTP ${status}`, message })
  if (status === 429) return new ThrottledError({ message })
  return undefined
}

/** `base64("AWS:<password>")` and the expiry, as a `Token`. */
export const parseAuthorization = (data: { authorizationToken?: string | undefined; expiresAt?: Date | undefined } | undefined): Token | TokenInvalidError => {
  const decoded = data?.authorizationToken === undefined ? "" : Buffer.from(data.authorizationToken, "base64").toString("utf8")
  const i = decoded.indexOf(":")
  if (i <= 0 || i === decoded.length - 1)
    return new TokenInvalidError({ message: "ECR returned no usable authorization token (expected base64 of user:password); retried later" })
  const expiresAt = data?.expiresAt?.getTime()
  if (expiresAt === undefined || !Number.isFinite(expiresAt))
    return new TokenInvalidError({ message: "ECR returned an authorization token without an expiry; retried later" })
  return { username: decoded.slice(0, i), password: decoded.slice(i + 1), expiresAt }
}

/**
 * One client per mint, destroyed after it: a mint happens every few hours, and an idle refresher then holds no
 * client, connection pool or cached identity (less idle memory; credentials are read fresh each time, as a rotated
 * IRSA token or Pod Identity session would be anyway).
 */
export const openEcr = (userAgent: string): { readonly ecr: EcrShape; readonly close: () => void } => {
  const send = async (region: string, signal: AbortSignal) => {
    const client = new ECRClient({ region, customUserAgent: userAgent, requestHandler: { connectionTimeout: 5_000, requestTimeout: 15_000 } })
    try {
      return await client.send(new GetAuthorizationTokenCommand({}), { abortSignal: signal })
    } finally {
      client.destroy()
    }
  }
  const mint = (registry: EcrRegistry): Effect.Effect<Token, MintError> =>
    Effect.tryPromise({ try: (signal) => send(registry.region, signal), catch: (e) => e }).pipe(
      Effect.catch((e: unknown) => {
        const tagged = classify(e)
        return tagged === undefined ? Effect.die(e) : Effect.fail(tagged)
      }),
      Effect.flatMap((out) => {
        const token = parseAuthorization(out.authorizationData?.[0])
        return token instanceof TokenInvalidError ? Effect.fail(token) : Effect.succeed(token)
      }),
    )
  return { ecr: { mint }, close: () => undefined }
}
