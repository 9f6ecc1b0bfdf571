/**
 * `@aicr/oras`: a typed OCI distribution v1.1 client (our ORAS for TypeScript).
 *
 * Promise API: {@link OciClient}. Effect API: {@link Oras} service and {@link toEffectClient}. One error type:
 * {@link OciError} with a tagged `reason`. See docs/adr/20261202-oras-client.md.
 */
export { OciClient, type OciClientOptions } from "./client"
export { Oras, type OciEffectClient, toEffectClient } from "./effect"
export {
  type Conflict,
  type Denied,
  type DigestMismatch,
  type Invalid,
  isOciError,
  type NotFound,
  OciError,
  type OciErrorReason,
  type OciErrorReasonTag,
  ociErrorReasonTags,
  type TooLarge,
  type Unauthorized,
  type Unavailable,
} from "./errors"
export {
  chartTag,
  chartVersion,
  DOCKER_HUB,
  formatReference,
  isDigest,
  isLoopback,
  isRepository,
  isTag,
  manifestReference,
  parseReference,
  type Reference,
  registryEndpoint,
  withReference,
} from "./reference"
export { type DigestAlgorithm, digestOf, DigestStream, type Expected, verifyBytes } from "./digest"
export {
  Annotation,
  childrenOf,
  type Descriptor,
  EMPTY_JSON,
  type ImageIndex,
  type ImageManifest,
  isIndexMediaType,
  isManifestMediaType,
  type Manifest,
  MANIFEST_MEDIA_TYPES,
  MediaType,
  type Platform,
} from "./media-types"
export { type Challenge, mergeScopes, parseWwwAuthenticate, pullScope, pushScope } from "./auth/challenge"
export { type CachedToken, TokenCache, tokenEntry, type TokenResponse } from "./auth/token-cache"
export {
  anonymous,
  chainCredentials,
  type Credential,
  type CredentialProvider,
  type DockerConfig,
  dockerConfigCredentials,
  type DockerConfigOptions,
  staticCredentials,
} from "./auth/credentials"
export { backoffDelay, defaultRetryPolicy, isRetryableError, isRetryableStatus, parseRetryAfter, type RetryPolicy } from "./transport/retry"
export { type TransportStats } from "./transport/http"
export { nextLink, parseLinkHeader, type Link } from "./link"
export { type BlobInfo } from "./blobs"
export { type BlobSource, type PushBlobOptions, type PushedBlob } from "./upload"
export { type FetchedManifest, type FetchOptions, type PushManifestOptions, referrersTag } from "./manifests"
export { type ListTagsOptions, type ReferrersOptions, type ReferrersSource } from "./listing"
export { type BlobEvent, type CopyOptions, type CopyResult, mapLimit } from "./copy"
export {
  chartAnnotations,
  chartConfigJson,
  type ChartDependency,
  chartLayer,
  chartLayout,
  type ChartLayout,
  type ChartLayoutOptions,
  type ChartMaintainer,
  type ChartMetadata,
  type PullChartOptions,
  type PulledChart,
  type PushChartOptions,
  type PushedChart,
  readChartMetadata,
} from "./helm"
export { type CallOptions } from "./context"
export { findInTgz, gzip, readTar, readTgz, type TarEntry, type TarWriteOptions, writeTar, writeTgz } from "./tar"
