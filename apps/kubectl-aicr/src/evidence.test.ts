import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { evidenceText, readEvidence } from "./evidence"

const ctrf = Buffer.from(
  JSON.stringify({
    reportFormat: "CTRF",
    results: {
      tests: [
        { name: "operator-health", status: "passed", duration: 412, stdout: ["gpu-operator-7c9d: Running"] },
        { name: "check-nvidia-smi", status: "skipped", duration: 3, message: "no GPU nodes" },
      ],
    },
  }),
)
const binding = (digest: string) =>
  Buffer.from(
    JSON.stringify({
      rollout: { name: "cluster-3f2a9c1d0e4b-1", toDigest: "sha256:3f2a" },
      plan: { desiredStateDigest: "sha256:3f2a" },
      bundle: { ref: "r/aicr/cluster/bundles/cluster:input-1", digest: "sha256:b" },
      approval: {
        approvedBy: "approver",
        groups: ["aicr-approvers"],
        reason: "first install",
        approvedAt: "2026-12-03T07:00:00Z",
        expiresAt: "2026-12-03T09:00:00Z",
      },
      aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" },
      validators: ["ghcr.io/nvidia/aicr-validators/deployment:v0.11.1"],
      run: {
        id: "aicr-validate-0123456789ab",
        result: "Passed",
        reason: "ValidationPassed",
        startedAt: "2026-12-03T07:10:00Z",
        completedAt: "2026-12-03T07:10:40Z",
      },
      report: { digest },
    }),
  )
const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`

describe("kubectl aicr evidence", () => {
  it("prints the binding, that the report matches it, the signature state and every check with its output", () => {
    const doc = readEvidence({ ref: "r/aicr/cluster/evidence/cluster@sha256:e", files: { "binding.json": binding(sha(ctrf)), "ctrf.json": ctrf } })
    expect(doc).toMatchObject({ reportMatches: true, signed: false })
    const text = evidenceText(doc)
    expect(text).toContain("Approved by:   approver (groups aicr-approvers) at 2026-12-03T07:00:00Z, until 2026-12-03T09:00:00Z: first install")
    expect(text).toContain("Report:        ctrf.json is the report the binding names (sha256 matches)")
    expect(text).toContain("Signature:     none (unsigned evidence)")
    expect(text).toContain("  operator-health: passed (412 ms)\n    gpu-operator-7c9d: Running")
    expect(text).toContain("  check-nvidia-smi: skipped (3 ms): no GPU nodes")
  })

  it("says when the report was altered after the binding was written, and when a signature is present", () => {
    const tampered = Buffer.from(ctrf.toString("utf8").replace('"passed"', '"failed"'))
    const doc = readEvidence({ ref: "x", files: { "binding.json": binding(sha(ctrf)), "ctrf.json": tampered, "binding.json.sig": Buffer.from("MEUC") } })
    expect(doc).toMatchObject({ reportMatches: false, signed: true })
    expect(evidenceText(doc)).toContain("MISMATCH: ctrf.json is not the report the binding names")
  })
})
