/**
 * The `aicr bundle --deployer helm` output as a file tree, both layouts:
 *
 * - flat (0.x, real outputs of v0.10/v0.11): `<component>/values.yaml`, `<component>/README.md`,
 *   `<component>/manifests/*.yaml`; root README.md, deploy.sh, undeploy.sh, checksums.txt, recipe.yaml.
 * - numbered (1.x, from the documented layout, research/aicr-newer.md §5.2): `NNN-<component>/values.yaml`,
 *   `cluster-values.yaml`, `install.sh`, `upstream.env`; root `bundle-info.yaml` (kind BundleInfo,
 *   `layout.releases` in deployment order), README.md, deploy.sh, checksums.txt, recipe.yaml.
 *
 * `parseBundle` checks paths, sizes and `checksums.txt` (every listed file present with its sha256), and returns the
 * releases in deployment order. `bundleDocument` is the content ConfigMap's `values.json`
 * (docs/adr/20261202-registry-mirror-content.md).
 */
import { createHash } from "node:crypto"
import { Result, Schema } from "effect"
import { parse } from "yaml"
import { ArtifactError } from "./artifact"
import type { BundleLayout } from "./capabilities"

/** Relative path → text, with file modes (0.x writes values.yaml 0600, deploy.sh 0755). */
export interface BundleFiles {
  readonly files: Readonly<Record<string, string>>
  readonly modes: Readonly<Record<string, number>>
}

export interface BundleRelease {
  /** Helm release / component name. */
  readonly name: string
  readonly component: string
  /** Folder in the bundle: `<component>` (flat) or `NNN-<component>` (numbered). */
  readonly path: string
  readonly namespace: string | undefined
  readonly values: string | undefined
  /** 1.x only: the cluster-specific values layered over values.yaml. */
  readonly clusterValues: string | undefined
  /** `manifests/<file>` → text, sorted by file name. */
  readonly manifests: ReadonlyArray<readonly [string, string]>
}

export interface ParsedBundle {
  readonly layout: BundleLayout
  readonly releases: ReadonlyArray<BundleRelease>
  /** sha256 hex of every file checksums.txt lists, by path. */
  readonly checksums: Readonly<Record<string, string>>
}

/** A sanity bound on what is read at all; whether a bundle fits a content ConfigMap (1 MiB) is the caller's check. */
export const MAX_BUNDLE_BYTES = 16 * 1024 * 1024
export const MAX_BUNDLE_FILES = 2000

const fail = (message: string) => Result.fail(new ArtifactError({ reason: "AICRArtifactUnsupported", artifact: "Bundle", message }))

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

const sorted = <T>(xs: ReadonlyArray<readonly [string, T]>): Array<readonly [string, T]> => [...xs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** A path AICR could have written: relative, no `.`/`..`/empty segments, no backslashes or NULs. */
export const isSafePath = (p: string): boolean =>
  p !== "" && p.length <= 512 && !p.startsWith("/") && !/[\\\0]/u.test(p) && p.split("/").every((seg) => seg !== "" && seg !== "." && seg !== "..")

const BundleInfo = Schema.Struct({
  apiVersion: Schema.Literal("aicr.run/v1"),
  kind: Schema.Literal("BundleInfo"),
  layout: Schema.Struct({
    entrypoint: Schema.optionalKey(Schema.String),
    releases: Schema.Array(
      Schema.Struct({
        name: Schema.String,
        component: Schema.String,
        path: Schema.String,
        namespace: Schema.optionalKey(Schema.String),
        manifest: Schema.optionalKey(Schema.String),
      }),
    ).check(Schema.isMaxLength(512)),
  }),
})

/** `checksums.txt`: `<sha256hex>  <path>` per line (sha256sum -c). */
export const parseChecksums = (text: string): Result.Result<Record<string, string>, ArtifactError> => {
  const out: Record<string, string> = {}
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    const m = /^([0-9a-f]{64}) [ *](.+)$/u.exec(line)
    if (m === null || !isSafePath(m[2]!)) return fail(`checksums.txt has a malformed line: ${JSON.stringify(line.slice(0, 120))}`)
    out[m[2]!] = m[1]!
  }
  return Result.succeed(out)
}

const manifestsOf = (files: Readonly<Record<string, string>>, folder: string) =>
  sorted(
    Object.keys(files)
      .filter((p) => p.startsWith(`${folder}/manifests/`) && !p.slice(folder.length + 11).includes("/"))
      .map((p) => [p.slice(folder.length + 11), files[p]!] as const),
  )

/**
 * Checks a bundle tree against the recipe's deployment order (`order`) and returns its releases. The flat layout's
 * folders are the recipe's enabled components; the numbered layout's are listed by bundle-info.yaml.
 */
export const parseBundle = (
  b: BundleFiles,
  layout: BundleLayout,
  order: ReadonlyArray<{ readonly name: string; readonly namespace?: string | undefined }>,
): Result.Result<ParsedBundle, ArtifactError> => {
  const paths = Object.keys(b.files)
  if (paths.length > MAX_BUNDLE_FILES) return fail(`the bundle holds ${paths.length} files, more than ${MAX_BUNDLE_FILES}`)
  const bad = paths.find((p) => !isSafePath(p))
  if (bad !== undefined) return fail(`the bundle holds a file outside its directory: ${JSON.stringify(bad.slice(0, 120))}`)
  const size = paths.reduce((n, p) => n + Buffer.byteLength(b.files[p]!, "utf8"), 0)
  if (size > MAX_BUNDLE_BYTES) return fail(`the bundle is ${size} bytes, more than ${MAX_BUNDLE_BYTES}`)
  const sums = b.files["checksums.txt"]
  if (sums === undefined) return fail("the bundle has no checksums.txt")
  const checksums = parseChecksums(sums)
  if (Result.isFailure(checksums)) return Result.fail(checksums.failure)
  for (const [p, hex] of Object.entries(checksums.success)) {
    const text = b.files[p]
    if (text === undefined) return fail(`checksums.txt lists ${p}, which the bundle does not hold`)
    if (sha256(text) !== hex) return fail(`${p} does not match its checksum in checksums.txt`)
  }
  const namespaces = new Map(order.map((c) => [c.name, c.namespace]))
  if (layout === "flat") {
    const releases = order
      .filter((c) => paths.some((p) => p.startsWith(`${c.name}/`)))
      .map((c): BundleRelease => ({
        name: c.name,
        component: c.name,
        path: c.name,
        namespace: c.namespace,
        values: b.files[`${c.name}/values.yaml`],
        clusterValues: undefined,
        manifests: manifestsOf(b.files, c.name),
      }))
    const stray = paths.filter(
      (p) => p.includes("/") && !releases.some((r) => p.startsWith(`${r.path}/`)) && !p.startsWith("data/") && !p.startsWith("attestation/"),
    )
    if (stray.length > 0) return fail(`the bundle holds folders the recipe does not name: ${[...new Set(stray.map((p) => p.split("/")[0]))].join(", ")}`)
    if (releases.length === 0) return fail("the bundle holds no component folder")
    return Result.succeed({ layout, releases, checksums: checksums.success })
  }
  const infoText = b.files["bundle-info.yaml"]
  if (infoText === undefined) return fail("the bundle has no bundle-info.yaml (AICR 1.x layout)")
  let info: unknown
  try {
    info = parse(infoText, { maxAliasCount: 100 })
  } catch {
    return fail("bundle-info.yaml does not parse")
  }
  const decoded = Schema.decodeUnknownResult(BundleInfo)(info)
  if (Result.isFailure(decoded)) return fail(`bundle-info.yaml is not a BundleInfo aicr.run/v1: ${String(decoded.failure).split("\n")[0]}`)
  const releases: BundleRelease[] = []
  for (const r of decoded.success.layout.releases) {
    if (!/^\d{3}-[a-z0-9-]+$/u.test(r.path) || !paths.some((p) => p.startsWith(`${r.path}/`)))
      return fail(`bundle-info.yaml names release folder ${JSON.stringify(r.path)}, which the bundle does not hold as NNN-<component>`)
    releases.push({
      name: r.name,
      component: r.component,
      path: r.path,
      namespace: r.namespace ?? namespaces.get(r.component),
      values: b.files[`${r.path}/values.yaml`],
      clusterValues: b.files[`${r.path}/cluster-values.yaml`],
      manifests: manifestsOf(b.files, r.path),
    })
  }
  if (releases.length === 0) return fail("bundle-info.yaml lists no release")
  return Result.succeed({ layout, releases, checksums: checksums.success })
}

/** The content ConfigMap's `values.json`: the bundle as a file tree, keys sorted, deterministic. */
export const bundleDocument = (b: BundleFiles): string => {
  const files = Object.fromEntries(sorted(Object.entries(b.files)))
  const modes = Object.fromEntries(sorted(Object.entries(b.modes)))
  return JSON.stringify({ apiVersion: "operator.aicr.run/v1alpha1", kind: "Bundle", deployer: "helm", files, modes })
}

/** A file tree from tar entries (an OCI layer `aicr bundle -o oci://…` pushed, or a directory walk). */
export const bundleFromEntries = (entries: Iterable<{ readonly path: string; readonly mode?: number; readonly data: Uint8Array }>): BundleFiles => {
  const files: Record<string, string> = {}
  const modes: Record<string, number> = {}
  for (const e of entries) {
    const path = e.path.replace(/^(\.\/)+/u, "")
    if (path === "" || path.endsWith("/")) continue
    files[path] = Buffer.from(e.data).toString("utf8")
    modes[path] = (e.mode ?? 0o644) & 0o777
  }
  return { files, modes }
}

/**
 * The bundle as `aicr bundle -o oci://…` pushed it, made the tree `aicr bundle -o <dir>` writes. Two quirks of AICR
 * v0.10/v0.11 (pkg/oci, pkg/bundler/checksum) when the output is OCI: the layer also holds AICR's own OCI layout
 * store (`oci-layout/`), and checksums.txt names each file by its absolute path under the working directory
 * (`<workDir>/bundle/<path>`) instead of relative to the bundle. The store is dropped and that prefix removed; a
 * line with any other absolute path is left as it is (and then fails `parseBundle`'s checks).
 */
export const fromPushedBundle = (pushed: BundleFiles, workDir: string): BundleFiles => {
  const prefix = `${workDir.replace(/\/+$/u, "")}/bundle/`
  const keep = (p: string) => !p.startsWith("oci-layout/")
  const files = Object.fromEntries(Object.entries(pushed.files).filter(([p]) => keep(p)))
  const modes = Object.fromEntries(Object.entries(pushed.modes).filter(([p]) => keep(p)))
  const sums = files["checksums.txt"]
  if (sums !== undefined)
    files["checksums.txt"] = sums
      .split("\n")
      .map((l) =>
        l.replace(/^([0-9a-f]{64}) {2}(.+)$/u, (_m, hex: string, path: string) => `${hex}  ${path.startsWith(prefix) ? path.slice(prefix.length) : path}`),
      )
      .join("\n")
  return { files, modes }
}
