/**
 * `npx tsx hack/build-images.ts [--push <registry>/<prefix>] [--platform amd64,arm64] [--no-cache] [--only <name>…]`
 * (`--dispatcher <file>` only writes the `aicr-operator` entry script, for the Dockerfile):
 * builds the project's OCI images without a container engine (packages/image, docs/adr/20261203-daemonless-images.md)
 * into `dist/images/<name>/` (OCI image layouts):
 *
 * - `aicr-operator` (every controller) and `aicr-operator-<controller>` (one each), from the bundles of
 *   hack/build-apps.ts (built first), for linux/amd64 and linux/arm64;
 * - `aicr` and `aicr-validators-deployment` for each AICR version in hack/tools/versions.env that
 *   `hack/build-tools.sh aicr` built (linux/amd64: the build machine's architecture only).
 *
 * With `--push`, each goes to `<registry>/<prefix>/<name>:<tag>` (AICR's: `<prefix>/nvidia/aicr:<version>` and
 * `<prefix>/nvidia/aicr-validators/deployment:<version>`, the upstream paths under the prefix). Prints each image's
 * digest, its size per platform (compressed / uncompressed) and the build time.
 *
 * Also a library: `buildProjectImages` for tests, benchmarks and the local control plane.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  aicrImage,
  aicrValidatorImage,
  type Arch,
  ARCHES,
  buildImage,
  DISPATCHER,
  type BuiltImage,
  controllerImage,
  imageSize,
  type ImageSpec,
  operatorImage,
  pushImage,
} from "@aicr/image"
import { OciClient } from "@aicr/oras"
import { apps, buildApp } from "./build-apps"

const root = join(fileURLToPath(new URL(".", import.meta.url)), "..")

const toolsCache = (): string =>
  process.env["AICR_TOOLS_CACHE"] ?? join(process.env["XDG_CACHE_HOME"] ?? join(process.env["HOME"] ?? "/root", ".cache"), "aicr-operator", "bin")

/** AICR versions of hack/tools/versions.env whose local build exists. */
export const builtAicrVersions = (): { version: string; dir: string }[] => {
  const env = readFileSync(join(root, "hack", "tools", "versions.env"), "utf8")
  const versions = [...env.matchAll(/^AICR_(?:PREVIOUS_)?VERSION=(\S+)$/gm)].map((m) => m[1]!)
  return versions.map((version) => ({ version, dir: join(toolsCache(), `aicr-${version}`) })).filter((v) => existsSync(join(v.dir, ".complete")))
}

/** This checkout's version (package.json) and commit, for the image labels. */
export const projectMeta = () => {
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version
  let revision: string | undefined
  try {
    revision = execFileSync("git", ["-C", root, "rev-parse", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    revision = undefined
  }
  return { version, ...(revision ? { revision } : {}) }
}

export interface ProjectImage {
  readonly spec: ImageSpec
  /** Repository path under the push prefix, and the tag. */
  readonly path: string
  readonly tag: string
}

/** The image specs of this checkout (the controllers' bundles must be built). */
export const projectImages = (opts: { platforms?: ReadonlyArray<Arch>; controllers?: ReadonlyArray<string>; aicr?: boolean } = {}): ProjectImage[] => {
  const platforms = opts.platforms ?? ARCHES
  const meta = projectMeta()
  const controllers = opts.controllers ?? apps()
  const bundles = Object.fromEntries(controllers.map((a) => [a, join(root, "dist", "apps", a)]))
  const out: ProjectImage[] = [
    { spec: operatorImage(bundles, meta, platforms), path: "aicr-operator", tag: `v${meta.version}` },
    ...controllers.map((c) => ({ spec: controllerImage(c, bundles[c]!, meta, platforms), path: `aicr-operator-${c}`, tag: `v${meta.version}` })),
  ]
  if (opts.aicr ?? true) {
    const host: Arch = process.arch === "arm64" ? "arm64" : "amd64"
    for (const { version, dir } of builtAicrVersions()) {
      out.push({ spec: { ...aicrImage(dir, version, [host]), name: `aicr-${version}` }, path: "nvidia/aicr", tag: version })
      out.push({
        spec: { ...aicrValidatorImage(dir, version, [host]), name: `aicr-validators-deployment-${version}` },
        path: "nvidia/aicr-validators/deployment",
        tag: version,
      })
    }
  }
  return out
}

export interface BuiltProjectImage extends ProjectImage {
  readonly image: BuiltImage
  readonly seconds: number
  /** `<registry>/<prefix>/<path>:<tag>@<digest>` when pushed. */
  readonly ref?: string
}

/** Builds (and with `push`, pushes) `images` into `outDir` (default dist/images). */
export const buildProjectImages = async (
  images: ReadonlyArray<ProjectImage>,
  opts: { outDir?: string; push?: string; useCache?: boolean; client?: OciClient } = {},
): Promise<BuiltProjectImage[]> => {
  const out: BuiltProjectImage[] = []
  const client = opts.push ? (opts.client ?? new OciClient()) : undefined
  try {
    for (const p of images) {
      const t0 = performance.now()
      const image = await buildImage(p.spec, { outDir: opts.outDir ?? join(root, "dist", "images"), useCache: opts.useCache ?? true })
      const seconds = (performance.now() - t0) / 1000
      const ref = client && opts.push ? await pushImage(client, image, `${opts.push}/${p.path}`, p.tag) : undefined
      out.push({ ...p, image, seconds, ...(ref ? { ref } : {}) })
    }
  } finally {
    if (client && !opts.client) await client.close()
  }
  return out
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2)
  const flag = (name: string) => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1] : undefined
  }
  const dispatcher = flag("--dispatcher")
  if (dispatcher) {
    writeFileSync(dispatcher, DISPATCHER)
    process.exit(0)
  }
  const platforms = (flag("--platform")?.split(",") ?? ARCHES) as Arch[]
  const only = args.flatMap((a, i) => (args[i - 1] === "--only" ? [a] : []))
  const controllers = apps()
  for (const app of controllers) await buildApp(app)
  const images = projectImages({ platforms, controllers }).filter((p) => only.length === 0 || only.includes(p.spec.name))
  const built = await buildProjectImages(images, { push: flag("--push"), useCache: !args.includes("--no-cache") })
  for (const b of built) {
    const sizes = b.image.manifests
      .map((m) => `${m.platform} ${mib(imageSize(b.image, m.platform).compressed)} / ${mib(imageSize(b.image, m.platform).uncompressed)}`)
      .join(", ")
    process.stdout.write(`${b.spec.name}: ${b.image.digest} (${sizes}) in ${b.seconds.toFixed(1)} s${b.ref ? `\n  pushed ${b.ref}` : ""}\n`)
  }
}
