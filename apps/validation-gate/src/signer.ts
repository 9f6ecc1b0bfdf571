/**
 * Evidence signing with AWS KMS (chart `validation.signingKey`): an ECDSA signature (`ECDSA_SHA_256`, the algorithm of
 * an `ECC_NIST_P256` signing key) over `binding.json`'s exact bytes, base64 of the DER signature: the format
 * `cosign verify-blob --key <KMS public key> --signature <file>` verifies. The binding names the report's sha256,
 * so one signature covers both. Credentials come from the AWS SDK's standard chain (IRSA, Pod Identity, environment);
 * `awskms://<endpoint>/<key>` names an endpoint as cosign's KMS URIs do. The SDK is loaded by the first signature.
 * Each signature is checked against the key's public key (`kms:GetPublicKey`) before the evidence counts as signed.
 */
import { Effect } from "effect"
import type { SignerShape } from "./act"
import { EvidenceError } from "./errors"

export interface KmsKey {
  /** What KMS takes as KeyId: `alias/<name>`, a key id, or a key or alias ARN. */
  readonly keyId: string
  /** `awskms://host[:port]/…` names an endpoint; `awskms:///…` and bare ARNs use the SDK's. */
  readonly endpoint: string | undefined
  /** The region of an ARN, if the key is one. */
  readonly region: string | undefined
}

export const parseKmsKey = (value: string): KmsKey => {
  const m = /^awskms:\/\/([^/]*)\/(.+)$/u.exec(value)
  const keyId = m !== null ? m[2]! : value
  const host = m !== null && m[1] !== "" ? m[1]! : undefined
  const region = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):/u.exec(keyId)?.[1]
  return { keyId, endpoint: host === undefined ? undefined : `${/^(localhost|127\.|\[::1\])/u.test(host) ? "http" : "https"}://${host}`, region }
}

const asError =
  (key: string) =>
  (e: unknown): EvidenceError => {
    const name = (e as { name?: string }).name ?? ""
    const message = (e as { message?: string }).message ?? String(e)
    const transient = /Throttling|ServiceUnavailable|InternalFailure|KMSInternal|TimeoutError|ECONNREFUSED|ECONNRESET|socket hang up/u.test(
      `${name} ${message}`,
    )
    return new EvidenceError({ transient, reason: "SigningFailed", message: `Signing the evidence with ${key} failed: ${name ? `${name}: ` : ""}${message}` })
  }

/** The signer of a configured key; the KMS client is made by the first signature and kept. */
export const lazySigner = (value: string): SignerShape => {
  const key = parseKmsKey(value)
  let client: Promise<{ sign: (payload: Uint8Array) => Promise<string> }> | undefined
  const open = () => (client ??= import("./kms").then((m) => m.openKms(key)))
  return {
    sign: (payload) => Effect.tryPromise({ try: () => open().then((c) => c.sign(payload)), catch: asError(value) }),
  }
}
