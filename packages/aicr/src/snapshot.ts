/**
 * `Snapshot`: what the AICR agent writes (aicr-cli.md §2.1–2.2), and the facts the operator derives from it the way
 * `aicr recipe --snapshot` does (§2.3): service, accelerator and OS, plus the GPU count and driver.
 */
import { Result, Schema } from "effect"
import type { Capabilities } from "./capabilities"
import { type ArtifactError, checkArtifact, decodeWith } from "./artifact"

const Scalar = Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Null])

export const Subtype = Schema.Struct({
  subtype: Schema.String,
  data: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Scalar))),
  context: Schema.optionalKey(Schema.Unknown),
})

export const Measurement = Schema.Struct({
  type: Schema.String,
  subtypes: Schema.optionalKey(Schema.NullOr(Schema.Array(Subtype))),
})

export const Snapshot = Schema.Struct({
  kind: Schema.Literal("Snapshot"),
  apiVersion: Schema.String,
  metadata: Schema.Struct({
    version: Schema.String,
    timestamp: Schema.optionalKey(Schema.String),
    "source-node": Schema.optionalKey(Schema.String),
  }),
  measurements: Schema.Array(Measurement).check(Schema.isMaxLength(64)),
})
export type Snapshot = typeof Snapshot.Type

export const parseSnapshot = (text: string, caps: Capabilities): Result.Result<Snapshot, ArtifactError> =>
  Result.flatMap(decodeWith(Snapshot, "Snapshot", text), (s) => {
    const bad = checkArtifact("Snapshot", s.apiVersion, s.metadata.version, caps)
    return bad === undefined ? Result.succeed(s) : Result.fail(bad)
  })

/** One reading, e.g. `reading(s, "GPU", "smi", "gpu.model")`. */
export const reading = (s: Snapshot, type: string, subtype: string, key: string): string | number | boolean | null | undefined =>
  s.measurements.find((m) => m.type === type)?.subtypes?.find((t) => t.subtype === subtype)?.data?.[key]

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined)

/** What the operator takes from a snapshot. Criteria fields are absent when the snapshot cannot tell (AICR's `any`). */
export interface SnapshotFacts {
  readonly node: string | undefined
  readonly service: string | undefined
  readonly accelerator: string | undefined
  readonly os: string | undefined
  readonly gpuCount: number
  readonly driver: string | undefined
  readonly osVersion: string | undefined
  readonly kernel: string | undefined
  readonly kubernetes: string | undefined
  /** Facts the recipe's constraints need and the snapshot lacks (`SnapshotIncomplete`). */
  readonly missing: ReadonlyArray<string>
}

const ACCELERATORS = ["gb200", "b200", "h100", "a100", "l40"] as const
const OSES: Readonly<Record<string, string>> = { ubuntu: "ubuntu", rhel: "rhel", cos: "cos", amazonlinux: "amazonlinux" }
const PROVIDERS: Readonly<Record<string, string>> = { aws: "eks", gce: "gke", azure: "aks", oci: "oke" }

/** Service the way AICR derives it (K8s.server.service, then the version marker), then the node's providerID. */
const serviceOf = (s: Snapshot): string | undefined => {
  const declared = str(reading(s, "K8s", "server", "service"))
  if (declared !== undefined) return declared
  const version = str(reading(s, "K8s", "server", "version")) ?? ""
  if (version.includes("-eks-")) return "eks"
  if (version.includes("-gke")) return "gke"
  if (version.includes("-aks")) return "aks"
  const provider = str(reading(s, "K8s", "node", "provider"))
  return provider === undefined ? undefined : (PROVIDERS[provider] ?? (Object.values(PROVIDERS).includes(provider) ? provider : undefined))
}

export const snapshotFacts = (s: Snapshot): SnapshotFacts => {
  const model = (str(reading(s, "GPU", "smi", "gpu.model")) ?? str(reading(s, "GPU", "smi", "model")) ?? "").toLowerCase()
  const gpuCount = Number(reading(s, "GPU", "smi", "gpu-count") ?? 0)
  const osId = str(reading(s, "OS", "release", "ID"))
  const kubernetes = str(reading(s, "K8s", "server", "version"))
  const kernel = str(reading(s, "OS", "sysctl", "/proc/sys/kernel/osrelease"))
  const osVersion = str(reading(s, "OS", "release", "VERSION_ID"))
  const missing = [
    ...(osId === undefined ? ["OS.release.ID"] : []),
    ...(osVersion === undefined ? ["OS.release.VERSION_ID"] : []),
    ...(kernel === undefined ? ["OS.sysctl./proc/sys/kernel/osrelease"] : []),
    ...(kubernetes === undefined ? ["K8s.server.version"] : []),
  ]
  return {
    node: s.metadata["source-node"],
    service: serviceOf(s),
    accelerator: ACCELERATORS.find((a) => model.includes(a)),
    os: osId === undefined ? undefined : OSES[osId.toLowerCase()],
    gpuCount: Number.isFinite(gpuCount) ? gpuCount : 0,
    driver: str(reading(s, "GPU", "smi", "driver")),
    osVersion,
    kernel,
    kubernetes,
    missing,
  }
}
