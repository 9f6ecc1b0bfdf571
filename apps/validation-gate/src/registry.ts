/**
 * The OCI side of the gate: pushes one rollout's evidence with `@aicr/oras`. Loaded by the first push (`lazyRegistry`
 * in act.ts), so an idle gate never loads the client. The bundle (the subject) is first copied by digest into the
 * evidence repository (its blobs are mounted, nothing is uploaded twice), then the files are pushed and the manifest,
 * with `subject` = the bundle, is tagged with the rollout's name. Equal inputs give equal bytes, so a pass repeated
 * after a crash pushes nothing new; a tag that already holds other evidence is never overwritten.
 */
import {
  Annotation,
  type CredentialProvider,
  type Descriptor,
  digestOf,
  dockerConfigCredentials,
  EMPTY_JSON,
  formatReference,
  type ImageManifest,
  isOciError,
  MediaType,
  OciClient,
  parseReference,
} from "@aicr/oras"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import type { EvidenceRegistryShape } from "./act"
import type { GateSettings } from "./config"
import { EvidenceError } from "./errors"
import { EVIDENCE_ARTIFACT_TYPE, type EvidencePush } from "./evidence"

/** A docker config file re-read at every handshake, so rotated credentials are picked up without a restart. */
const credentialsFrom = (path: string | undefined): CredentialProvider | undefined =>
  path === undefined
    ? undefined
    : async (registry) => {
        let text: string
        try {
          text = await readFile(path, "utf8")
        } catch (e) {
          throw new EvidenceError({
            transient: false,
            reason: "RegistryCredentialsUnavailable",
            message: `Registry credentials ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
          })
        }
        return dockerConfigCredentials({ config: JSON.parse(text) as never })(registry)
      }

const asEvidenceError =
  (what: string) =>
  (e: unknown): EvidenceError => {
    if (e instanceof EvidenceError) return e
    if (isOciError(e)) {
      const tag = e.reason._tag
      const transient = tag === "Unavailable"
      return new EvidenceError({
        transient,
        reason: tag === "Unauthorized" || tag === "Denied" ? "Unauthorized" : transient ? "RegistryUnavailable" : "RegistryRefused",
        message: `${what}: ${e.message}`,
      })
    }
    throw e
  }

/** Pushes the evidence; resolves with its digest reference `repository@sha256:…`. */
export const pushEvidence = async (client: OciClient, p: EvidencePush, signal?: AbortSignal): Promise<string> => {
  const repo = p.repository
  let subject: Descriptor | undefined
  if (p.subject !== undefined) {
    const bundle = parseReference(p.subject)
    const found = await client.resolve(bundle, { signal })
    // The subject must resolve in the repository that lists the referrers: copy the bundle there, by digest.
    await client.copy(formatReference({ ...bundle, tag: undefined, digest: found.digest }), `${repo}@${found.digest}`, { signal })
    subject = { mediaType: found.mediaType, digest: found.digest, size: found.size }
  }
  const layers: Descriptor[] = []
  for (const f of p.files) {
    const digest = digestOf(f.bytes)
    await client.pushBlob(repo, f.bytes, { signal, digest, size: f.bytes.length })
    layers.push({ mediaType: f.mediaType, digest, size: f.bytes.length, annotations: { [Annotation.Title]: f.name } })
  }
  await client.pushBlob(repo, EMPTY_JSON.bytes, { signal, digest: EMPTY_JSON.descriptor.digest, size: EMPTY_JSON.descriptor.size })
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    artifactType: EVIDENCE_ARTIFACT_TYPE,
    config: { mediaType: EMPTY_JSON.descriptor.mediaType, digest: EMPTY_JSON.descriptor.digest, size: EMPTY_JSON.descriptor.size },
    layers,
    ...(subject !== undefined ? { subject } : {}),
    annotations: p.annotations,
  }
  const bytes = Buffer.from(JSON.stringify(manifest), "utf8")
  const tagged = `${repo}:${p.tag}`
  const existing = await client.manifestExists(tagged, { signal })
  const digest = digestOf(bytes)
  if (existing !== undefined && existing.digest !== digest) {
    throw new EvidenceError({
      transient: false,
      reason: "Conflict",
      message: `${tagged} already holds other evidence (${existing.digest}); the operator never overwrites evidence`,
    })
  }
  if (existing === undefined) await client.pushManifest(tagged, { bytes, mediaType: MediaType.OciManifest }, { signal })
  return `${repo}@${digest}`
}

/** The gate's registry: a client with the settings' credentials and plain-HTTP hosts, and how to close it. */
export const openRegistry = (
  settings: Pick<GateSettings, "dockerConfig" | "plainHttp">,
  userAgent: string,
): { readonly registry: EvidenceRegistryShape; readonly close: () => Promise<void> } => {
  const client = new OciClient({ credentials: credentialsFrom(settings.dockerConfig), plainHttp: settings.plainHttp, userAgent })
  return {
    registry: {
      resolve: (ref) =>
        Effect.tryPromise({ try: (signal) => client.resolve(ref, { signal }).then((d) => d.digest), catch: (e) => e }).pipe(
          Effect.catch((e) => {
            try {
              return Effect.fail(asEvidenceError(`Resolving the bundle ${ref}`)(e))
            } catch (d) {
              return Effect.die(d)
            }
          }),
        ),
      push: (p) =>
        Effect.tryPromise({ try: (signal) => pushEvidence(client, p, signal), catch: (e) => e }).pipe(
          Effect.catch((e) => {
            try {
              return Effect.fail(asEvidenceError(`Pushing the evidence of ${p.tag} to ${p.repository}`)(e))
            } catch (d) {
              return Effect.die(d)
            }
          }),
        ),
    },
    close: () => client.close(),
  }
}
