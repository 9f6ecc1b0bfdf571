/**
 * The images this project ships, as recipes for `buildImage`:
 *
 * - `aicr-operator`: every controller's bundle under `/app/<controller>/`, started by name
 *   (`aicr-operator <controller> [flags]`), the one `operator.image` of the install guide;
 * - `aicr-operator-<controller>`: one controller each (`/app/main.mjs`), for per-controller image overrides;
 * - `aicr` and `aicr-validators/deployment`: AICR's CLI and deployment validator, from the binaries
 *   `hack/build-tools.sh aicr` built, laid out like AICR's own images (`/ko-app/aicr`; `/deployment` with
 *   `/app/testdata`, user nonroot).
 *
 * Layers, bottom to top: base (Debian packages), node (operator images) or shell (AICR CLI), the app. The base and
 * node layers are the same blobs in every operator image, so a registry stores them once.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import type { ImageSpec, LayerRecipe } from "./build"
import { NODE_DIR } from "./build"
import type { Arch } from "./inputs"
import { NONROOT } from "./rootfs"

const PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

export interface ImageMeta {
  /** org.opencontainers.image.version, also the layout's ref name (e.g. `0.1.0`). */
  readonly version: string
  /** org.opencontainers.image.revision (a git commit), when known. */
  readonly revision?: string
  /** org.opencontainers.image.source, when known. */
  readonly source?: string
}

const annotations = (title: string, description: string, meta: ImageMeta, licenses: string): Record<string, string> => ({
  "org.opencontainers.image.title": title,
  "org.opencontainers.image.description": description,
  "org.opencontainers.image.version": meta.version,
  ...(meta.revision ? { "org.opencontainers.image.revision": meta.revision } : {}),
  ...(meta.source ? { "org.opencontainers.image.source": meta.source } : {}),
  "org.opencontainers.image.licenses": licenses,
  "org.opencontainers.image.base.name": "debian bookworm packages (packages/image/debian.lock.json)",
})

const nodeEnv = [`${PATH}:/${NODE_DIR}/bin`, "NODE_ENV=production", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"]
/** What does not ship: esbuild's metafile (for bundle analysis only). */
const NOT_SHIPPED = /^meta\.json$/
const bundleFiles = (dir: string) => ({ from: dir, to: "/app", exclude: NOT_SHIPPED })

/** A controller's bundle directory (dist/apps/<name>), checked to hold its entry. */
const shippedBundle = (bundleDir: string) => {
  if (!existsSync(join(bundleDir, "main.mjs"))) throw new Error(`${bundleDir}/main.mjs is missing: build the app first (npx tsx hack/build-apps.ts)`)
  return bundleDir
}

/**
 * Starts the controller named by the first argument (`aicr-operator planner --leader-elect …`), else by AICR_CONTROLLER
 * (the chart passes only flags). The controller reads
 * its flags from process.argv[2…], so the name is taken out before its bundle loads.
 */
export const DISPATCHER = `// aicr-operator [<controller>] [flags…]: runs /app/<controller>/main.mjs with the flags. Without a controller as
// the first argument, AICR_CONTROLLER names it (the chart sets it on every container and passes only flags).
import { existsSync, readdirSync } from "node:fs"
const first = process.argv[2]
const fromArgument = first !== undefined && !first.startsWith("-")
const name = fromArgument ? first : process.env.AICR_CONTROLLER
const known = readdirSync("/app", { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(\`/app/\${d.name}/main.mjs\`)).map((d) => d.name)
if (!name || !known.includes(name)) {
  process.stderr.write(\`usage: aicr-operator <controller> [flags], or AICR_CONTROLLER=<controller>; controllers: \${known.join(", ")}\\n\`)
  process.exit(2)
}
if (fromArgument) process.argv.splice(2, 1)
await import(\`/app/\${name}/main.mjs\`)
`

/** The operator image with every controller (`bundles`: controller name → its dist/apps directory). */
export const operatorImage = (bundles: Readonly<Record<string, string>>, meta: ImageMeta, platforms: ReadonlyArray<Arch>): ImageSpec => {
  const names = Object.keys(bundles).sort()
  const app: LayerRecipe = {
    kind: "files",
    comment: `controllers: ${names.join(", ")}`,
    files: [
      { from: Buffer.from(DISPATCHER), to: "/app/aicr-operator.mjs" },
      ...names.map((n) => ({ from: shippedBundle(bundles[n]!), to: `/app/${n}`, exclude: NOT_SHIPPED })),
    ],
  }
  return {
    name: "aicr-operator",
    platforms,
    layers: [{ kind: "base" }, { kind: "node" }, app],
    config: {
      User: `${NONROOT}:${NONROOT}`,
      Env: nodeEnv,
      Entrypoint: [`/${NODE_DIR}/bin/node`, "/app/aicr-operator.mjs"],
      WorkingDir: "/app",
      Labels: annotations("aicr-operator", `The AICR operator's controllers (${names.join(", ")})`, meta, "Apache-2.0"),
    },
    annotations: annotations("aicr-operator", `The AICR operator's controllers (${names.join(", ")})`, meta, "Apache-2.0"),
  }
}

/** One controller's own image: `aicr-operator-<controller>`. */
export const controllerImage = (controller: string, bundleDir: string, meta: ImageMeta, platforms: ReadonlyArray<Arch>): ImageSpec => {
  const title = `aicr-operator-${controller}`
  const a = annotations(title, `The AICR operator's ${controller} controller`, meta, "Apache-2.0")
  return {
    name: title,
    platforms,
    layers: [{ kind: "base" }, { kind: "node" }, { kind: "files", comment: `controller ${controller}`, files: [bundleFiles(shippedBundle(bundleDir))] }],
    config: { User: `${NONROOT}:${NONROOT}`, Env: nodeEnv, Entrypoint: [`/${NODE_DIR}/bin/node`, "/app/main.mjs"], WorkingDir: "/app", Labels: a },
    annotations: a,
  }
}

/** AICR's CLI image from a local build (`<tools>/aicr-<version>/aicr`), like ko lays it out: /ko-app/aicr. */
export const aicrImage = (buildDir: string, version: string, platforms: ReadonlyArray<Arch>): ImageSpec => {
  const a = annotations("aicr", `AICR ${version} CLI (snapshot agent, recipe, bundle, validate), built from source`, { version }, "Apache-2.0")
  return {
    name: "aicr",
    platforms,
    layers: [
      { kind: "base" },
      { kind: "shell" },
      { kind: "files", comment: `aicr ${version}`, files: [{ from: join(buildDir, "aicr"), to: "/ko-app/aicr", mode: 0o755 }] },
    ],
    config: { Env: [`${PATH}:/ko-app`, "KO_DATA_PATH=/var/run/ko"], Entrypoint: ["/ko-app/aicr"], Labels: a },
    annotations: a,
  }
}

/** AICR's deployment validator image (its Dockerfile: /deployment, WORKDIR /app with testdata/, USER nonroot). */
export const aicrValidatorImage = (buildDir: string, version: string, platforms: ReadonlyArray<Arch>): ImageSpec => {
  const a = annotations("aicr-validators/deployment", `AICR ${version} deployment validator, built from source`, { version }, "Apache-2.0")
  const v = join(buildDir, "validators")
  return {
    name: "aicr-validators-deployment",
    platforms,
    layers: [
      { kind: "base" },
      {
        kind: "files",
        comment: `aicr deployment validator ${version}`,
        files: [
          { from: join(v, "deployment"), to: "/deployment", mode: 0o755 },
          { from: join(v, "app", "testdata"), to: "/app/testdata" },
        ],
      },
    ],
    config: { User: `${NONROOT}:${NONROOT}`, Env: [PATH], Entrypoint: ["/deployment"], WorkingDir: "/app", Labels: a },
    annotations: a,
  }
}
