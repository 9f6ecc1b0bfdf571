// The Docker token flow against a real registry that verifies the tokens (distribution with `auth.token`):
// challenge parsing, scoped token requests with basic credentials, the per-scope token cache, cross-repository
// mount scopes, and typed failures.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MediaType, OciClient, staticCredentials } from "../src/index"
import { describeBytes, failure, imageManifest, uniqueRepo } from "./support/fixtures"
import { startTokenRegistry, type TokenRegistry } from "./support/token-registry"

const USER = { user: "robot", password: "t0ken-pass" }
let registry: TokenRegistry

beforeAll(async () => {
  registry = await startTokenRegistry(USER)
})
afterAll(async () => {
  await registry?.stop()
})

const withClient = async <A>(credentials: boolean, f: (c: OciClient) => Promise<A>): Promise<A> => {
  const c = new OciClient(credentials ? { credentials: staticCredentials({ [registry.address]: { username: USER.user, password: USER.password } }) } : {})
  try {
    return await f(c)
  } finally {
    await c.close()
  }
}

describe("bearer token auth", () => {
  it("pushes and pulls with tokens scoped per repository, requesting each scope once", async () => {
    const repo = uniqueRepo("tok/app")
    await withClient(true, async (c) => {
      const before = registry.tokenRequests.length
      const config = Buffer.from('{"os":"linux"}')
      const layer = Buffer.alloc(100_000, 9)
      await c.pushBlob(`${registry.address}/${repo}`, config)
      await c.pushBlob(`${registry.address}/${repo}`, layer)
      const m = await c.pushManifest(
        `${registry.address}/${repo}:v1`,
        imageManifest(describeBytes(MediaType.OciConfig, config), [describeBytes(MediaType.OciLayer, layer)]),
      )
      expect((await c.resolve(`${registry.address}/${repo}:v1`)).digest).toBe(m.digest)
      expect(await c.fetchBlob(`${registry.address}/${repo}`, describeBytes("x", layer))).toEqual(layer)
      // One handshake: the pull,push token also serves the reads.
      expect(registry.tokenRequests.slice(before)).toEqual([{ scopes: [`repository:${repo}:pull,push`], authenticated: true }])
    })
  })

  it("mounts across repositories with a token carrying both repositories' scopes", async () => {
    const from = uniqueRepo("tok/src")
    const to = uniqueRepo("tok/dst")
    await withClient(true, async (c) => {
      const { digest } = await c.pushBlob(`${registry.address}/${from}`, Buffer.from("mount me"))
      expect(await c.mountBlob(`${registry.address}/${from}`, `${registry.address}/${to}`, digest)).toBe(true)
      expect(registry.tokenRequests.at(-1)!.scopes.sort()).toEqual([`repository:${from}:pull`, `repository:${to}:pull,push`].sort())
    })
  })

  it("fails with Unauthorized when anonymous tokens grant nothing", async () => {
    const e = await withClient(false, (c) => failure(c.resolve(`${registry.address}/${uniqueRepo("tok/private")}:v1`)))
    expect(e).toMatchObject({ reason: { _tag: "Unauthorized" }, status: 401 })
  })

  it("fails with Unauthorized when the token server refuses the password", async () => {
    const wrong = new OciClient({ credentials: staticCredentials({ [registry.address]: { username: USER.user, password: "wrong" } }) })
    try {
      const e = await failure(wrong.tags(`${registry.address}/${uniqueRepo("tok/x")}`))
      expect(e.reason._tag).toBe("Unauthorized")
    } finally {
      await wrong.close()
    }
  })
})
