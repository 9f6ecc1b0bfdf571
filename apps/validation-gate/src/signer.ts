/**
 * Evidence signing with AWS KMS: not built yet. With a signing key configured the gate has no signer, so every
 * evidence it pushes is unsigned and the rollout fails `EvidenceUnsigned` (operator.md §4.9: a rollout fails when its
 * evidence carries no key signature while a key is configured). See docs/controllers/validation-gate.md.
 */
import type { SignerShape } from "./act"

export const lazySigner = (_key: string): SignerShape | undefined => undefined
