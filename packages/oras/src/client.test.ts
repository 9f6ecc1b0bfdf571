// Client behaviour a real registry will not show on demand, against an in-process stub: throttling and
// Retry-After, dropped connections, a Docker token server, cross-origin redirects, a registry with the v1.1
// referrers API, and registries that lie about digests. The same operations run against a real registry in
// test/*.int.test.ts.
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { reply, type StubHandler, startStub, type StubServer } from "../test/support/stub-server"
import { OciClient, type OciClientOptions } from "./client"
import { digestOf } from "./digest"
import { Oras, toEffectClient } from "./effect"
import { MediaType } from "./media-types"
import { failure } from "../test/support/fixtures"

const stubs: StubServer[] = []
const clients: OciClient[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
  await Promise.all(stubs.splice(0).map((s) => s.close()))
})

const stub = async (handler: StubHandler) => {
  const s = await startStub(handler)
  stubs.push(s)
  return s
}
const client = (o: OciClientOptions = {}) => {
  const c = new OciClient({ sleep: async () => {}, ...o })
  clients.push(c)
  return c
}

const manifestBytes = Buffer.from(
  JSON.stringify({ schemaVersion: 2, mediaType: MediaType.OciManifest, config: { mediaType: "a", digest: digestOf("{}"), size: 2 }, layers: [] }),
)
const manifestDigest = digestOf(manifestBytes)
const okHead = { "docker-content-digest": manifestDigest, "content-type": MediaType.OciManifest }

describe("retries", () => {
  it("retries a 503 after the registry's Retry-After and then succeeds", async () => {
    let n = 0
    const s = await stub((_req, res) =>
      n++ === 0 ? reply(res, 503, { "retry-after": "2" }) : reply(res, 200, { ...okHead, "content-length": String(manifestBytes.length) }),
    )
    const sleeps: number[] = []
    const c = client({ sleep: async (ms) => void sleeps.push(ms) })
    const d = await c.resolve(`${s.address}/a:v1`)
    expect(d.digest).toBe(manifestDigest)
    expect(sleeps).toEqual([2_000])
    expect(s.requests).toHaveLength(2)
  })

  it("gives up after the attempt budget with Unavailable carrying the attempt count", async () => {
    const s = await stub((_req, res) => reply(res, 429, {}, '{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}'))
    const sleeps: number[] = []
    const e = await failure(
      client({ retry: { maxAttempts: 3, baseDelayMs: 100 }, random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) }).tags(`${s.address}/a`),
    )
    expect(e.reason).toEqual({ _tag: "Unavailable", attempts: 3 })
    expect(e).toMatchObject({ status: 429, code: "TOOMANYREQUESTS", registry: s.address, repository: "a" })
    expect(sleeps).toEqual([50, 100])
    expect(s.requests).toHaveLength(3)
  })

  it("retries a dropped connection", async () => {
    let n = 0
    const s = await stub((_req, res) => {
      if (n++ === 0) res.socket?.destroy()
      else reply(res, 200, { "content-type": "application/json" }, '{"name":"a","tags":["v1"]}')
    })
    expect(await client().tags(`${s.address}/a`)).toEqual(["v1"])
  })

  it("reports an unreachable registry as Unavailable", async () => {
    const s = await stub((_req, res) => reply(res, 200))
    const address = s.address
    await s.close()
    stubs.length = 0
    const e = await failure(client({ retry: { maxAttempts: 2 } }).resolve(`${address}/a:v1`))
    expect(e.reason).toEqual({ _tag: "Unavailable", attempts: 2 })
  })

  it.each([
    { status: 404, body: '{"errors":[{"code":"MANIFEST_UNKNOWN"}]}', want: "NotFound" },
    { status: 403, body: '{"errors":[{"code":"DENIED"}]}', want: "Denied" },
    { status: 400, body: '{"errors":[{"code":"MANIFEST_INVALID"}]}', want: "Invalid" },
  ])("does not retry HTTP $status and maps it to $want", async ({ status, body, want }) => {
    const s = await stub((_req, res) => reply(res, status, { "content-type": "application/json" }, body))
    const e = await failure(client().fetchManifest(`${s.address}/a:v1`))
    expect(e.reason._tag).toBe(want)
    expect(e.reference).toBe("v1")
    expect(s.requests).toHaveLength(1)
  })
})

describe("pagination", () => {
  it("follows Link headers page by page with n and last, as a conforming registry sends them", async () => {
    const all = ["a", "b", "c", "d", "e"]
    const s = await stub((req, res) => {
      const url = new URL(req.url, "http://x")
      const n = Number(url.searchParams.get("n") ?? all.length)
      const last = url.searchParams.get("last")
      const rest = all.filter((t) => last === null || t > last)
      const page = rest.slice(0, n)
      const more: Record<string, string> = rest.length > n ? { link: `</v2/a/tags/list?n=${n}&last=${page.at(-1)}>; rel="next"` } : {}
      reply(res, 200, { "content-type": "application/json", ...more }, JSON.stringify({ name: "a", tags: page }))
    })
    const pages: string[][] = []
    for await (const p of client().listTags(`${s.address}/a`, { pageSize: 2 })) pages.push(p)
    expect(pages).toEqual([["a", "b"], ["c", "d"], ["e"]])
    expect(s.requests.map((r) => r.url)).toEqual(["/v2/a/tags/list?n=2", "/v2/a/tags/list?n=2&last=b", "/v2/a/tags/list?n=2&last=d"])
  })

  it("stops a registry that paginates in a loop with Invalid", async () => {
    const s = await stub((_req, res) => reply(res, 200, { link: '</v2/a/tags/list?n=1&last=a>; rel="next"' }, '{"tags":["a"]}'))
    const e = await failure(client().tags(`${s.address}/a`, { pageSize: 1 }))
    expect(e.reason._tag).toBe("Invalid")
  })
})

describe("authentication", () => {
  it("runs the Docker token flow once per scope and sends the cached token up front", async () => {
    let tokenRequests = 0
    const registry = await stub((req, res) => {
      if (req.headers.authorization !== "Bearer good") {
        const scope = "repository:a:pull"
        return reply(res, 401, { "www-authenticate": `Bearer realm="http://${tokens.address}/token",service="stub",scope="${scope}"` })
      }
      reply(res, 200, { ...okHead, "content-length": String(manifestBytes.length) })
    })
    const tokens = await stub((req, res) => {
      tokenRequests++
      const url = new URL(req.url, "http://x")
      const basic = `Basic ${Buffer.from("u:p").toString("base64")}`
      if (
        req.headers.authorization !== basic ||
        url.searchParams.get("service") !== "stub" ||
        url.searchParams.getAll("scope").join() !== "repository:a:pull"
      ) {
        return reply(res, 401)
      }
      reply(res, 200, { "content-type": "application/json" }, JSON.stringify({ token: "good", expires_in: 300 }))
    })
    const c = client({ credentials: async () => ({ username: "u", password: "p" }) })
    await c.resolve(`${registry.address}/a:v1`)
    await c.resolve(`${registry.address}/a:v2`)
    expect(tokenRequests).toBe(1)
    expect(registry.requests.map((r) => r.headers.authorization)).toEqual([undefined, "Bearer good", "Bearer good"])
  })

  it("fails with Unauthorized when the token server refuses the credentials", async () => {
    const tokens = await stub((_req, res) => reply(res, 401, { "content-type": "application/json" }, '{"errors":[{"code":"UNAUTHORIZED"}]}'))
    const registry = await stub((_req, res) => reply(res, 401, { "www-authenticate": `Bearer realm="http://${tokens.address}/token",service="s"` }))
    const e = await failure(client({ credentials: async () => ({ username: "u", password: "bad" }) }).resolve(`${registry.address}/a:v1`))
    expect(e.reason._tag).toBe("Unauthorized")
  })

  it("drops credentials when a blob download redirects to another origin", async () => {
    const blob = Buffer.from("blob content")
    const storage = await stub((_req, res) => reply(res, 200, {}, blob))
    const registry = await stub((req, res) => {
      if (req.headers.authorization === undefined) return reply(res, 401, { "www-authenticate": 'Basic realm="r"' })
      reply(res, 307, { location: `http://${storage.address}/signed?x=1` })
    })
    const c = client({ credentials: async () => ({ username: "u", password: "p" }) })
    expect((await c.fetchBlob(`${registry.address}/a`, { digest: digestOf(blob), size: blob.length })).toString()).toBe("blob content")
    expect(storage.requests[0]!.headers.authorization).toBeUndefined()
    expect(registry.requests.at(-1)!.headers.authorization).toMatch(/^Basic /)
  })
})

describe("digest verification against a lying registry", () => {
  it("rejects a manifest fetched by tag whose bytes do not match the registry's Docker-Content-Digest", async () => {
    const s = await stub((_req, res) =>
      reply(res, 200, { "content-type": MediaType.OciManifest, "docker-content-digest": digestOf("something else") }, manifestBytes),
    )
    const e = await failure(client().fetchManifest(`${s.address}/a:v1`))
    expect(e.reason).toMatchObject({ _tag: "DigestMismatch", expected: digestOf("something else"), actual: manifestDigest })
  })

  it("rejects a manifest fetched by digest whose bytes hash differently", async () => {
    const s = await stub((_req, res) => reply(res, 200, { "content-type": MediaType.OciManifest }, manifestBytes))
    const wanted = digestOf("x")
    const e = await failure(client().fetchManifest(`${s.address}/a@${wanted}`))
    expect(e.reason._tag).toBe("DigestMismatch")
  })

  it("rejects a blob whose Content-Length disagrees with the descriptor before reading it", async () => {
    const s = await stub((_req, res) => reply(res, 200, {}, Buffer.alloc(10)))
    const e = await failure(client().pullBlob(`${s.address}/a`, { digest: digestOf(Buffer.alloc(10)), size: 11 }))
    expect(e.reason._tag).toBe("DigestMismatch")
  })

  it("rejects a manifest larger than the client's limit with TooLarge", async () => {
    const s = await stub((_req, res) => reply(res, 200, { "content-type": MediaType.OciManifest }, Buffer.alloc(2048, 32)))
    const e = await failure(client({ maxManifestBytes: 1024 }).fetchManifest(`${s.address}/a:v1`))
    expect(e.reason).toMatchObject({ _tag: "TooLarge", limit: 1024 })
  })
})

describe("referrers API", () => {
  const subject = digestOf("subject")
  const d = (n: number, artifactType: string) => ({ mediaType: MediaType.OciManifest, digest: digestOf(String(n)), size: n, artifactType })

  it("follows the API's pages and filters by artifact type when the registry did not", async () => {
    const s = await stub((req, res) => {
      const url = new URL(req.url, "http://x")
      if (url.pathname !== `/v2/a/referrers/${subject}`) return reply(res, 404)
      const page = url.searchParams.get("page")
      const index = { schemaVersion: 2, mediaType: MediaType.OciIndex, manifests: page === null ? [d(1, "sig"), d(2, "sbom")] : [d(3, "sig")] }
      reply(
        res,
        200,
        { "content-type": MediaType.OciIndex, ...(page === null ? { link: `</v2/a/referrers/${subject}?page=2>; rel="next"` } : {}) },
        JSON.stringify(index),
      )
    })
    const r = await client().referrers(`${s.address}/a@${subject}`, { artifactType: "sig" })
    expect(r.source).toBe("api")
    expect(r.descriptors.map((x) => x.size)).toEqual([1, 3])
    expect(s.requests[0]!.url).toBe(`/v2/a/referrers/${subject}?artifactType=sig`)
  })

  it("does not add a referrers tag when the registry answers a subject push with OCI-Subject", async () => {
    const s = await stub((req, res) => reply(res, 201, { "docker-content-digest": digestOf(req.body), "oci-subject": subject }))
    const manifest = {
      schemaVersion: 2 as const,
      mediaType: MediaType.OciManifest,
      artifactType: "sig",
      config: { mediaType: MediaType.OciEmpty, digest: digestOf("{}"), size: 2 },
      layers: [],
      subject: { mediaType: MediaType.OciManifest, digest: subject, size: 7 },
    }
    await client().pushManifest(`${s.address}/a`, manifest)
    expect(s.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`PUT /v2/a/manifests/${digestOf(JSON.stringify(manifest))}`])
  })
})

describe("Effect API", () => {
  it("fails with OciError in the error channel, catchable by reason", async () => {
    const s = await stub((_req, res) => reply(res, 404, { "content-type": "application/json" }, '{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'))
    const oras = toEffectClient(client())
    const result = await Effect.runPromise(
      oras.resolve(`${s.address}/a:v1`).pipe(
        Effect.map((x) => x.digest),
        Effect.catchReason("OciError", "NotFound", (_reason, error) => Effect.succeed(`missing ${error.repository}:${error.reference}`)),
      ),
    )
    expect(result).toBe("missing a:v1")
  })

  it("provides the client as the Oras service through a scoped layer", async () => {
    const s = await stub((req, res) =>
      req.url === "/v2/" ? reply(res, 200, {}, "{}") : reply(res, 200, { ...okHead, "content-length": String(manifestBytes.length) }),
    )
    const program = Effect.gen(function* () {
      const oras = yield* Oras
      yield* oras.ping(s.address)
      return yield* oras.resolve(`${s.address}/a:v1`)
    })
    const d = await Effect.runPromise(program.pipe(Effect.provide(Oras.layer())))
    expect(d.digest).toBe(manifestDigest)
  })

  it("aborts the HTTP exchange when the fiber is interrupted", async () => {
    let aborted = false
    const s = await stub((_req, res) => {
      res.on("close", () => (aborted = true))
    })
    const oras = toEffectClient(client())
    const exit = await Effect.runPromiseExit(oras.resolve(`${s.address}/a:v1`).pipe(Effect.timeout("100 millis")))
    expect(exit._tag).toBe("Failure")
    await new Promise((r) => setTimeout(r, 100))
    expect(aborted).toBe(true)
  })
})
