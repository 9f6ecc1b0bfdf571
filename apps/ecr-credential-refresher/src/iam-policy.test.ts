// The chart's files/ecr-iam-policy.json: an envsubst template with exactly the EKS guide's placeholders, valid JSON
// once substituted, allowing the action the refresher calls on every resource (ECR requires "*" for it) and the
// push/pull actions only under the runtime prefix.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { GET_AUTHORIZATION_TOKEN } from "../src/ecr"

const template = readFileSync(new URL("../../../charts/aicr-operator/files/ecr-iam-policy.json", import.meta.url), "utf8")
const vars = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/c1", ACCOUNT_ID: "123456789012", REGION: "us-east-1" }
const envsubst = (t: string, v: Record<string, string>) => t.replace(/\$\{([A-Z_]+)\}/gu, (_, k: string) => v[k] ?? "")

interface Statement {
  Effect: string
  Action: string | string[]
  Resource: string | string[]
}
const policy = JSON.parse(envsubst(template, vars)) as { Version: string; Statement: Statement[] }
const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action])

describe("charts/aicr-operator/files/ecr-iam-policy.json", () => {
  it("uses exactly the placeholders the EKS guide substitutes", () => {
    expect([...new Set([...template.matchAll(/\$\{([A-Za-z_]+)\}/gu)].map((m) => m[1]))].sort()).toEqual(Object.keys(vars).sort())
  })

  it("parses as an IAM policy document once substituted", () => {
    expect(policy.Version).toBe("2012-10-17")
    expect(policy.Statement.every((s) => s.Effect === "Allow")).toBe(true)
  })

  it("allows the action the refresher calls, on every resource", () => {
    const mint = policy.Statement.filter((s) => actions(s).includes(GET_AUTHORIZATION_TOKEN))
    expect(mint).toEqual([expect.objectContaining({ Resource: "*" })])
  })

  it("allows create, push and pull only under repository/<prefix>/*", () => {
    const rest = policy.Statement.filter((s) => !actions(s).includes(GET_AUTHORIZATION_TOKEN))
    expect(rest.map((s) => s.Resource)).toEqual(["arn:aws:ecr:us-east-1:123456789012:repository/aicr/c1/*"])
    const allowed = rest.flatMap(actions)
    for (const a of [
      "ecr:CreateRepository",
      "ecr:InitiateLayerUpload",
      "ecr:UploadLayerPart",
      "ecr:CompleteLayerUpload",
      "ecr:PutImage",
      "ecr:BatchGetImage",
      "ecr:GetDownloadUrlForLayer",
      "ecr:BatchCheckLayerAvailability",
    ]) {
      expect(allowed).toContain(a)
    }
    expect(allowed.some((a) => a.includes("*") || /Delete|SetRepositoryPolicy|PutLifecyclePolicy/u.test(a))).toBe(false)
  })
})
