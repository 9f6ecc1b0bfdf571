/**
 * The real upstream charts: the packages in `third-party/charts/` (each built from its project's public source at the
 * version AICR's recipes pin; its README lists provenance), served by the local upstream in place of the stand-ins.
 *
 * Where the folder is: `$AICR_CHARTS_DIR`, else `$AICR_THIRD_PARTY_DIR/charts`, else `../shared/third-party/charts`
 * beside the checkout (the same third-party folder `hack/build-tools.sh` reads Argo CD's archive from).
 * `AICR_CHARTS_DIR=none` turns the real charts off. The CLI, and so `up`, serves them by default whenever the folder
 * is there (`upstreamCharts`).
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { parse } from "yaml"

/** One chart package of the folder, with the entry `helm repo index` wrote for it. */
export interface RealChart {
  readonly name: string
  readonly version: string
  /** `<name>-<version>.tgz`. */
  readonly file: string
  readonly tgz: Buffer
  /** `sha256:<hex>` of the archive, checked against the index's digest. */
  readonly digest: string
  /** The folder's `index.yaml` entry (the chart's own metadata: apiVersion, appVersion, dependencies, …). */
  readonly entry: Readonly<Record<string, unknown>>
}

const root = resolve(import.meta.dirname, "..", "..", "..")

/** The folder of real chart packages, or undefined when there is none (or `AICR_CHARTS_DIR=none`). */
export const realChartsDir = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  if (env.AICR_CHARTS_DIR === "none") return undefined
  const dir = env.AICR_CHARTS_DIR ?? join(env.AICR_THIRD_PARTY_DIR ?? join(root, "..", "shared", "third-party"), "charts")
  return existsSync(join(dir, "index.yaml")) ? dir : undefined
}

/**
 * Which charts the CLI (and so `up`) serves: `--charts` (`arg`), else `AICR_UPSTREAM_CHARTS`, else the real ones
 * whenever the folder is there and the stand-ins when it is not. A value other than `real` or `stand-in` is refused.
 */
export const upstreamCharts = (arg: string | undefined, env: NodeJS.ProcessEnv = process.env): "real" | "stand-in" => {
  const chosen = arg ?? env.AICR_UPSTREAM_CHARTS ?? (realChartsDir(env) !== undefined ? "real" : "stand-in")
  if (chosen !== "real" && chosen !== "stand-in") throw new Error(`--charts (AICR_UPSTREAM_CHARTS) must be real or stand-in, not ${chosen}`)
  return chosen
}

/**
 * Every package the folder's `index.yaml` lists, read and checked against the index's sha256 (a package that does not
 * match is an error, never served). Throws when the folder has no index.
 */
export const readRealCharts = (dir: string): readonly RealChart[] => {
  const index = parse(readFileSync(join(dir, "index.yaml"), "utf8")) as { entries?: Record<string, Array<Record<string, unknown>>> }
  const charts: RealChart[] = []
  for (const [name, entries] of Object.entries(index.entries ?? {})) {
    for (const entry of entries) {
      const version = String(entry.version)
      const file = (entry.urls as string[] | undefined)?.[0] ?? `${name}-${version}.tgz`
      const tgz = readFileSync(join(dir, file))
      const hex = createHash("sha256").update(tgz).digest("hex")
      if (hex !== entry.digest) throw new Error(`${join(dir, file)}: sha256 ${hex} is not the index's ${String(entry.digest)}`)
      charts.push({ name, version, file, tgz, digest: `sha256:${hex}`, entry })
    }
  }
  return charts
}

/** The real package of `chart` at `version`, if the folder has it. */
export const findRealChart = (charts: readonly RealChart[], chart: string, version: string): RealChart | undefined =>
  charts.find((c) => c.name === chart && c.version === version)
