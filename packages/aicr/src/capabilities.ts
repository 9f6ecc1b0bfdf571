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
export const normalizeVersion = (v: string): string | undefined =>
  semver.valid(semver.coerce(v.trim(), { includePrerelease: true })?.version ?? "") ?? undefined

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

/** The AICR releases the operator supports (operator.md §2 support envelope, §4.3 step 3). */
export const SUPPORTED_AICR_RANGE = ">=1.0.0,<2.0.0"
/** The same range for `semver`: `<2.0.0-0` also keeps 2.0.0's prereleases out. */
const SUPPORTED_SEMVER_RANGE = ">=1.0.0 <2.0.0-0"

/**
 * What may pass the version gate besides a supported release. `prerelease` is `AllowPrereleaseAICR` (chart
 * `aicr.allowPrerelease`); `outsideRange` is the development allowance (chart `aicr.allowUnsupportedVersion`) that
 * keeps AICR 0.x builds usable on a development control plane: never a production setting.
 */
export interface VersionAllowances {
  readonly prerelease: boolean
  readonly outsideRange: boolean
}

export type VersionGate =
  | { readonly _tag: "Supported" }
  /** Outside the range, let through by the development allowance; the note says so wherever it is shown. */
  | { readonly _tag: "Allowed"; readonly note: string }
  /** `AICRVersionMismatch`, with the range or what to change in the message. */
  | { readonly _tag: "Refused"; readonly message: string }

/**
 * The version gate of operator.md §4.3 step 3 on the pinned AICR: a release within `>=1.0.0,<2.0.0`; a prerelease
 * only with the prerelease allowance; anything outside the range only with the development allowance.
 */
export const versionGate = (caps: Capabilities, allow: VersionAllowances): VersionGate => {
  const v = caps.version
  const pre = semver.prerelease(v) !== null
  if (pre && !allow.prerelease) {
    return {
      _tag: "Refused",
      message: `AICR ${v} is a prerelease: pin a release, or allow prereleases (chart aicr.allowPrerelease, resolver --allow-prerelease-aicr)`,
    }
  }
  if (semver.satisfies(v, SUPPORTED_SEMVER_RANGE, { includePrerelease: true })) return { _tag: "Supported" }
  if (allow.outsideRange)
    return {
      _tag: "Allowed",
      note: `AICR ${v} is outside the supported range ${SUPPORTED_AICR_RANGE}, allowed for development only (aicr.allowUnsupportedVersion)`,
    }
  return {
    _tag: "Refused",
    message: `AICR ${v} is outside the supported range ${SUPPORTED_AICR_RANGE}: pin a supported release (chart aicr.version); a development control plane may allow it with aicr.allowUnsupportedVersion (resolver --allow-unsupported-aicr)`,
  }
}
