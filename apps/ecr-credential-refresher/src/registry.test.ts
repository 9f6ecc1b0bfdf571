import { describe, expect, it } from "vitest"
import { isLoopback, parseEcrHost, parseRegistry, repoCredsUrl } from "./registry"

describe("registry", () => {
  it("parses oci://host/prefix and gives Argo CD's repo-creds url, a prefix of the operator's oci:// repoURLs", () => {
    const r = parseRegistry("oci://123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr/c1/")
    expect(r).toEqual({ host: "123456789012.dkr.ecr.us-east-1.amazonaws.com", prefix: "aicr/c1" })
    expect(repoCredsUrl(r)).toBe("oci://123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr/c1")
    expect(() => parseRegistry("https://x/y")).toThrow(/oci:\/\//u)
  })

  it.each([
    { host: "123456789012.dkr.ecr.us-east-1.amazonaws.com", want: { accountId: "123456789012", region: "us-east-1", partition: "aws" } },
    { host: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com", want: { accountId: "123456789012", region: "us-gov-west-1", partition: "aws" } },
    { host: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn", want: { accountId: "123456789012", region: "cn-north-1", partition: "aws-cn" } },
  ])("reads account, region and partition from $host", ({ host, want }) => {
    expect(parseEcrHost(host)).toEqual({ ok: true, ecr: { host, ...want } })
  })

  it.each([
    { host: "public.ecr.aws", why: /ECR Public/u },
    { host: "ghcr.io", why: /not a private ECR registry/u },
    { host: "127.0.0.1:5000", why: /not a private ECR registry/u },
  ])("refuses $host", ({ host, why }) => {
    const r = parseEcrHost(host)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.why).toMatch(why)
  })

  it("treats loopback registries as plain HTTP only", () => {
    expect(["127.0.0.1:5000", "localhost:1", "[::1]:5000"].every(isLoopback)).toBe(true)
    expect(["10.0.0.1:5000", "123456789012.dkr.ecr.us-east-1.amazonaws.com"].some(isLoopback)).toBe(false)
  })
})
