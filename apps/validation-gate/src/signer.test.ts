import { describe, expect, it } from "vitest"
import { parseSettings } from "./config"
import { parseKmsKey } from "./signer"

describe("the signing key (chart validation.signingKey)", () => {
  it.each([
    ["awskms:///alias/aicr-evidence", { keyId: "alias/aicr-evidence", endpoint: undefined, region: undefined }],
    [
      "awskms:///arn:aws:kms:us-east-1:123456789012:key/0b5c7a52",
      { keyId: "arn:aws:kms:us-east-1:123456789012:key/0b5c7a52", endpoint: undefined, region: "us-east-1" },
    ],
    ["arn:aws:kms:eu-west-1:123456789012:alias/aicr", { keyId: "arn:aws:kms:eu-west-1:123456789012:alias/aicr", endpoint: undefined, region: "eu-west-1" }],
    ["awskms://127.0.0.1:4566/alias/local", { keyId: "alias/local", endpoint: "http://127.0.0.1:4566", region: undefined }],
    ["awskms://kms.us-east-1.amazonaws.com/alias/x", { keyId: "alias/x", endpoint: "https://kms.us-east-1.amazonaws.com", region: undefined }],
  ])("%s", (value, want) => expect(parseKmsKey(value)).toEqual(want))

  it("is refused at start when it is neither an awskms URI nor a KMS ARN", () => {
    expect(() => parseSettings(["--registry", "oci://r/p", "--signing-key", "gcpkms://projects/x"], {})).toThrow(/--signing-key must be awskms:/u)
    expect(parseSettings(["--registry", "oci://r/p", "--signing-key", "awskms:///alias/aicr-evidence"], {}).signingKey).toBe("awskms:///alias/aicr-evidence")
  })

  it("other flags: the registry prefix, the defaults and the deadline's floor", () => {
    expect(parseSettings(["--registry", "oci://127.0.0.1:5000/aicr/cluster"], {})).toMatchObject({
      prefix: { registry: "127.0.0.1:5000", prefix: "aicr/cluster" },
      namespace: "aicr-system",
      validationNamespace: "aicr-validation",
      launcher: "aicr-validation",
      deadlineSeconds: 1500,
      signingKey: undefined,
    })
    expect(() => parseSettings(["--registry", "oci://r/p", "--validation-deadline", "30s"], {})).toThrow(/at least 1m/u)
    expect(() => parseSettings([], {})).toThrow(/--registry/u)
  })
})
