// What the planner's benchmarks plan from: the real `aicr` recipe and helm bundle of the EKS guide's runtime, as the
// resolver's content ConfigMap holds them, and the registry-mirror's `status.mirror` for them (digests stand in).
import { execFile } from "node:child_process"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import { sha256 } from "@aicr/api"
import { aicrBinary } from "@aicr/testing/harness"

const run = promisify(execFile)

export interface RealResolution {
  /** The bundle's file tree: relative path → text. */
  readonly files: Readonly<Record<string, string>>
  readonly components: ReadonlyArray<{ readonly name: string; readonly chart?: string; readonly version?: string }>
  /** The content ConfigMap's data (recipe.json, values.json). */
  readonly data: Readonly<Record<string, string>>
  /** status.mirror for an input: every component's chart (or wrapper) pinned by a stand-in digest. */
  readonly mirrorFor: (input: string) => { inputDigest: string; bundle: string; charts: { release: string; ref: string }[] }
}

export const realResolution = async (version: string, work: string): Promise<RealResolution> => {
  const env = { PATH: process.env.PATH, HOME: work }
  await run(
    aicrBinary(version),
    [
      "recipe",
      "--service",
      "eks",
      "--accelerator",
      "h100",
      "--os",
      "ubuntu",
      "--intent",
      "training",
      "--platform",
      "kubeflow",
      "-t",
      "json",
      "-o",
      join(work, "recipe.json"),
    ],
    { env },
  )
  await run(aicrBinary(version), ["bundle", "-r", join(work, "recipe.json"), "-o", join(work, "bundle"), "--deployer", "helm"], { env, cwd: work })
  const files: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e)
      if (statSync(p).isDirectory()) walk(p)
      else files[relative(join(work, "bundle"), p)] = readFileSync(p, "utf8")
    }
  }
  walk(join(work, "bundle"))
  const recipe = readFileSync(join(work, "recipe.json"), "utf8")
  const components = JSON.parse(recipe).componentRefs as RealResolution["components"]
  const prefix = "127.0.0.1:5000/aicr/cluster"
  return {
    files,
    components,
    data: { "recipe.json": recipe, "values.json": JSON.stringify({ kind: "Bundle", deployer: "helm", files }) },
    mirrorFor: (input) => ({
      inputDigest: input,
      bundle: `${prefix}/bundles/cluster:input-x@${sha256(input)}`,
      charts: components.map((c) => ({
        release: c.name,
        ref: c.chart
          ? `${prefix}/charts/${c.chart}:${c.version}@${sha256(`${c.chart}@${c.version}`)}`
          : `${prefix}/wrappers/${c.name}:0.0.0-aicr-1@${sha256(c.name)}`,
      })),
    }),
  }
}
