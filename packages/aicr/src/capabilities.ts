/**
 * What the pinned AICR can do, by version (aicr-cli.md, research/aicr-newer.md).
 *
 * - 0.x (v0.10, v0.11): apiVersion `aicr.nvidia.com/v1alpha1`, flat helm bundle (`<component>/values.yaml`), no
 *   `upgrade-check`, no readiness gates.
 * - 1.x: apiVersion `aicr.run/v1`, bundle folders `NNN-<component>/` with `bundle-info.yaml` and
 *   `cluster-values.yaml`, `upgrade-check`, readiness gates.
 *
 * The criteria values each version accepts are those `aicr recipe --help` lists for it (checked against the real
 * binaries in capabilities.test.ts); v0.10 does not know `b200`.
 */
import semver from "semver"

export type BundleLayout = "flat" | "numbered"

export interface CriteriaValues {
  readonly service: ReadonlyArray<string>
  readonly accelerator: ReadonlyArray<string>
  readonly intent: ReadonlyArray<string>
  readonly os: ReadonlyArray<string>
  readonly platform: ReadonlyArray<string>
}

export interface Capabilities {
  /** The version as AICR reports it, without a leading `v` (`aicr --version`, `metadata.version`). */
  readonly version: string
  readonly major: number
  /** apiVersion of Snapshot, RecipeResult and RecipeCriteria. */
  readonly apiVersion: "aicr.nvidia.com/v1alpha1" | "aicr.run/v1"
  /** Every apiVersion a RecipeResult of this version may carry (1.x: also the profile track `aicr.run/v1beta2`). */
  readonly recipeApiVersions: ReadonlyArray<string>
  readonly bundleLayout: BundleLayout
  readonly upgradeCheck: boolean
  readonly readinessGates: boolean
  readonly criteria: CriteriaValues
}

/** Release builds report `0.11.1`; image tags and chart values carry `v0.11.1`. */
export const normalizeVersion = (v: string): string | undefined => semver.valid(semver.coerce(v.trim(), { includePrerelease: true })?.version ?? "") ?? undefined

const CRITERIA_0_10: CriteriaValues = {
  service: ["aks", "eks", "gke", "kind", "oke"],
  accelerator: ["a100", "gb200", "h100", "l40"],
  intent: ["inference", "training"],
  os: ["amazonlinux", "cos", "rhel", "ubuntu"],
  platform: ["dynamo", "kubeflow"],
}
const CRITERIA_0_11: CriteriaValues = { ...CRITERIA_0_10, accelerator: ["a100", "b200", "gb200", "h100", "l40"] }
/** 1.x, from its CLI reference (research/aicr-newer.md §5.4); not checked against a binary (none is built here). */
const CRITERIA_1: CriteriaValues = {
  service: ["aks", "bcm", "eks", "generic", "gke", "k0s", "kind", "lke", "metal3", "ocp", "oke", "rke2"],
  accelerator: ["a100", "b200", "gb200", "gb300", "h100", "h200", "l40", "l40s", "rtx-pro-6000", "vr200"],
  intent: ["inference", "training"],
  os: ["amazonlinux", "cos", "ol", "rhel", "talos", "ubuntu"],
  platform: ["dynamo", "kubeflow", "nim", "runai", "slurm"],
}

/** Capabilities of a version, or undefined for a version string that does not parse. */
export const capabilitiesOf = (version: string): Capabilities | undefined => {
  const v = normalizeVersion(version)
  if (v === undefined) return undefined
  const major = semver.major(v)
  const modern = major >= 1
  return {
    version: v,
    major,
    apiVersion: modern ? "aicr.run/v1" : "aicr.nvidia.com/v1alpha1",
    recipeApiVersions: modern ? ["aicr.run/v1", "aicr.run/v1beta2"] : ["aicr.nvidia.com/v1alpha1"],
    bundleLayout: modern ? "numbered" : "flat",
    upgradeCheck: modern,
    readinessGates: modern,
    criteria: modern ? CRITERIA_1 : semver.lt(v, "0.11.0") ? CRITERIA_0_10 : CRITERIA_0_11,
  }
}

