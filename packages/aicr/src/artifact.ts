/**
 * What every AICR artifact shares: decoded with an effect Schema from JSON or YAML text of bounded size, its
 * apiVersion one this AICR version writes (`AICRArtifactUnsupported`), its recorded AICR version the pinned one
 * (`AICRVersionMismatch`, the version gate of operator.md §4.3).
 */
import { Data, Result, Schema } from "effect"
import { parse } from "yaml"
import { type Capabilities, normalizeVersion } from "./capabilities"

/** Outputs larger than this are refused before parsing (a ConfigMap holds at most 1 MiB). */
export const MAX_ARTIFACT_BYTES = 1024 * 1024

export class ArtifactError extends Data.TaggedError("AicrArtifactError")<{
  readonly reason: "AICRArtifactUnsupported" | "AICRVersionMismatch"
  readonly artifact: string
  readonly message: string
}> {}

/** JSON first (a recipe), then YAML (a snapshot); a bounded, single-document parse either way. */
export const parseText = (text: string): unknown => {
  const trimmed = text.trimStart()
  if (trimmed.startsWith("{")) return JSON.parse(text)
  return parse(text, { maxAliasCount: 100, uniqueKeys: false })
}

export const decodeWith = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  artifact: string,
  text: string,
): Result.Result<S["Type"], ArtifactError> => {
  if (Buffer.byteLength(text, "utf8") > MAX_ARTIFACT_BYTES) {
    return Result.fail(new ArtifactError({ reason: "AICRArtifactUnsupported", artifact, message: `${artifact} is larger than ${MAX_ARTIFACT_BYTES} bytes` }))
  }
  let value: unknown
  try {
    value = parseText(text)
  } catch (e) {
    return Result.fail(new ArtifactError({ reason: "AICRArtifactUnsupported", artifact, message: `${artifact} does not parse: ${firstLine(e)}` }))
  }
  const decoded = Schema.decodeUnknownResult(schema)(value)
  if (Result.isFailure(decoded)) {
    return Result.fail(
      new ArtifactError({ reason: "AICRArtifactUnsupported", artifact, message: `${artifact} does not match its schema: ${firstLine(decoded.failure)}` }),
    )
  }
  return Result.succeed(decoded.success)
}

/** The apiVersion and recorded version checks; undefined when both hold. */
export const checkArtifact = (
  artifact: string,
  apiVersion: string,
  version: string,
  caps: Capabilities,
  accepted: ReadonlyArray<string> = [caps.apiVersion],
): ArtifactError | undefined => {
  if (!accepted.includes(apiVersion)) {
    return new ArtifactError({
      reason: "AICRArtifactUnsupported",
      artifact,
      message: `${artifact} apiVersion ${JSON.stringify(apiVersion)} is not one AICR ${caps.version} writes (${accepted.join(", ")}): the AICR image is not AICR ${caps.version}'s; pin the image of that version (chart aicr.image, resolver --aicr-image) or the version of that image (chart aicr.version)`,
    })
  }
  if (normalizeVersion(version) !== caps.version) {
    return new ArtifactError({
      reason: "AICRVersionMismatch",
      artifact,
      message: `${artifact} records AICR ${version || "(none)"}, the pinned AICR is ${caps.version}`,
    })
  }
  return undefined
}

const firstLine = (e: unknown): string =>
  String(e instanceof Error ? e.message : e)
    .split("\n")
    .slice(0, 3)
    .join(" ")
    .slice(0, 300)
