// The report shapes below are what the real aicr v0.11.1 writes (pkg/validator/ctrf/types.go; the kubelet int test
// and the validation gate's int test run the real CLI and validator); the Job is checked as the object it builds.
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { LABEL_JOB_KIND } from "./job"
import { type CtrfReport, parseCtrf, VALIDATE_INPUT_DIR, validateInput, validateJob, validateJobName, verdictOf } from "./validate"

const report = (tests: CtrfReport["results"]["tests"]): string =>
  JSON.stringify({
    reportFormat: "CTRF",
    specVersion: "0.0.1",
    timestamp: "2026-12-03T07:00:00Z",
    generatedBy: "aicr",
    results: {
      tool: { name: "aicr", version: "0.11.1" },
      summary: { tests: tests.length, passed: 0, failed: 0, skipped: 0, pending: 0, other: 0, start: 1, stop: 2 },
      tests,
    },
  })
const verdict = (tests: CtrfReport["results"]["tests"]) => {
  const r = parseCtrf(report(tests))
  if (Result.isFailure(r)) throw new Error(r.failure)
  return verdictOf(r.success)
}
const ran = (name: string, status: string, extra: Record<string, unknown> = {}) => ({
  name,
  status,
  duration: 412,
  suite: ["deployment"],
  stdout: [`checking ${name}`],
  ...extra,
})

describe("the deployment validation verdict: exit 0 is not a pass", () => {
  it("passes when every check ran and passed, skipped ones named", () => {
    const v = verdict([ran("operator-health", "passed"), ran("check-nvidia-smi", "skipped", { message: "no GPU nodes" })])
    expect(v).toMatchObject({ _tag: "Passed", checks: { passed: 1, failed: 0, skipped: 1, other: 0 } })
    expect(v.message).toBe("Deployment validation passed operator-health; skipped check-nvidia-smi: no GPU nodes")
  })

  const cases: Array<{ name: string; tests: CtrfReport["results"]["tests"]; reason: string; message: RegExp }> = [
    {
      name: "a failed check, with the validator's own message",
      tests: [ran("operator-health", "failed", { message: "[NOT_FOUND] no gpu-operator pods found" }), ran("gpu-operator-version", "passed")],
      reason: "ValidationFailed",
      message: /operator-health: \[NOT_FOUND\] no gpu-operator pods found/,
    },
    {
      name: "an 'other' check (a validator that timed out)",
      tests: [ran("operator-health", "other", { message: "timeout: validator did not complete within 2m0s" })],
      reason: "ValidationIncomplete",
      message: /did not complete.*operator-health: timeout: validator did not complete within 2m0s/,
    },
    {
      name: "a killed validator (exit 137 is 'other')",
      tests: [ran("operator-health", "passed"), ran("expected-resources", "other", { message: "Error" })],
      reason: "ValidationIncomplete",
      message: /expected-resources: Error/,
    },
    { name: "no check at all", tests: [], reason: "ValidationEmpty", message: /no check: the recipe declares no deployment check/ },
    {
      name: "every check skipped",
      tests: [ran("check-nvidia-smi", "skipped", { message: "no GPU nodes" })],
      reason: "ValidationEmpty",
      message: /every check was skipped \(check-nvidia-smi: no GPU nodes\)/,
    },
    {
      name: "a pass in 0 ms with no output (kwok's fake completion)",
      tests: [{ name: "operator-health", status: "passed", duration: 0, suite: ["deployment"] }],
      reason: "ValidationUnverified",
      message: /operator-health passed in 0 ms with no output/,
    },
  ]
  for (const c of cases) {
    it(`is not validated: ${c.name}`, () => {
      const v = verdict(c.tests)
      expect(v._tag).toBe("NotValidated")
      expect(v._tag === "NotValidated" && v.reason).toBe(c.reason)
      expect(v.message).toMatch(c.message)
    })
  }

  it("counts from the tests, not from the summary AICR wrote", () => {
    expect(verdict([ran("a", "failed"), ran("b", "passed")]).checks).toEqual({ passed: 1, failed: 1, skipped: 0, other: 0 })
  })

  it("refuses a report that is not CTRF JSON", () => {
    expect(parseCtrf("not json")).toEqual(Result.fail("the validation report is not JSON"))
    const r = parseCtrf(JSON.stringify({ reportFormat: "JUnit" }))
    expect(Result.isFailure(r) && r.failure).toMatch(/^the validation report is not a CTRF report/)
  })
})

describe("the validate Job", () => {
  const s = {
    image: "ghcr.io/nvidia/aicr:v0.11.1",
    namespace: "aicr-validation",
    serviceAccount: "aicr-validation",
    activeDeadlineSeconds: 1500,
    ttlSecondsAfterFinished: 3600,
  }
  const key = "sha256:" + "ab".repeat(32)

  it("runs aicr validate --phase deployment in-cluster under the launcher, from its input, report to its own ConfigMap, never failing on a failed check", () => {
    const job = validateJob(s, key) as unknown as {
      metadata: { name: string; namespace: string; labels: Record<string, string> }
      spec: {
        suspend: boolean
        activeDeadlineSeconds: number
        template: {
          spec: {
            serviceAccountName: string
            containers: Array<{ image: string; args: string[]; env: Array<{ name: string }> }>
            volumes: Array<{ configMap?: { name: string } }>
          }
        }
      }
    }
    expect(job.metadata).toMatchObject({ name: validateJobName(key), namespace: "aicr-validation", labels: { [LABEL_JOB_KIND]: "validate" } })
    expect(job.spec).toMatchObject({ suspend: true, activeDeadlineSeconds: 1500 })
    const pod = job.spec.template.spec
    expect(pod.serviceAccountName).toBe("aicr-validation")
    expect(pod.containers[0]!.image).toBe(s.image)
    expect(pod.containers[0]!.args).toEqual([
      "validate",
      "--phase",
      "deployment",
      "--recipe",
      `${VALIDATE_INPUT_DIR}/recipe.json`,
      "--snapshot",
      `${VALIDATE_INPUT_DIR}/snapshot.yaml`,
      "--namespace",
      "aicr-validation",
      "--fail-on-error=false",
      "--output",
      `cm://aicr-validation/${validateJobName(key)}`,
    ])
    // The engine ignores --kubeconfig and reads $KUBECONFIG: none is set, so it runs with the pod's own identity.
    expect(pod.containers[0]!.args.join(" ")).not.toContain("kubeconfig")
    expect(pod.containers[0]!.env.map((e) => e.name)).not.toContain("KUBECONFIG")
    expect(pod.volumes).toEqual([{ name: "input", configMap: { name: `${validateJobName(key)}-input` } }])
  })

  it("owns its input: the recipe and the snapshot", () => {
    const input = validateInput({ metadata: { name: "aicr-validate-x", namespace: "aicr-validation", uid: "u1" } }, key, {
      recipe: "{}",
      snapshot: "kind: Snapshot\n",
    })
    expect(input).toMatchObject({
      metadata: { name: "aicr-validate-x-input", ownerReferences: [{ kind: "Job", name: "aicr-validate-x", uid: "u1" }] },
      data: { "recipe.json": "{}", "snapshot.yaml": "kind: Snapshot\n" },
    })
  })
})
