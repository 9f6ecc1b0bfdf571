import { describe, expect, it } from "vitest"
import { authFor, checkStatic, dockerConfigSecret, repoCredsSecret, type Secret, secretsCurrent } from "./secrets"

const registry = { host: "123456789012.dkr.ecr.us-east-1.amazonaws.com", prefix: "aicr/c1" }
const login = { username: "AWS", password: "tok-1", expiresAt: "2026-12-02T22:00:00Z" }
const at = (namespace: string, name: string) => ({ namespace, name })
const text = (s: Secret, k: string) => Buffer.from(s.data![k]!, "base64").toString("utf8")

describe("the Secrets", () => {
  it("writes the repo-creds Secret in the shape Argo CD 3.4 reads for the operator's native OCI sources", () => {
    const s = repoCredsSecret(registry, at("argocd", "aicr-registry"), login)
    expect(s.metadata.labels["argocd.argoproj.io/secret-type"]).toBe("repo-creds")
    expect(s.metadata.annotations["operator.aicr.run/token-expires-at"]).toBe(login.expiresAt)
    expect(s.type).toBe("Opaque")
    expect(Object.fromEntries(Object.keys(s.data).map((k) => [k, text(s, k)]))).toEqual({
      url: "oci://123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr/c1",
      type: "oci",
      username: "AWS",
      password: "tok-1",
    })
    expect(text(repoCredsSecret({ host: "127.0.0.1:5000", prefix: "p" }, at("argocd", "x"), login), "insecureOCIForceHttp")).toBe("true")
  })

  it("writes a kubernetes.io/dockerconfigjson Secret with a login for the registry host", () => {
    const s = dockerConfigSecret(registry, at("aicr-system", "d"), login)
    expect(s.type).toBe("kubernetes.io/dockerconfigjson")
    const auths = (JSON.parse(text(s, ".dockerconfigjson")) as { auths: Record<string, { auth: string }> }).auths
    expect(Object.keys(auths)).toEqual([registry.host])
    expect(Buffer.from(auths[registry.host]!.auth, "base64").toString()).toBe("AWS:tok-1")
    expect(authFor(s, registry.host)).toEqual({ ok: true, username: "AWS", password: "tok-1" })
  })

  it("knows when both Secrets hold what was written, and when one was edited or removed", () => {
    const r = repoCredsSecret(registry, at("argocd", "a"), login)
    const d = dockerConfigSecret(registry, at("aicr-system", "d"), login)
    expect(secretsCurrent(registry, r, d, login.expiresAt)).toBe(true)
    expect(secretsCurrent(registry, r, d, "2026-12-02T23:00:00Z")).toBe(false)
    expect(secretsCurrent(registry, undefined, d, login.expiresAt)).toBe(false)
    expect(secretsCurrent(registry, r, dockerConfigSecret(registry, at("aicr-system", "d"), { ...login, password: "other" }), login.expiresAt)).toBe(false)
    expect(secretsCurrent(registry, { ...r, data: { ...r.data, url: Buffer.from("elsewhere").toString("base64") } }, d, login.expiresAt)).toBe(false)
  })

  it.each([
    { name: "missing", secret: undefined, want: { _tag: "Missing" } },
    {
      name: "of the wrong type",
      secret: { ...dockerConfigSecret(registry, at("n", "d"), login), type: "Opaque" },
      want: { _tag: "Invalid", why: "its type is Opaque, not kubernetes.io/dockerconfigjson" },
    },
    {
      name: "for another host",
      secret: dockerConfigSecret({ host: "ghcr.io", prefix: "" }, at("n", "d"), login),
      want: { _tag: "Invalid", why: `its auths have no entry for ${registry.host}` },
    },
    {
      name: "not JSON",
      secret: { ...dockerConfigSecret(registry, at("n", "d"), login), data: { ".dockerconfigjson": Buffer.from("{").toString("base64") } },
      want: { _tag: "Invalid", why: "its .dockerconfigjson is not JSON" },
    },
    {
      name: "usable, with an expiry",
      secret: dockerConfigSecret(registry, at("n", "d"), login),
      want: { _tag: "Present", expiresAt: Date.parse(login.expiresAt) },
    },
  ])("static check: a Secret $name", ({ secret, want }) => {
    expect(checkStatic(secret as Secret | undefined, registry.host)).toEqual(want)
  })
})
