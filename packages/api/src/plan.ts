/**
 * The plan document (`plan.json` in an immutable `aicr-plan-*` ConfigMap) and the two digests that name things:
 * `desiredStateDigest` (identity of the deployed state) and `inputDigest` (identity of the resolution inputs).
 * ADR 20261202-plan-document. A plan is always referenced by its desiredStateDigest, never by ConfigMap name.
 */
import { Result, Schema } from "effect"
import { AicrRef, Criteria, MAX_OVERRIDE_PATH_LENGTH, MAX_OVERRIDE_VALUE_BYTES, MAX_OVERRIDES, Override, Placement } from "./clusterruntime"
import {
  AicrToken,
  Digest,
  Dns1123Label,
  MAX_NODE_SELECTOR_ENTRIES,
  MAX_TOLERATIONS,
  NonNegativeInt,
  ObjectName,
  OciReference,
  text,
  Time,
  Uid,
} from "./common"
import { canonicalJson, digestOf } from "./digest"
import { CONTENT_KEYS, MAX_CONFIGMAP_BYTES, PLAN_DATA_KEY } from "./names"

export const MAX_RELEASES = 256
/** The longest `aicr bundle` argument a plan records: `component:dot.path=value` of an override at the CRD's limits. */
export const MAX_PLAN_FLAG_LENGTH = MAX_OVERRIDE_PATH_LENGTH + 1 + MAX_OVERRIDE_VALUE_BYTES
/**
 * The most arguments a bundle argv holds: a flag and its value per override, selector entry and toleration of both
 * node groups (the ClusterRuntime CRD's limits), plus the fixed ones (recipe, deployer, output, image refs).
 */
export const MAX_PLAN_FLAGS = 2 * (MAX_OVERRIDES + 2 * MAX_NODE_SELECTOR_ENTRIES + 2 * MAX_TOLERATIONS) + 16
const names = (max: number) => Schema.Array(Dns1123Label).check(Schema.isMaxLength(max))
const texts = (len: number, max: number) => Schema.Array(text(len)).check(Schema.isMaxLength(max))

/** An Argo CD `ignoreDifferences` entry: a comparison exception derived from the plan. */
export const IgnoreDifference = Schema.Struct({
  group: Schema.optionalKey(text(253)),
  kind: text(63, 1),
  name: Schema.optionalKey(text(253)),
  namespace: Schema.optionalKey(text(63)),
  jsonPointers: Schema.optionalKey(texts(512, 16)),
  jqPathExpressions: Schema.optionalKey(texts(512, 16)),
  managedFieldsManagers: Schema.optionalKey(texts(128, 16)),
})

export const PlanRelease = Schema.Struct({
  name: Dns1123Label,
  namespace: Dns1123Label,
  /** Position in deployment order (0-based; Kahn's sort of dependsOn, ties by name). */
  order: NonNegativeInt(MAX_RELEASES),
  dependsOn: names(64),
  /** `<registry>/charts/<name>` or `<registry>/wrappers/<name>`, pinned by `digest`. */
  chart: Schema.Struct({ ref: OciReference, digest: Digest }),
  upstream: Schema.optionalKey(Schema.Struct({ repo: text(512), chart: text(253), version: text(128) })),
  /** Digest of the release's merged values (values.yaml ⊕ cluster-values.yaml) as stored in `values.json`. */
  values: Schema.Struct({ digest: Digest }),
  readinessGate: Schema.optionalKey(
    Schema.Struct({
      image: OciReference,
      timeoutSeconds: Schema.optionalKey(
        NonNegativeInt(86_400).annotate({
          description: "The gate Job's --max-wait in seconds; the step's deadline adds AICR's 5 m buffer (absent: AICR's default 90 m).",
        }),
      ),
    }).annotate({ description: "This release is an AICR readiness gate (1.x `NNN-<component>-readiness`): its step is ready once the gate Job completed." }),
  ),
  ignoreDifferences: Schema.optionalKey(Schema.Array(IgnoreDifference).check(Schema.isMaxLength(32))),
})
export type PlanRelease = typeof PlanRelease.Type

export const PlanEngine = Schema.Struct({ kind: Schema.Literal("argocd"), project: ObjectName })

export const Plan = Schema.Struct({
  apiVersion: Schema.Literal("operator.aicr.run/v1alpha1"),
  kind: Schema.Literal("Plan"),
  runtimeUID: Uid,
  createdAt: Time,
  /** How the plan was composed: from a resolution, from a pin (an earlier plan), or rebuilt from live objects. */
  source: Schema.Literals(["Resolution", "Pin", "Adoption"]),
  desiredStateDigest: Digest,
  inputDigest: Schema.optionalKey(Digest),
  aicr: Schema.optionalKey(AicrRef),
  /** The exact `aicr bundle` argv, for `kubectl aicr reproduce`. */
  flags: texts(MAX_PLAN_FLAG_LENGTH, MAX_PLAN_FLAGS),
  bundle: Schema.optionalKey(Schema.Struct({ ref: OciReference })),
  engine: PlanEngine,
  releases: Schema.Array(PlanRelease).check(Schema.isMaxLength(MAX_RELEASES)),
  content: Schema.Array(Schema.Struct({ key: Schema.Literals(CONTENT_KEYS), configMap: ObjectName, digest: Digest })).check(
    Schema.isMaxLength(CONTENT_KEYS.length),
  ),
})
export type Plan = typeof Plan.Type

/** The recipe a plan recorded among its content (`recipe.json`: its ConfigMap and digest), if any: what deployment validation and upgrade-check read. */
export const recipeContentOf = (p: Plan) => p.content.find((c) => c.key === "recipe.json")

/** What desiredStateDigest covers: exactly what is written into the engine, nothing that varies without changing it. */
export const desiredStateOf = (plan: Pick<Plan, "engine" | "releases">) => ({
  engine: { kind: plan.engine.kind, project: plan.engine.project },
  releases: [...plan.releases]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((r) => ({
      name: r.name,
      namespace: r.namespace,
      chart: { ref: r.chart.ref, digest: r.chart.digest },
      values: r.values.digest,
      ignoreDifferences: r.ignoreDifferences ?? [],
    })),
})

/** `sha256:` over the canonical JSON of `desiredStateOf(plan)`: ignores timestamps, ConfigMap names, order, inputs. */
export const desiredStateDigest = (plan: Pick<Plan, "engine" | "releases">): string => digestOf(desiredStateOf(plan))

/** The resolution inputs: runtime spec fields that feed AICR, the discovered facts and the pinned AICR. */
export const ResolutionInputs = Schema.Struct({
  aicr: AicrRef,
  intent: Schema.optionalKey(AicrToken),
  platform: Schema.optionalKey(AicrToken),
  criteria: Schema.optionalKey(Criteria),
  placement: Schema.optionalKey(Placement),
  overrides: Schema.optionalKey(Schema.Array(Override)),
  discovered: Schema.Struct({
    criteria: Schema.optionalKey(Criteria),
    acceleratedNodes: Schema.optionalKey(NonNegativeInt(100_000)),
  }),
})
export type ResolutionInputs = typeof ResolutionInputs.Type

/** `sha256:` over canonical JSON of the inputs; overrides are ordered by path (paths are unique). */
export const inputDigest = (inputs: ResolutionInputs): string =>
  digestOf({
    ...inputs,
    overrides: inputs.overrides === undefined ? undefined : [...inputs.overrides].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
  })

/** Serialises a plan for its ConfigMap: canonical JSON, so equal plans are byte-identical. */
export const encodePlan = (plan: Plan): string => canonicalJson(plan)

const decodePlan = Schema.decodeUnknownResult(Plan)

/**
 * Reads `plan.json` and refuses a malformed or untrusted plan (reason `PlanUnreadable`): too large, not JSON, not
 * the schema, duplicate or dangling release names, or a desiredStateDigest that does not match its releases.
 */
export const readPlan = (json: string): Result.Result<Plan, string> => {
  const bytes = new TextEncoder().encode(json).length
  if (bytes > MAX_CONFIGMAP_BYTES) return Result.fail(`plan.json is ${bytes} bytes, more than ${MAX_CONFIGMAP_BYTES}`)
  let raw: unknown
  try {
    raw = JSON.parse(json)
  } catch {
    return Result.fail("plan.json is not JSON")
  }
  const decoded = decodePlan(raw)
  if (Result.isFailure(decoded)) return Result.fail(`plan.json does not match the Plan schema: ${decoded.failure.message}`)
  const plan = decoded.success
  const seen = new Set<string>()
  for (const r of plan.releases) {
    if (seen.has(r.name)) return Result.fail(`plan.json lists release ${r.name} twice`)
    seen.add(r.name)
  }
  const dangling = plan.releases.flatMap((r) => r.dependsOn.filter((d) => !seen.has(d)).map((d) => `${r.name}→${d}`))
  if (dangling.length > 0) return Result.fail(`plan.json has dependencies on unknown releases: ${dangling.sort().join(", ")}`)
  const want = desiredStateDigest(plan)
  if (want !== plan.desiredStateDigest) return Result.fail(`plan.json desiredStateDigest ${plan.desiredStateDigest} does not match its releases (${want})`)
  return Result.succeed(plan)
}

/**
 * The plan a plan ConfigMap holds (its `data`), read with `readPlan` and verified against the digest the ConfigMap is
 * named or annotated by: the one reading of plan ConfigMaps (planner, step-executor, kubectl aicr). The failure says
 * what is wrong with the ConfigMap, to be prefixed with its name.
 */
export const readPlanData = (data: Readonly<Record<string, string>> | undefined, digest: string): Result.Result<Plan, string> => {
  const text = data?.[PLAN_DATA_KEY]
  if (text === undefined) return Result.fail(`it has no ${PLAN_DATA_KEY}`)
  const read = readPlan(text)
  if (Result.isFailure(read)) return read
  if (read.success.desiredStateDigest !== digest) return Result.fail(`it holds plan ${read.success.desiredStateDigest}, not ${digest}`)
  return read
}
