/**
 * `aicr validate --phase deployment` as the operator runs it (operator.md §4.9; research/aicr-validate.md): a Job from
 * the pinned AICR image under the validation launcher's ServiceAccount, in-cluster (the engine ignores
 * `--kubeconfig` and reads `$KUBECONFIG` or the in-cluster config), with the plan's recipe and a fresh snapshot
 * mounted from a Job-owned ConfigMap, `--fail-on-error=false` so a run that wrote its report always completes, and the
 * CTRF report written through AICR's own `cm://` writer into the Job's output ConfigMap (key `snapshot.json`).
 *
 * The CLI's exit code is not the verdict: a validator that timed out or crashed is "other" and exits 0. `verdictOf`
 * reads the report and refuses everything but a real pass: a failed check, an "other" check, no check run, and a
 * "passed" check with zero duration and no output (kwok's fake completion) are each not validated.
 *
 * Pure: these functions build objects and read reports; the validation gate creates and reads them.
 */
import { Result, Schema } from "effect"
import { type AicrJobSettings, type AicrObject, jobName, jobObject, labelsOf, ownedBy } from "./job"

/** Where the validate Job finds the recipe and the snapshot. */
export const VALIDATE_INPUT_DIR = "/var/run/aicr/validate"

export const validateJobName = (key: string): string => jobName("validate", key)

export interface ValidateSettings extends Pick<AicrJobSettings, "image" | "ttlSecondsAfterFinished"> {
  /** The validation namespace (`aicr-validation`): the Job, its input and AICR's validator Jobs run there. */
  readonly namespace: string
  /** The validation launcher's ServiceAccount (`aicr-validation`). */
  readonly serviceAccount: string
  /** The whole run's deadline (AICR has none of its own: the deployment phase alone may take ~21 minutes). */
  readonly activeDeadlineSeconds: number
}

/** The snapshot's file in the input (YAML; AICR's snapshot writer's default format, and JSON reads as YAML too). */
export const VALIDATE_SNAPSHOT_FILE = "snapshot.yaml"

export const validateArgs = (namespace: string, out: string): string[] => [
  "validate",
  "--phase",
  "deployment",
  "--recipe",
  `${VALIDATE_INPUT_DIR}/recipe.json`,
  "--snapshot",
  `${VALIDATE_INPUT_DIR}/${VALIDATE_SNAPSHOT_FILE}`,
  "--namespace",
  namespace,
  "--fail-on-error=false",
  "--output",
  out,
]

/** The validate Job: suspended like every AICR Job, its input ConfigMap mounted read-only, no retries, own deadline. */
export const validateJob = (s: ValidateSettings, key: string): AicrObject => {
  const name = validateJobName(key)
  return jobObject(
    { ...s, discoveryNamespace: s.namespace, agentServiceAccount: s.serviceAccount },
    {
      kind: "validate",
      name,
      namespace: s.namespace,
      inputDigest: key,
      serviceAccount: s.serviceAccount,
      args: validateArgs(s.namespace, `cm://${s.namespace}/${name}`),
      volumes: [{ name: "input", mountPath: VALIDATE_INPUT_DIR, source: { configMap: { name: `${name}-input` } } }],
    },
  )
}

/** The Job-owned input: the plan's recipe and the fresh snapshot, in the Job's namespace. */
export const validateInput = (
  job: { readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string } },
  key: string,
  input: { readonly recipe: string; readonly snapshot: string },
): AicrObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: `${job.metadata.name}-input`, namespace: job.metadata.namespace, labels: labelsOf("validate", key), ownerReferences: ownedBy(job) },
  data: { "recipe.json": input.recipe, [VALIDATE_SNAPSHOT_FILE]: input.snapshot },
})

// ---- the CTRF report -------------------------------------------------------------------------------------------

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const CtrfTest = Schema.Struct({
  name: Schema.String,
  status: Schema.String,
  duration: Schema.optionalKey(Schema.Number),
  suite: Schema.optionalKey(Schema.Array(Schema.String)),
  message: Schema.optionalKey(Schema.String),
  stdout: Schema.optionalKey(Schema.Array(Schema.String)),
})
export type CtrfTest = typeof CtrfTest.Type

export const CtrfReport = Schema.Struct({
  reportFormat: Schema.Literal("CTRF"),
  specVersion: Schema.optionalKey(Schema.String),
  timestamp: Schema.optionalKey(Schema.String),
  generatedBy: Schema.optionalKey(Schema.String),
  results: Schema.Struct({
    tool: Schema.Struct({ name: Schema.String, version: Schema.optionalKey(Schema.String) }),
    summary: Schema.Struct({
      tests: Count,
      passed: Count,
      failed: Count,
      skipped: Count,
      pending: Schema.optionalKey(Count),
      other: Count,
      start: Schema.optionalKey(Schema.Number),
      stop: Schema.optionalKey(Schema.Number),
    }),
    tests: Schema.Array(CtrfTest),
  }),
})
export type CtrfReport = typeof CtrfReport.Type

const decodeReport = Schema.decodeUnknownResult(CtrfReport)

/** Reads the report AICR wrote; a report that is not CTRF JSON is refused with why. */
export const parseCtrf = (text: string): Result.Result<CtrfReport, string> => {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return Result.fail("the validation report is not JSON")
  }
  const r = decodeReport(raw)
  return Result.isFailure(r) ? Result.fail(`the validation report is not a CTRF report: ${r.failure.message}`) : Result.succeed(r.success)
}

/** Why a report does not validate the rollout; each is its own `Validated=False` reason. */
export type NotValidatedReason = "ValidationFailed" | "ValidationIncomplete" | "ValidationEmpty" | "ValidationUnverified"

export interface CheckCounts {
  readonly passed: number
  readonly failed: number
  readonly skipped: number
  readonly other: number
}

export type ValidationVerdict =
  | { readonly _tag: "Passed"; readonly checks: CheckCounts; readonly message: string }
  | { readonly _tag: "NotValidated"; readonly reason: NotValidatedReason; readonly checks: CheckCounts; readonly message: string }

const oneLine = (s: string): string => s.replace(/\s+/gu, " ").trim().slice(0, 300)
const said = (t: CtrfTest): string => (t.message !== undefined && t.message.trim() !== "" ? `: ${oneLine(t.message)}` : "")
const listed = (ts: ReadonlyArray<CtrfTest>): string => ts.map((t) => `${t.name}${said(t)}`).join("; ")

/** A "passed" test that cannot have run: zero duration and no output at all (kwok's fake completion). */
export const looksFaked = (t: CtrfTest): boolean => (t.duration ?? 0) === 0 && (t.stdout ?? []).every((l) => l.trim() === "") && (t.message ?? "").trim() === ""

/**
 * The verdict on a deployment-phase report, counted from the tests themselves (not the summary): failed checks,
 * then "other" ones (timeout, crash, never scheduled), then faked passes, then no check run at all; else passed.
 */
export const verdictOf = (report: CtrfReport): ValidationVerdict => {
  const tests = report.results.tests
  const by = (s: string) => tests.filter((t) => t.status === s)
  const [passed, failed, skipped] = [by("passed"), by("failed"), by("skipped")]
  const other = tests.filter((t) => !["passed", "failed", "skipped"].includes(t.status))
  const checks: CheckCounts = { passed: passed.length, failed: failed.length, skipped: skipped.length, other: other.length }
  if (failed.length > 0) return { _tag: "NotValidated", reason: "ValidationFailed", checks, message: `Deployment validation failed: ${listed(failed)}` }
  if (other.length > 0) {
    return {
      _tag: "NotValidated",
      reason: "ValidationIncomplete",
      checks,
      message: `Deployment validation did not complete (timeout, crash or never ran): ${listed(other)}`,
    }
  }
  const faked = passed.filter(looksFaked)
  if (faked.length > 0) {
    return {
      _tag: "NotValidated",
      reason: "ValidationUnverified",
      checks,
      message: `Deployment validation reported ${faked.map((t) => t.name).join(", ")} passed in 0 ms with no output: the validator cannot have run`,
    }
  }
  if (passed.length === 0) {
    const why = tests.length === 0 ? "the recipe declares no deployment check" : `every check was skipped (${listed(skipped)})`
    return { _tag: "NotValidated", reason: "ValidationEmpty", checks, message: `Deployment validation ran no check: ${why}` }
  }
  const skippedText = skipped.length > 0 ? `; skipped ${listed(skipped)}` : ""
  return { _tag: "Passed", checks, message: `Deployment validation passed ${passed.map((t) => t.name).join(", ")}${skippedText}` }
}
