// SDK failures → the refresher's tagged errors, with the shapes @aws-sdk/client-ecr and its credential providers
// throw (name, message, $metadata), and the authorization token decoding.
import { describe, expect, it } from "vitest"
import { classify, parseAuthorization } from "./ecr"
import { TokenInvalidError } from "./errors"

const sdk = (name: string, message: string, status?: number, code?: string) =>
  Object.assign(new Error(message), { name, ...(code ? { code } : {}), ...(status ? { $metadata: { httpStatusCode: status } } : {}) })

describe("classify", () => {
  it.each([
    { name: "no provider found anything", e: sdk("CredentialsProviderError", "Could not load credentials from any providers"), tag: "NoAwsIdentityError" },
    {
      name: "an ECR denial names the action and principal",
      e: sdk("AccessDeniedException", "User: arn:aws:iam::123456789012:user/noperm is not authorized to perform: ecr:GetAuthorizationToken", 403),
      tag: "AccessDeniedError",
      fields: { action: "ecr:GetAuthorizationToken", principal: "arn:aws:iam::123456789012:user/noperm" },
    },
    {
      name: "an STS denial of the web identity",
      e: sdk("AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity", 403),
      tag: "AccessDeniedError",
      fields: { action: "sts:AssumeRoleWithWebIdentity" },
    },
    {
      name: "an unknown key",
      e: sdk("UnrecognizedClientException", "The security token included in the request is invalid.", 403),
      tag: "CredentialsRejectedError",
      fields: { code: "UnrecognizedClientException" },
    },
    { name: "a bad signature", e: sdk("InvalidSignatureException", "bad", 403), tag: "CredentialsRejectedError" },
    { name: "throttling", e: sdk("ThrottlingException", "Rate exceeded", 400), tag: "ThrottledError" },
    { name: "HTTP 429", e: sdk("Unknown", "slow down", 429), tag: "ThrottledError" },
    {
      name: "a refused connection",
      e: sdk("Error", "connect ECONNREFUSED 127.0.0.1:1", undefined, "ECONNREFUSED"),
      tag: "AwsUnavailableError",
      fields: { cause: "ECONNREFUSED" },
    },
    { name: "a 503", e: sdk("ServiceUnavailableException", "down", 503), tag: "AwsUnavailableError", fields: { cause: "HTTP 503" } },
  ])("$name → $tag", ({ e, tag, fields }) => {
    const got = classify(e)
    expect(got?._tag).toBe(tag)
    if (fields) expect(got).toMatchObject(fields)
  })

  it("leaves anything unexpected to the defect path", () => {
    expect(classify(new TypeError("x is undefined"))).toBeUndefined()
  })
})

describe("parseAuthorization", () => {
  it("decodes base64(AWS:password) and the expiry", () => {
    const expiresAt = new Date("2026-12-02T22:00:00Z")
    expect(parseAuthorization({ authorizationToken: Buffer.from("AWS:abc:def").toString("base64"), expiresAt })).toEqual({
      username: "AWS",
      password: "abc:def",
      expiresAt: expiresAt.getTime(),
    })
  })
  it.each([
    { name: "no token", data: { expiresAt: new Date() } },
    { name: "no password", data: { authorizationToken: Buffer.from("AWS:").toString("base64"), expiresAt: new Date() } },
    { name: "no expiry", data: { authorizationToken: Buffer.from("AWS:x").toString("base64") } },
  ])("refuses $name", ({ data }) => {
    expect(parseAuthorization(data)).toBeInstanceOf(TokenInvalidError)
  })
})
