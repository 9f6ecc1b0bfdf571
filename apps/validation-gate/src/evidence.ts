/**
 * The evidence of one rollout's validation (operator.md §4.9), pure: the binding document that ties AICR's CTRF report
 * to the deployed plan and its approval, and the OCI artifact's layout. The report is stored byte for byte as AICR
 * wrote it; the binding names its sha256, so the binding (and its signature, when a key is configured) covers both.
 *
 * Artifact: `<prefix>/evidence/<runtime>:<rollout>-<uid8>`, artifactType `application/vnd.aicr.evidence.v1`, layers
 * `binding.json` and `ctrf.json` (titles, so `oras pull` writes those files), `subject` = the bundle manifest, which
 * is first copied by digest into the evidence repository so referrers of the bundle there list every evidence of it.
 */
import type { CheckCounts, CtrfReport } from "@aicr/aicr"
import { canonicalJson, type RuntimeRollout, sha256 } from "@aicr/api"

export const EVIDENCE_ARTIFACT_TYPE = "application/vnd.aicr.evidence.v1"
export const BINDING_MEDIA_TYPE = "application/vnd.aicr.evidence.binding.v1+json"
export const CTRF_MEDIA_TYPE = "application/vnd.aicr.ctrf.report.v1+json"
export const SIGNATURE_MEDIA_TYPE = "application/vnd.aicr.evidence.signature.v1+base64"
export const BINDING_FILE = "binding.json"
export const CTRF_FILE = "ctrf.json"
/** A base64 signature of `binding.json`'s exact bytes (cosign verify-blob's `--signature` format). */
export const SIGNATURE_FILE = "binding.json.sig"

/** The repository of a runtime's evidence under the registry prefix. */
export const evidenceRepository = (registry: string, prefix: string, runtime: string): string => `${registry}/${prefix}/evidence/${runtime}`

/**
 * AICR's deployment validator image for a version: the catalog's `ghcr.io/nvidia/aicr-validators/deployment:latest`
 * with `:latest` rewritten to the CLI's version (AICR pkg/validator/catalog; no `AICR_VALIDATOR_IMAGE_REGISTRY` set).
 */
export const deploymentValidatorImage = (aicrVersion: string): string =>
  `ghcr.io/nvidia/aicr-validators/deployment:${aicrVersion.startsWith("v") ? aicrVersion : `v${aicrVersion}`}`

export interface BindingInput {
  readonly rollout: RuntimeRollout
  readonly runtimeName: string
  readonly plan: { readonly desiredStateDigest: string; readonly inputDigest?: string | undefined }
  readonly bundle: { readonly ref: string; readonly digest: string } | undefined
  readonly aicr: { readonly version: string; readonly image: string }
  readonly run: {
    readonly id: string
    readonly startedAt: string | undefined
    readonly completedAt: string | undefined
    readonly result: "Passed" | "Failed"
    readonly reason: string
    readonly message: string
    readonly checks: CheckCounts
  }
  readonly report: { readonly bytes: Uint8Array; readonly parsed: CtrfReport }
}

/** The binding document, as canonical JSON bytes (equal inputs give equal bytes, so a repeated push is a no-op). */
export const bindingDocument = (b: BindingInput): Uint8Array => {
  const a = b.rollout.spec.approval
  const doc = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ValidationEvidence",
    runtime: { name: b.runtimeName, uid: b.rollout.spec.runtimeUID },
    rollout: {
      name: b.rollout.metadata.name,
      uid: b.rollout.metadata.uid,
      kind: b.rollout.spec.kind,
      fromDigest: b.rollout.spec.fromDigest,
      toDigest: b.rollout.spec.toDigest,
      requestedBy: b.rollout.spec.requestedBy,
    },
    plan: { desiredStateDigest: b.plan.desiredStateDigest, inputDigest: b.plan.inputDigest },
    bundle: b.bundle,
    approval:
      a === undefined ? undefined : { approvedBy: a.approvedBy, groups: a.groups ?? [], reason: a.reason, approvedAt: a.approvedAt, expiresAt: a.expiresAt },
    aicr: { version: b.aicr.version, image: b.aicr.image, reportedVersion: b.report.parsed.results.tool.version },
    validators: [deploymentValidatorImage(b.aicr.version)],
    run: {
      id: b.run.id,
      phase: "deployment",
      startedAt: b.run.startedAt,
      completedAt: b.run.completedAt,
      result: b.run.result,
      reason: b.run.reason,
      message: b.run.message,
      checks: b.run.checks,
    },
    report: { file: CTRF_FILE, mediaType: CTRF_MEDIA_TYPE, digest: sha256(b.report.bytes), size: b.report.bytes.length },
  }
  return new TextEncoder().encode(`${canonicalJson(doc)}\n`)
}

export interface EvidenceFile {
  readonly name: string
  readonly mediaType: string
  readonly bytes: Uint8Array
}

/** What the registry side pushes: the files, where, and the subject to attach them to. */
export interface EvidencePush {
  /** host[:port]/prefix/evidence/<runtime> */
  readonly repository: string
  /** The rollout's name. */
  readonly tag: string
  /** `host/…/bundles/<runtime>[:tag|@digest]`, the plan's bundle; undefined when the plan records none. */
  readonly subject: string | undefined
  readonly files: ReadonlyArray<EvidenceFile>
  readonly annotations: Readonly<Record<string, string>>
}
