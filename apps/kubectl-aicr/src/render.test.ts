import { describe, expect, it } from "vitest"
import { installRollout } from "@aicr/api/samples"
import { planFlags } from "./commands"
import { describeText, jumpOf, readAssessment } from "./render"

describe("jumpOf", () => {
  it.each([
    ["v25.3.0", "v25.10.1", "minor"],
    ["1.2.3", "2.0.0", "major"],
    ["1.2.3", "1.2.4", "patch"],
    ["1.2.3", "1.2.3", "same"],
    ["2.0.0", "1.9.0", "downgrade"],
    [undefined, "1.0.0", "new"],
    ["1.0.0", undefined, "removed"],
  ] as const)("%s → %s is %s", (from, to, want) => expect(jumpOf(from, to)).toBe(want))
})

describe("readAssessment", () => {
  it("reads components with versions, verdicts and manual steps, sorted by name", () => {
    const json = JSON.stringify({
      components: [
        {
          name: "kai-scheduler",
          from: "v0.9.1",
          to: "v0.10.0",
          verdict: "manual",
          steps: { argocd: [{ id: "s1", description: "Drain the queue", reason: "r" }] },
        },
        { name: "cert-manager", fromVersion: "v1.17.2", toVersion: "v1.17.4", verdict: "safe" },
        { verdict: "safe" },
      ],
    })
    expect(readAssessment(json)).toEqual({
      components: [
        { name: "cert-manager", from: "v1.17.2", to: "v1.17.4", verdict: "safe", jump: "patch" },
        { name: "kai-scheduler", from: "v0.9.1", to: "v0.10.0", verdict: "manual", jump: "minor", steps: ["Drain the queue"] },
      ],
    })
  })
  it("says so when there is no report or it is not JSON", () => {
    expect(readAssessment(undefined)).toEqual({ components: [], note: "no assessment report" })
    expect(readAssessment("{")).toEqual({ components: [], note: "assessment.json is not JSON" })
  })
})

describe("describeText", () => {
  it("shows identity, approval, steps, acknowledgements and assessment", () => {
    const base = installRollout(`sha256:${"3f2a9c1d0e4b".padEnd(64, "5")}`)
    const approval = {
      approvedBy: "approver",
      groups: ["aicr-approvers", "system:authenticated"],
      reason: "Maintenance window",
      approvedAt: "2026-12-02T10:01:00Z",
      expiresAt: "2026-12-02T12:00:00Z",
      toDigest: base.spec.toDigest,
    }
    const rollout = {
      ...base,
      spec: { ...base.spec, approval, acknowledgements: [{ step: "kai-scheduler", acknowledgedBy: "bob", at: "2026-12-02T10:05:00Z" }] },
      status: {
        approval: { approvedBy: "approver", pendingAcknowledgements: ["gpu-operator"] },
        steps: {
          total: 2,
          done: 1,
          current: "2/2 gpu-operator (Upgrade)",
          items: [{ index: 1, release: "kai-scheduler", namespace: "kai", action: "Upgrade" as const, verdict: "manual" as const, state: "Ready" as const }],
        },
      },
    }
    const text = describeText({
      rollout,
      assessment: { configMap: "aicr-content-1", components: [{ name: "kai-scheduler", from: "v0.9.1", to: "v0.10.0", verdict: "manual", jump: "minor" }] },
    })
    expect(text).toContain("Requested by:  alice")
    expect(text).toContain("Approved by: approver (groups aicr-approvers, system:authenticated)")
    expect(text).toContain("gpu-operator: waiting (kubectl aicr acknowledge cluster-3f2a9c1d0e4b-1 --step gpu-operator)")
    expect(text).toMatch(/1 +kai-scheduler +kai +Upgrade +manual +Ready/)
    expect(text).toMatch(/kai-scheduler +v0\.9\.1 +v0\.10\.0 +minor +manual/)
    expect(text).toContain("Steps: 1/2 done, current 2/2 gpu-operator (Upgrade)")
  })
})

describe("planFlags", () => {
  it("drops what the reproduction sets itself", () => {
    expect(planFlags(["bundle", "--recipe", "recipe.json", "--deployer", "helm", "--output=out", "--readiness-hooks"])).toEqual([
      "--deployer",
      "helm",
      "--readiness-hooks",
    ])
  })

  it("keeps the placement and overrides of the resolver's bundle Job argv, and drops where the recipe came from and the bundle went", () => {
    const job = [
      "bundle",
      "--recipe",
      "cm://aicr-system/aicr-recipe-0123456789ab",
      "--deployer",
      "helm",
      "--system-node-selector",
      "pool=system",
      "--system-node-toleration",
      "dedicated=system:NoSchedule",
      "--accelerated-node-selector",
      "nvidia.com/gpu.present=true",
      "--accelerated-node-toleration",
      "nvidia.com/gpu:NoSchedule",
      "--set",
      "gpu-operator:driver.version=580.105.08",
      "--output",
      "oci://127.0.0.1:5000/aicr/cluster/bundles/cluster:aicr-0123",
      "--plain-http",
      "--image-refs",
      "/dev/termination-log",
    ]
    expect(planFlags(job)).toEqual([
      "--deployer",
      "helm",
      "--system-node-selector",
      "pool=system",
      "--system-node-toleration",
      "dedicated=system:NoSchedule",
      "--accelerated-node-selector",
      "nvidia.com/gpu.present=true",
      "--accelerated-node-toleration",
      "nvidia.com/gpu:NoSchedule",
      "--set",
      "gpu-operator:driver.version=580.105.08",
    ])
    expect(planFlags(["bundle", "-r", "x", "--kubeconfig=/k", "--insecure-tls", "-o", "y", "--deployer=helm"])).toEqual(["--deployer=helm"])
  })
})

describe("describe before the step executor reports", () => {
  it("shows the planner's spec.steps as pending, and added components by their change", () => {
    const base = installRollout()
    const rollout = {
      ...base,
      spec: {
        ...base.spec,
        steps: [
          { release: "kai-scheduler", namespace: "kai-scheduler", action: "Upgrade" as const, verdict: "unknown" as const, from: "v0.12.17", to: "v0.13.0" },
        ],
      },
    }
    const assessment = readAssessment(
      JSON.stringify({
        components: [
          { component: "cert-manager", change: "added", to: "v1.17.2" },
          { component: "beta", change: "version", from: "0.17.2", to: "0.18.1", verdict: "manual", steps: [{ id: "x", description: "Rename the CRs" }] },
        ],
      }),
    )
    expect(assessment.components.map((c) => [c.name, c.verdict, c.steps])).toEqual([
      ["beta", "manual", ["Rename the CRs"]],
      ["cert-manager", "(added)", undefined],
    ])
    const text = describeText({ rollout, assessment })
    expect(text).toMatch(/1 +kai-scheduler +kai-scheduler +Upgrade +unknown +Pending +v0\.12\.17 → v0\.13\.0/)
  })
})

describe("describe: validation", () => {
  it("shows the gate's conditions with each check, the run, its counts and times, and the evidence", () => {
    const base = installRollout()
    const c = (type: string, status: "True" | "False", reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      observedGeneration: 1,
      lastTransitionTime: "2026-12-03T07:00:00Z",
    })
    const rollout = {
      ...base,
      status: {
        conditions: [
          c("ValidationReady", "True", "ValidationAvailable", "The validation launcher aicr-validation/aicr-validation is installed"),
          c(
            "Validated",
            "False",
            "ValidationFailed",
            "Deployment validation failed: operator-health: [NOT_FOUND] no gpu-operator pods found (run aicr-validate-0123456789ab; evidence r/aicr/cluster/evidence/cluster@sha256:abc)",
          ),
        ],
        validation: {
          runID: "aicr-validate-0123456789ab",
          result: "Failed" as const,
          checks: { passed: 2, failed: 1, skipped: 0, other: 0 },
          startedAt: "2026-12-03T07:00:00Z",
          completedAt: "2026-12-03T07:00:41Z",
          evidenceRef: "r/aicr/cluster/evidence/cluster@sha256:abc",
        },
      },
    }
    const text = describeText({ rollout, assessment: { components: [] } })
    expect(text).toContain("ValidationReady: True ValidationAvailable: The validation launcher aicr-validation/aicr-validation is installed")
    expect(text).toContain("Validated: False ValidationFailed: Deployment validation failed: operator-health: [NOT_FOUND] no gpu-operator pods found")
    expect(text).toContain(
      "run aicr-validate-0123456789ab: Failed (checks: 2 passed, 1 failed, 0 skipped, 0 other), started 2026-12-03T07:00:00Z, completed 2026-12-03T07:00:41Z",
    )
    expect(text).toContain(`evidence r/aicr/cluster/evidence/cluster@sha256:abc (kubectl aicr evidence ${base.metadata.name})`)
    expect(describeText({ rollout: base, assessment: { components: [] } })).toContain("Validation:\n  (not run yet)")
  })
})
