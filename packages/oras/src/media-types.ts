/**
 * Media types and the JSON shapes of OCI image-spec v1.1 manifests, indexes and descriptors, plus the Docker v2
 * equivalents we must recognise when copying images.
 */

/** Media type constants (OCI image-spec v1.1, Docker v2 schema 2, Helm). */
export const MediaType = {
  OciManifest: "application/vnd.oci.image.manifest.v1+json",
  OciIndex: "application/vnd.oci.image.index.v1+json",
  OciConfig: "application/vnd.oci.image.config.v1+json",
  OciLayer: "application/vnd.oci.image.layer.v1.tar",
  OciLayerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  OciEmpty: "application/vnd.oci.empty.v1+json",
  DockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  DockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
  DockerConfig: "application/vnd.docker.container.image.v1+json",
  HelmConfig: "application/vnd.cncf.helm.config.v1+json",
  HelmChart: "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
  HelmProvenance: "application/vnd.cncf.helm.chart.provenance.v1.prov",
} as const

/** Manifest media types we send in `Accept` and know how to walk. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [MediaType.OciManifest, MediaType.OciIndex, MediaType.DockerManifest, MediaType.DockerManifestList]

/** True for an index-like manifest (OCI index or Docker manifest list), whose children are manifests. */
export const isIndexMediaType = (mediaType: string): boolean => mediaType === MediaType.OciIndex || mediaType === MediaType.DockerManifestList

/** True for any media type in {@link MANIFEST_MEDIA_TYPES}. */
export const isManifestMediaType = (mediaType: string): boolean => MANIFEST_MEDIA_TYPES.includes(mediaType)

/** Standard annotation keys (image-spec `annotations.md`). */
export const Annotation = {
  Created: "org.opencontainers.image.created",
  Authors: "org.opencontainers.image.authors",
  Url: "org.opencontainers.image.url",
  Source: "org.opencontainers.image.source",
  Version: "org.opencontainers.image.version",
  Title: "org.opencontainers.image.title",
  Description: "org.opencontainers.image.description",
} as const

/** A platform, as in an index entry. */
export interface Platform {
  readonly architecture: string
  readonly os: string
  readonly "os.version"?: string
  readonly "os.features"?: readonly string[]
  readonly variant?: string
}

/** An OCI content descriptor. */
export interface Descriptor {
  readonly mediaType: string
  readonly digest: string
  readonly size: number
  readonly urls?: readonly string[]
  readonly annotations?: Readonly<Record<string, string>>
  readonly data?: string
  readonly platform?: Platform
  readonly artifactType?: string
}

/** An image manifest (also used for artifacts: set `artifactType`, or a non-image config media type). */
export interface ImageManifest {
  readonly schemaVersion: 2
  readonly mediaType: typeof MediaType.OciManifest | typeof MediaType.DockerManifest
  readonly artifactType?: string
  readonly config: Descriptor
  readonly layers: readonly Descriptor[]
  readonly subject?: Descriptor
  readonly annotations?: Readonly<Record<string, string>>
}

/** An image index (or a Docker manifest list). */
export interface ImageIndex {
  readonly schemaVersion: 2
  readonly mediaType: typeof MediaType.OciIndex | typeof MediaType.DockerManifestList
  readonly artifactType?: string
  readonly manifests: readonly Descriptor[]
  readonly subject?: Descriptor
  readonly annotations?: Readonly<Record<string, string>>
}

/** Either kind of manifest. */
export type Manifest = ImageManifest | ImageIndex

/** The empty JSON blob `{}` used as config (and layer) of artifacts without one (image-spec v1.1). */
export const EMPTY_JSON = {
  bytes: Buffer.from("{}"),
  descriptor: {
    mediaType: MediaType.OciEmpty,
    digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
    size: 2,
    data: "e30=",
  } satisfies Descriptor,
} as const

/** Every descriptor a manifest points at: config + layers for a manifest, children for an index (not subject). */
export const childrenOf = (manifest: Manifest): readonly Descriptor[] => ("manifests" in manifest ? manifest.manifests : [manifest.config, ...manifest.layers])
