/**
 * What the mirror pushes besides charts copied as they are, built deterministically (same input → same bytes →
 * same digest, so a second mirror pushes nothing): Helm's OCI layout of a chart archive with a fixed `created`
 * (`chartLayout` of `@aicr/oras`, byte for byte what `helm push` writes) and the bundle artifact.
 */
import { Annotation, chartLayout, type ChartLayout, type Descriptor, digestOf, EMPTY_JSON, gzip, MediaType, writeTar } from "@aicr/oras"

/** The epoch: AICR's reproducible OCI pushes use it as `created` (aicr-cli.md §3.3); so do we. */
export const CREATED = "1970-01-01T00:00:00Z"

/** Helm's OCI layout for a chart archive (`helm push`), with `created` fixed. Throws OciError `Invalid` for a non-chart. */
export const chartArtifact = (tgz: Uint8Array): ChartLayout => chartLayout(tgz, { created: CREATED })

export const BUNDLE_ARTIFACT_TYPE = "application/vnd.aicr.bundle.v1"
/**
 * The annotations `oras push <ref> .` writes for a directory (run inside it): `oras pull <ref> -o <dir>` unpacks the
 * layer into `<dir>` itself (oras-go's file store extracts a layer titled `<name>` into `<dir>/<name>`, accepting
 * only entries under `<name>`).
 */
export const ORAS_UNPACK = "io.deis.oras.content.unpack"
export const ORAS_CONTENT_DIGEST = "io.deis.oras.content.digest"
/** The layer's title: the directory `oras pull -o <dir>` extracts it into, relative to `<dir>`. */
export const BUNDLE_TITLE = "."
export const ANNOTATION_INPUT_DIGEST = "operator.aicr.run/input-digest"

export interface BundleArtifact {
  readonly layer: { readonly bytes: Buffer; readonly descriptor: Descriptor }
  readonly manifest: { readonly bytes: Buffer; readonly digest: string; readonly mediaType: string }
}

/** A bundle file's mode in the archive: 0755 when any execute bit is set (deploy.sh), else 0644; never AICR's 0600. */
export const bundleFileMode = (mode: number | undefined): number => ((mode ?? 0) & 0o111 ? 0o755 : 0o644)

/**
 * The bundle as one OCI artifact: a tar+gzip layer of the bundle's files at its root, each directory with its own
 * entry (0755), files 0644 or 0755 ({@link bundleFileMode}), paths sorted, mtime the epoch, annotated the way
 * `oras push <ref> .` annotates a directory (title `.`), so `oras pull <ref> -o <dir>` puts the files where
 * `aicr bundle --output <dir>` does; an empty config, artifactType {@link BUNDLE_ARTIFACT_TYPE}.
 */
export const bundleArtifact = (files: Readonly<Record<string, string>>, modes: Readonly<Record<string, number>>, inputDigest: string): BundleArtifact => {
  const paths = Object.keys(files).sort()
  const tarBytes = writeTar(
    paths.map((p) => ({ path: p, data: Buffer.from(files[p]!, "utf8") })),
    { modes: Object.fromEntries(paths.map((p) => [p, bundleFileMode(modes[p])])), directories: true },
  )
  const layerBytes = gzip(tarBytes)
  const layer: Descriptor = {
    mediaType: MediaType.OciLayerGzip,
    digest: digestOf(layerBytes),
    size: layerBytes.length,
    annotations: { [ORAS_CONTENT_DIGEST]: digestOf(tarBytes), [ORAS_UNPACK]: "true", [Annotation.Title]: BUNDLE_TITLE },
  }
  const config: Descriptor = { mediaType: MediaType.OciEmpty, digest: EMPTY_JSON.descriptor.digest, size: EMPTY_JSON.descriptor.size }
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    artifactType: BUNDLE_ARTIFACT_TYPE,
    config,
    layers: [layer],
    annotations: { [Annotation.Created]: CREATED, [ANNOTATION_INPUT_DIGEST]: inputDigest },
  }
  const bytes = Buffer.from(JSON.stringify(manifest))
  return { layer: { bytes: layerBytes, descriptor: layer }, manifest: { bytes, digest: digestOf(bytes), mediaType: MediaType.OciManifest } }
}
