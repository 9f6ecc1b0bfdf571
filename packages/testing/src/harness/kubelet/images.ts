// Which container images the process kubelet runs for real, and with what: images in a registry on loopback (the
// local control plane's) are pulled and run from their root filesystem; AICR's own images are pulled from the local
// copies hack/build-images.ts pushes (`aicrImages(mirror)`, as a node's registry mirror would serve them), or, without
// a mirror, map to the binaries hack/build-tools.sh built for that version, run on the build machine's root.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { toolsCache } from "../tools"

/** How one container image runs as a local process. */
export interface ImageRuntime {
  /** The image's ENTRYPOINT, used when the container has no `command`. */
  readonly entrypoint: readonly string[]
  /** Directories put first on PATH (the image's own binaries), so `command: [aicr]` resolves. */
  readonly path: readonly string[]
  /** The image's WORKDIR. */
  readonly workdir?: string
  /** Pull this reference and run the container from its image (entrypoint, env and workdir then come from it). */
  readonly pull?: string
}

export interface ImageRule {
  /** The image repository (reference without tag or digest), e.g. ghcr.io/nvidia/aicr. */
  readonly repository: string
  /** The tags that run (group 1 is the version given to `resolve`); default: release tags `vX.Y.Z`. */
  readonly tags?: RegExp
  /** The runtime for a release tag, or an error message saying why it cannot run here. */
  readonly resolve: (version: string) => ImageRuntime | { readonly error: string }
}

const aicrDir = (version: string) => join(toolsCache(), `aicr-${version}`)

const built = (version: string): string | undefined => {
  const dir = aicrDir(version)
  return existsSync(join(dir, ".complete")) ? dir : undefined
}

const notBuilt = (version: string) => ({
  error: `no local build of AICR ${version} (${aicrDir(version)}): add it to hack/tools/versions.env and run 'bash hack/build-tools.sh aicr'`,
})

/**
 * AICR's images pulled from local copies under `mirror` (`<registry>/<prefix>`: `<mirror>/nvidia/aicr:<version>`,
 * `<mirror>/nvidia/aicr-validators/deployment:<version>`, built from the same sources by hack/build-images.ts).
 * A pinned upstream digest cannot match a local build, so the copy is pulled by tag.
 */
export const aicrImages = (mirror: string): readonly ImageRule[] => [
  { repository: "ghcr.io/nvidia/aicr", resolve: (v) => ({ entrypoint: [], path: [], pull: `${mirror}/nvidia/aicr:${v}` }) },
  {
    repository: "ghcr.io/nvidia/aicr-validators/deployment",
    resolve: (v) => ({ entrypoint: [], path: [], pull: `${mirror}/nvidia/aicr-validators/deployment:${v}` }),
  },
]

/** AICR's CLI image (snapshot agent, recipe, bundle, validate) and its deployment validator image, as local binaries. */
export const AICR_IMAGES: readonly ImageRule[] = [
  {
    repository: "ghcr.io/nvidia/aicr",
    resolve: (v) => {
      const dir = built(v)
      return dir ? { entrypoint: [join(dir, "aicr")], path: [dir] } : notBuilt(v)
    },
  },
  {
    repository: "ghcr.io/nvidia/aicr-validators/deployment",
    resolve: (v) => {
      const dir = built(v)
      if (!dir) return notBuilt(v)
      const validators = join(dir, "validators")
      return { entrypoint: [join(validators, "deployment")], path: [validators], workdir: join(validators, "app") }
    },
  },
]

/**
 * NVIDIA's CUDA base images, as AICR's `check-nvidia-smi` deploys them (`nvcr.io/nvidia/cuda:13.0.0-base-ubuntu22.04`,
 * `command: [/bin/sh, -c]`, `args: [nvidia-smi && echo GPU_CHECK_SUCCESS]`): a base image brings no binary of its own,
 * so its command runs as given, with the fake host's `nvidia-smi` on PATH on a GPU node (none on a system node, where
 * the command fails as it would without a driver).
 */
export const CUDA_BASE_IMAGE: ImageRule = {
  repository: "nvcr.io/nvidia/cuda",
  tags: /^:(\d+\.\d+\.\d+-base-[a-z0-9.]+)(@sha256:[a-f0-9]{64})?$/,
  resolve: () => ({ entrypoint: [], path: [] }),
}

/** Every image the process kubelet runs: AICR's own, and the CUDA base image AICR's GPU check runs. */
export const KUBELET_IMAGES: readonly ImageRule[] = [...AICR_IMAGES, CUDA_BASE_IMAGE]

/**
 * Repositories the kubelet claims: their pods never get kwok's fake lifecycle, even when they cannot run here (an
 * unbuilt version, the performance or conformance validators), so nothing "passes" without running.
 */
export const CLAIMED_REPOSITORIES: readonly string[] = ["ghcr.io/nvidia/aicr", "ghcr.io/nvidia/aicr-validators/[^:@]+"]

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** Images in a registry on loopback (the local control plane's): pulled and run from their own root filesystem. */
const LOOPBACK_IMAGE = "(127\\.[0-9]+\\.[0-9]+\\.[0-9]+|localhost)(:[0-9]+)?/"
export const isLoopbackImage = (image: string): boolean => new RegExp(`^${LOOPBACK_IMAGE}`).test(image)

/** A regular expression (source) matching every image the kubelet claims; kwok's pod stages exclude these. */
export const claimedImagePattern = (rules: readonly ImageRule[] = KUBELET_IMAGES, claimed: readonly string[] = CLAIMED_REPOSITORIES): string =>
  `^((${[...rules.map((r) => escape(r.repository)), ...claimed.map((c) => c.replaceAll(".", "\\."))].join("|")})[:@]|${LOOPBACK_IMAGE})`

export type ImageLookup =
  | { readonly kind: "unclaimed" }
  | { readonly kind: "runnable"; readonly repository: string; readonly version: string; readonly runtime: ImageRuntime }
  | { readonly kind: "unavailable"; readonly message: string }

const TAG = /^:(v\d+\.\d+\.\d+)(@sha256:[a-f0-9]{64})?$/

/** What the kubelet does with a container image. */
export const lookupImage = (image: string, rules: readonly ImageRule[] = KUBELET_IMAGES, claimed: readonly string[] = CLAIMED_REPOSITORIES): ImageLookup => {
  if (isLoopbackImage(image)) {
    const m = /^(.+?)(?::([^:/@]+))?(@sha256:[a-f0-9]{64})?$/.exec(image)!
    return { kind: "runnable", repository: m[1]!, version: m[2] ?? m[3]?.slice(1) ?? "latest", runtime: { entrypoint: [], path: [], pull: image } }
  }
  for (const rule of rules) {
    if (!image.startsWith(rule.repository) || !/^[:@]/.test(image.slice(rule.repository.length))) continue
    const tag = (rule.tags ?? TAG).exec(image.slice(rule.repository.length))
    if (!tag)
      return {
        kind: "unavailable",
        message: `image ${image}: only ${rule.tags ? `tags matching ${rule.tags.source}` : "release tags (vX.Y.Z, optionally @sha256:…)"} of ${rule.repository} run on the local control plane`,
      }
    const r = rule.resolve(tag[1]!)
    return "error" in r
      ? { kind: "unavailable", message: `image ${image}: ${r.error}` }
      : { kind: "runnable", repository: rule.repository, version: tag[1]!, runtime: r }
  }
  if (new RegExp(claimedImagePattern(rules, claimed)).test(image)) {
    return { kind: "unavailable", message: `image ${image} has no local build: the process kubelet runs only ${rules.map((r) => r.repository).join(", ")}` }
  }
  return { kind: "unclaimed" }
}
