import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit } from "effect"
import { standInProcess, standInRequest } from "@aicr/testing/harness"
import { afterEach, describe, expect, it } from "vitest"
import {
  AccessDeniedError,
  AwsUnavailableError,
  CredentialsRejectedError,
  type MintError,
  NoAwsIdentityError,
  ThrottledError,
  toOutcome,
  TokenInvalidError,
} from "./errors"
import { MINT_ERROR_TAGS, mintErrorFromWire, mintErrorToWire, processEcr } from "./mint-call"
import type { EcrRegistry } from "./registry"

const dir = mkdtempSync(join(tmpdir(), "aicr-mint-call-"))
const child = (name: string, answer: string): string => standInProcess(dir, name, answer)
const REGISTRY: EcrRegistry = { host: "123456789012.dkr.ecr.us-east-1.amazonaws.com", accountId: "123456789012", region: "us-east-1", partition: "aws" }
const PASSWORD = "eyJwYXlsb2FkIjoic2VjcmV0LXRva2VuIn0"
const squashed = <A>(exit: Exit.Exit<A, MintError>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)
afterEach(() => {
  delete process.env["AICR_MINT_CALL_TEST"]
})

/** One of each MintError, with every field set as the SDK's errors set them. A new tag does not compile until it has a row. */
const EVERY: { readonly [K in MintError["_tag"]]: ReadonlyArray<Extract<MintError, { _tag: K }>> } = {
  NoAwsIdentityError: [new NoAwsIdentityError({ message: "Could not load credentials from any providers" })],
  AccessDeniedError: [
    new AccessDeniedError({
      action: "ecr:GetAuthorizationToken",
      principal: "arn:aws:iam::123456789012:user/noperm",
      message: "User: arn:aws:iam::123456789012:user/noperm is not authorized to perform: ecr:GetAuthorizationToken",
    }),
    new AccessDeniedError({
      action: "sts:AssumeRoleWithWebIdentity",
      principal: undefined,
      message: "Not authorized to perform sts:AssumeRoleWithWebIdentity",
    }),
  ],
  CredentialsRejectedError: [
    new CredentialsRejectedError({ code: "UnrecognizedClientException", message: "The security token included in the request is invalid." }),
  ],
  ThrottledError: [new ThrottledError({ message: "Rate exceeded" })],
  AwsUnavailableError: [new AwsUnavailableError({ cause: "HTTP 503", message: "Service Unavailable" })],
  TokenInvalidError: [new TokenInvalidError({ message: "ECR returned an authorization token without an expiry; retried later" })],
}
const cases = Object.values(EVERY).flat() as MintError[]

describe("MintError across the process boundary", () => {
  it("the table covers every tag the decoder knows", () => {
    expect(Object.keys(EVERY).sort()).toEqual([...MINT_ERROR_TAGS].sort())
  })

  it.each(cases.map((e) => ({ name: `${e._tag}${e._tag === "AccessDeniedError" && e.principal === undefined ? " (no principal)" : ""}`, e })))(
    "$name comes back as the same class with the same fields, so the same condition, class and requeue",
    ({ e }) => {
      const back = mintErrorFromWire(JSON.parse(JSON.stringify(mintErrorToWire(e))))
      expect(back).toBeInstanceOf(e.constructor)
      expect(back).toEqual(e)
      expect({ ...back }).toEqual({ ...e })
      expect(back?.message).toBe(e.message)
      const { error: _a, ...was } = toOutcome(e)
      const { error: _b, ...is } = toOutcome(back!)
      expect(is).toEqual(was)
    },
  )

  it.each([
    { name: "an unknown tag", wire: { _tag: "SomethingElseError", message: "x" } },
    { name: "a missing field", wire: { _tag: "CredentialsRejectedError", message: "x" } },
    { name: "a field of the wrong type", wire: { _tag: "AwsUnavailableError", cause: 503, message: "x" } },
    { name: "not an object", wire: "AwsUnavailableError" },
    { name: "a tag from Object's prototype", wire: { _tag: "toString", message: "x" } },
  ])("$name is no MintError (a defect for the caller)", ({ wire }) => {
    expect(mintErrorFromWire(wire)).toBeUndefined()
  })
})

describe("the Ecr service as calls to the mint process", () => {
  it("a mint goes over with the registry and user agent; the child's answer is the token", async () => {
    const entry = child("mint", `{ ok: { username: "AWS", password: ${JSON.stringify(PASSWORD)}, expiresAt: 1893456000000 } }`)
    const exit = await Effect.runPromiseExit(processEcr(entry, "aicr-operator").mint(REGISTRY))
    expect(exit).toEqual(Exit.succeed({ username: "AWS", password: PASSWORD, expiresAt: 1893456000000 }))
    expect(standInRequest(dir, "mint")).toEqual({ userAgent: "aicr-operator", registry: REGISTRY })
  })

  it("a failure the child knows comes back as the same MintError", async () => {
    const denied = EVERY.AccessDeniedError[0]!
    const entry = child("denied", `{ failed: ${JSON.stringify(mintErrorToWire(denied))} }`)
    const exit = await Effect.runPromiseExit(processEcr(entry, "ua").mint(REGISTRY))
    expect(exit).toEqual(Exit.fail(denied))
  })

  it("the child sees the environment as it is at the call (credentials set or rotated after the refresher started)", async () => {
    const entry = child("env", `{ ok: { username: process.env.AICR_MINT_CALL_TEST ?? "unset", password: "p", expiresAt: 1 } }`)
    const ecr = processEcr(entry, "ua")
    expect(await Effect.runPromise(ecr.mint(REGISTRY))).toMatchObject({ username: "unset" })
    process.env["AICR_MINT_CALL_TEST"] = "rotated"
    expect(await Effect.runPromise(ecr.mint(REGISTRY))).toMatchObject({ username: "rotated" })
  })

  it("a child that ends without an answer is a transient AwsUnavailableError: a short cause, its exit and stderr in the message", async () => {
    const exit = await Effect.runPromiseExit(processEcr(join(dir, "missing.mjs"), "ua").mint(REGISTRY))
    const e = squashed(exit)
    expect(e).toBeInstanceOf(AwsUnavailableError)
    expect(e).toMatchObject({ cause: "the mint process ended without an answer" })
    expect((e as AwsUnavailableError).message).toMatch(/missing\.mjs ended with exit code 1 without an answer: .*Cannot find module/su)
    expect(toOutcome(e as AwsUnavailableError)).toMatchObject({
      class: "transient",
      condition: {
        status: "False",
        reason: "RegistryCredentialsUnavailable",
        message: "Minting an ECR token: retrying after a transient failure: the mint process ended without an answer",
      },
    })
  })

  it("a token of the wrong shape (expiresAt not a number) is a defect whose message does not hold the password", async () => {
    const entry = child("shape", `{ ok: { username: "AWS", password: ${JSON.stringify(PASSWORD)}, expiresAt: "2030-01-01T00:00:00Z" } }`)
    const exit = await Effect.runPromiseExit(processEcr(entry, "ua").mint(REGISTRY))
    expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
    const text = `${String(squashed(exit))} ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`
    expect(text).toContain("the mint process answered a value of the wrong shape")
    expect(text).not.toContain(PASSWORD)
  })

  it("a defect the child reports is a defect", async () => {
    const entry = child("defect", `{ defect: "TypeError: broken" }`)
    const exit = await Effect.runPromiseExit(processEcr(entry, "ua").mint(REGISTRY))
    expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
    expect(String(squashed(exit))).toContain("the mint process answered TypeError: broken")
  })
})
