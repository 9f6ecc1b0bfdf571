import { describe, expect, it } from "vitest"
import { Authenticator, basicAuthorization, tokenUrl } from "./authenticator"
import { mergeScopes, parseWwwAuthenticate } from "./challenge"
import { dockerConfigCredentials, dockerConfigKey } from "./credentials"
import { scopesCover, TokenCache, tokenEntry, tokenKey } from "./token-cache"

describe("parseWwwAuthenticate", () => {
  it.each([
    {
      name: "a Docker token challenge yields realm, service and scope",
      header: 'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push"',
      want: [
        { scheme: "bearer", params: { realm: "https://auth.docker.io/token", service: "registry.docker.io", scope: "repository:samalba/my-app:pull,push" } },
      ],
    },
    { name: "a basic challenge yields its realm", header: 'Basic realm="aicr-registry"', want: [{ scheme: "basic", params: { realm: "aicr-registry" } }] },
    {
      name: "two challenges in one header are both returned, in order",
      header: 'Basic realm="a", Bearer realm="https://t/token",service="s"',
      want: [
        { scheme: "basic", params: { realm: "a" } },
        { scheme: "bearer", params: { realm: "https://t/token", service: "s" } },
      ],
    },
    {
      name: "scheme and parameter names are case-insensitive, values keep their case",
      header: 'BEARER Realm="https://T/Token", Service=Reg',
      want: [{ scheme: "bearer", params: { realm: "https://T/Token", service: "Reg" } }],
    },
    {
      name: "quoted values may contain commas, equals signs and escaped quotes",
      header: 'Bearer realm="https://t/token?a=b,c",error="insufficient_scope",error_description="say \\"hi\\""',
      want: [{ scheme: "bearer", params: { realm: "https://t/token?a=b,c", error: "insufficient_scope", error_description: 'say "hi"' } }],
    },
    { name: "a bare scheme has no parameters", header: "Negotiate", want: [{ scheme: "negotiate", params: {} }] },
    { name: "an empty header has no challenges", header: "", want: [] },
  ])("$name", ({ header, want }) => {
    expect(parseWwwAuthenticate(header)).toEqual(want)
  })
})

describe("mergeScopes", () => {
  it.each([
    { name: "actions on one repository are united and sorted", given: ["repository:a:push", "repository:a:pull"], want: ["repository:a:pull,push"] },
    {
      name: "different repositories stay apart, sorted",
      given: ["repository:b:pull", "repository:a:pull,push"],
      want: ["repository:a:pull,push", "repository:b:pull"],
    },
    { name: "a wildcard absorbs other actions", given: ["repository:a:pull", "repository:a:*"], want: ["repository:a:*"] },
    {
      name: "space-separated scopes in one string are split",
      given: ["repository:a:pull repository:b:pull"],
      want: ["repository:a:pull", "repository:b:pull"],
    },
    { name: "a registry host with a port in the resource name is kept whole", given: ["repository:h:5000/a:pull"], want: ["repository:h:5000/a:pull"] },
  ])("$name", ({ given, want }) => {
    expect(mergeScopes(given)).toEqual(want)
  })
})

describe("token cache", () => {
  it.each([
    {
      name: "expires_in counts from issued_at, minus the margin",
      res: { token: "t", expires_in: 300, issued_at: "1970-01-01T00:00:10Z" },
      now: 20_000,
      want: 10_000 + 300_000 - 10_000,
    },
    { name: "without expires_in a token lives the spec's 60 s", res: { token: "t" }, now: 0, want: 60_000 - 10_000 },
    {
      name: "an issued_at in the future (clock skew) counts from now",
      res: { access_token: "t", expires_in: 120, issued_at: "2100-01-01T00:00:00Z" },
      now: 5_000,
      want: 5_000 + 110_000,
    },
    { name: "a very short token keeps half its life", res: { token: "t", expires_in: 10 }, now: 0, want: 5_000 },
  ])("$name", ({ res, now, want }) => {
    expect(tokenEntry(res, now)?.expiresAt).toBe(want)
  })

  it("returns no entry for a response without a token", () => {
    expect(tokenEntry({ expires_in: 60 }, 0)).toBeUndefined()
  })

  it("serves a token until its expiry and drops it afterwards", () => {
    let now = 0
    const cache = new TokenCache(() => now)
    cache.set("k", { token: "t", expiresAt: 1_000 })
    now = 999
    expect(cache.get("k")?.token).toBe("t")
    now = 1_000
    expect(cache.get("k")).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it.each([
    { name: "pull,push covers pull", granted: ["repository:a:pull,push"], wanted: ["repository:a:pull"], want: true },
    { name: "a wildcard covers push", granted: ["repository:a:*"], wanted: ["repository:a:push"], want: true },
    { name: "pull does not cover push", granted: ["repository:a:pull"], wanted: ["repository:a:pull,push"], want: false },
    { name: "another repository is not covered", granted: ["repository:a:pull,push"], wanted: ["repository:b:pull"], want: false },
    { name: "every wanted scope must be covered", granted: ["repository:a:pull"], wanted: ["repository:a:pull", "repository:b:pull"], want: false },
  ])("decides scope coverage: $name", ({ granted, wanted, want }) => {
    expect(scopesCover(granted, wanted)).toBe(want)
  })

  it("serves a narrower scope set from a live token with wider scopes", () => {
    let now = 0
    const cache = new TokenCache(() => now)
    cache.set(tokenKey("r", "s", ["repository:a:pull,push"]), { token: "wide", expiresAt: 100 })
    expect(cache.covering("r", "s", ["repository:a:pull"])?.token).toBe("wide")
    expect(cache.covering("r2", "s", ["repository:a:pull"])).toBeUndefined()
    now = 100
    expect(cache.covering("r", "s", ["repository:a:pull"])).toBeUndefined()
  })

  it("keys tokens by registry, service and the scope set regardless of order", () => {
    expect(tokenKey("r", "s", ["b", "a"])).toBe(tokenKey("r", "s", ["a", "b"]))
    expect(tokenKey("r", "s", ["a"])).not.toBe(tokenKey("r2", "s", ["a"]))
  })
})

describe("Authenticator", () => {
  const creds = async (r: string) => (r === "reg" ? { username: "u", password: "p" } : undefined)

  it("sends nothing before the registry has challenged", async () => {
    const auth = new Authenticator(creds, async () => ({ token: "x" }))
    expect(await auth.authorize("reg", ["repository:a:pull"])).toBeUndefined()
  })

  it("answers a basic challenge with the provider's credentials and then sends them up front", async () => {
    const auth = new Authenticator(creds, async () => ({ token: "x" }))
    const header = await auth.challenge("reg", 'Basic realm="r"', [], undefined)
    expect(header).toBe(basicAuthorization({ username: "u", password: "p" }))
    expect(await auth.authorize("reg", [])).toBe(header)
  })

  it("gives up on a basic challenge when there are no credentials or they were just refused", async () => {
    const auth = new Authenticator(creds, async () => ({ token: "x" }))
    expect(await auth.challenge("other", 'Basic realm="r"', [], undefined)).toBeUndefined()
    const basic = basicAuthorization({ username: "u", password: "p" })
    expect(await auth.challenge("reg", 'Basic realm="r"', [], basic)).toBeUndefined()
  })

  it("fetches one token per scope set, with basic credentials and every scope, and reuses it until expiry", async () => {
    let now = 0
    const calls: { url: string; authorization: string | undefined }[] = []
    const auth = new Authenticator(
      creds,
      async (url, authorization) => {
        calls.push({ url, authorization })
        return { token: `t${calls.length}`, expires_in: 60 }
      },
      () => now,
    )
    const header = await auth.challenge("reg", 'Bearer realm="https://t/token",service="svc",scope="repository:a:pull"', ["repository:a:pull,push"], undefined)
    expect(header).toBe("Bearer t1")
    expect(calls[0]!.url).toBe(tokenUrl("https://t/token", "svc", ["repository:a:pull,push"]))
    expect(calls[0]!.authorization).toBe(basicAuthorization({ username: "u", password: "p" }))
    expect(await auth.authorize("reg", ["repository:a:pull,push"])).toBe("Bearer t1")
    expect(calls).toHaveLength(1)
    expect(await auth.authorize("reg", ["repository:b:pull"])).toBe("Bearer t2")
    now = 60_000
    expect(await auth.authorize("reg", ["repository:a:pull,push"])).toBe("Bearer t3")
  })

  it("shares one token request among concurrent callers", async () => {
    let calls = 0
    const auth = new Authenticator(creds, async () => {
      calls++
      await new Promise((r) => setTimeout(r, 10))
      return { token: "t" }
    })
    await auth.challenge("reg", 'Bearer realm="https://t/token",service="svc"', [], undefined)
    calls = 0
    await Promise.all([1, 2, 3].map(() => auth.authorize("reg", ["repository:z:pull"])))
    expect(calls).toBe(1)
  })

  it("drops a cached token the registry rejected and fetches a new one", async () => {
    let n = 0
    const auth = new Authenticator(creds, async () => ({ token: `t${++n}` }))
    const first = await auth.challenge("reg", 'Bearer realm="https://t/token",service="svc"', ["repository:a:pull"], undefined)
    const second = await auth.challenge("reg", 'Bearer realm="https://t/token",service="svc"', ["repository:a:pull"], first)
    expect([first, second]).toEqual(["Bearer t1", "Bearer t2"])
  })
})

describe("docker config credentials", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64")

  it.each([
    { name: "an inline auth entry is decoded", registry: "127.0.0.1:5000", want: { username: "u", password: "p:w" } },
    { name: "a key with scheme and path matches its host", registry: "reg.example:443", want: { username: "x", password: "y" } },
    { name: "Docker Hub's legacy key matches docker.io", registry: "docker.io", want: { username: "hub", password: "pw" } },
    {
      name: "a credHelpers entry runs its helper",
      registry: "123.dkr.ecr.us-east-1.amazonaws.com",
      want: { username: "AWS", password: "ecr-login:123.dkr.ecr.us-east-1.amazonaws.com" },
    },
    { name: "an unknown registry falls back to credsStore", registry: "other.io", want: { username: "AWS", password: "store:other.io" } },
  ])("$name", async ({ registry, want }) => {
    const provider = dockerConfigCredentials({
      config: {
        auths: {
          "127.0.0.1:5000": { auth: b64("u:p:w") },
          "https://reg.example:443/v2/": { username: "x", password: "y" },
          "https://index.docker.io/v1/": { auth: b64("hub:pw") },
        },
        credHelpers: { "123.dkr.ecr.us-east-1.amazonaws.com": "ecr-login" },
        credsStore: "store",
      },
      runHelper: async (helper, server) => ({ username: "AWS", password: `${helper}:${server}` }),
    })
    expect(await provider(registry)).toEqual(want)
  })

  it("treats a missing config file as no credentials", async () => {
    expect(await dockerConfigCredentials({ path: "/nonexistent/config.json" })("r")).toBeUndefined()
  })

  it.each([
    { key: "https://index.docker.io/v1/", want: "docker.io" },
    { key: "http://127.0.0.1:5000/", want: "127.0.0.1:5000" },
    { key: "ghcr.io", want: "ghcr.io" },
  ])("normalises the config key $key to $want", ({ key, want }) => {
    expect(dockerConfigKey(key)).toBe(want)
  })
})
