/**
 * The KMS side of evidence signing (`@aws-sdk/client-kms`), loaded by the first signature (`lazySigner` in
 * signer.ts), so a gate without a signing key never loads the SDK.
 */
import { createPublicKey, verify } from "node:crypto"
import { GetPublicKeyCommand, KMSClient, SignCommand } from "@aws-sdk/client-kms"
import type { KmsKey } from "./signer"

export class InvalidSignature extends Error {
  override readonly name = "InvalidSignature"
}

/** Signs with the key, and checks each signature against the key's public key (fetched once). */
export const openKms = (key: KmsKey): { readonly sign: (payload: Uint8Array) => Promise<string> } => {
  const kms = new KMSClient({ ...(key.endpoint ? { endpoint: key.endpoint } : {}), ...(key.region ? { region: key.region } : {}) })
  let publicKey: Promise<ReturnType<typeof createPublicKey>> | undefined
  const publicKeyOf = () =>
    (publicKey ??= kms
      .send(new GetPublicKeyCommand({ KeyId: key.keyId }))
      .then((out) => {
        if (out.PublicKey === undefined) throw new Error("KMS returned no public key")
        return createPublicKey({ key: Buffer.from(out.PublicKey), format: "der", type: "spki" })
      })
      .catch((e: unknown) => {
        publicKey = undefined
        throw e
      }))
  return {
    sign: async (payload: Uint8Array) => {
      const out = await kms.send(new SignCommand({ KeyId: key.keyId, Message: payload, MessageType: "RAW", SigningAlgorithm: "ECDSA_SHA_256" }))
      if (out.Signature === undefined) throw new Error("KMS returned no signature")
      const signature = Buffer.from(out.Signature)
      if (!verify("sha256", payload, await publicKeyOf(), signature))
        throw new InvalidSignature("the signature KMS returned does not verify against the key's public key")
      return signature.toString("base64")
    },
  }
}
