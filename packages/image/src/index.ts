/**
 * `@aicr/image`: daemonless, reproducible OCI images (see docs/adr/20261203-daemonless-images.md). Build an
 * {@link ImageSpec} with {@link buildImage} into an OCI image layout, push it with {@link pushImage}.
 */
export {
  buildImage,
  type BuildOptions,
  type BuiltImage,
  type BuiltManifest,
  imageSize,
  type ImageSpec,
  type LayerRecipe,
  MEDIA,
  NODE_DIR,
  pushImage,
  type RunConfig,
} from "./build"
export { aicrImage, aicrValidatorImage, controllerImage, DISPATCHER, type ImageMeta, operatorImage } from "./images"
export { type Arch, ARCHES, debianLock, type DebianLock, imageCache, nodeBinary, nodeLock, type NodeLock } from "./inputs"
export { entriesOf, type Layer, type LayerEntry, type OwnerRule, sourceDateEpoch, writeLayer } from "./layer"
export { BASE_PACKAGES, NONROOT, SHELL_PACKAGES } from "./rootfs"
