// Copying between two real registries (one open, one behind htpasswd basic auth) and within one, plus basic-auth
// behaviour: 401 without credentials, success with them, credentials from a Docker config.json.
import { mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Registry, startRegistry } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type BlobEvent, dockerConfigCredentials, type ImageIndex, MediaType, OciClient, staticCredentials } from "../src/index"
import { describeBytes, failure, generatedBlob, imageManifest, uniqueRepo } from "./support/fixtures"

const USER = { user: "mirror", password: "s3cret-pass" }

let open: Registry
let locked: Registry
let client: OciClient

beforeAll(async () => {
  ;[open, locked] = await Promise.all([startRegistry({ name: "oras-open" }), startRegistry({ name: "oras-locked", htpasswd: USER })])
  client = new OciClient({ credentials: staticCredentials({ [locked.address]: { username: USER.user, password: USER.password } }) })
})
afterAll(async () => {
  await client?.close()
  await Promise.all([open?.stop(), locked?.stop()])
})

/** An image with a 6 MiB streamed layer and a small config. */
const pushImage = async (repo: string, tag: string, seed: number) => {
  const layer = generatedBlob(6 * 1024 * 1024, seed)
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", seed }))
  await client.pushBlob(repo, config)
  await client.pushBlob(repo, layer.stream(), { digest: layer.digest, size: layer.size })
  const manifest = imageManifest(describeBytes(MediaType.OciConfig, config), [{ mediaType: MediaType.OciLayerGzip, digest: layer.digest, size: layer.size }])
  return { descriptor: await client.pushManifest(`${repo}:${tag}`, manifest), bytes: layer.size + config.length }
}

describe("copy between registries", () => {
  it("copies an image from an open registry to an authenticated one, and a second copy uploads nothing", async () => {
    const name = uniqueRepo("copy/app")
    const image = await pushImage(`${open.address}/${name}`, "1.0.0", 1)
    const events: BlobEvent[] = []

    const first = await client.copy(`${open.address}/${name}:1.0.0`, `${locked.address}/aicr/c1/${name}`, { onBlob: (e) => events.push(e) })
    expect(first).toMatchObject({
      descriptor: { digest: image.descriptor.digest },
      manifestsPushed: 1,
      blobsUploaded: 2,
      blobsSkipped: 0,
      bytesUploaded: image.bytes,
    })
    expect(events.map((e) => e.action)).toEqual(["uploaded", "uploaded"])
    expect((await client.resolve(`${locked.address}/aicr/c1/${name}:1.0.0`)).digest).toBe(image.descriptor.digest)

    const sentBefore = client.stats.bytesSent
    const second = await client.copy(`${open.address}/${name}:1.0.0`, `${locked.address}/aicr/c1/${name}`)
    expect(second).toMatchObject({ manifestsPushed: 0, manifestsSkipped: 1, blobsUploaded: 0, bytesUploaded: 0 })
    expect(client.stats.bytesSent - sentBefore).toBe(0)
  })

  it("skips blobs the destination already has when copying a new manifest over them", async () => {
    const name = uniqueRepo("copy/partial")
    const image = await pushImage(`${open.address}/${name}`, "1.0.0", 2)
    const { manifest } = await client.fetchManifest(`${open.address}/${name}:1.0.0`)
    const layer = "layers" in manifest ? manifest.layers[0]! : undefined
    await client.copy(`${open.address}/${name}:1.0.0`, `${locked.address}/${name}`)
    // A new tag over the same layer with another config: only the config travels.
    const config = Buffer.from('{"architecture":"arm64","os":"linux"}')
    await client.pushBlob(`${open.address}/${name}`, config)
    await client.pushManifest(`${open.address}/${name}:1.0.1`, imageManifest(describeBytes(MediaType.OciConfig, config), [layer!]))
    const r = await client.copy(`${open.address}/${name}:1.0.1`, `${locked.address}/${name}`)
    expect(r).toMatchObject({ blobsUploaded: 1, blobsSkipped: 1, bytesUploaded: config.length, manifestsPushed: 1 })
    expect(image.bytes).toBeGreaterThan(config.length)
  })

  it("copies an index with its child manifests, by digest, preserving every digest", async () => {
    const name = uniqueRepo("copy/index")
    const src = `${open.address}/${name}`
    const a = await pushImage(src, "amd64", 3)
    const b = await pushImage(src, "arm64", 4)
    const index: ImageIndex = { schemaVersion: 2, mediaType: MediaType.OciIndex, manifests: [a.descriptor, b.descriptor] }
    const root = await client.pushManifest(src, index)
    const r = await client.copy(`${src}@${root.digest}`, `${locked.address}/${name}`)
    expect(r).toMatchObject({ descriptor: { digest: root.digest, mediaType: MediaType.OciIndex }, manifestsPushed: 3, blobsUploaded: 4 })
    for (const d of [root, a.descriptor, b.descriptor]) expect((await client.resolve(`${locked.address}/${name}@${d.digest}`)).digest).toBe(d.digest)
    expect(await failure(client.tags(`${locked.address}/${name}`))).toMatchObject({ reason: { _tag: "NotFound" } })
  })

  it("mounts blobs instead of uploading them within one registry", async () => {
    const name = uniqueRepo("copy/mount")
    await pushImage(`${open.address}/${name}`, "v1", 5)
    const before = client.stats.bytesSent
    const r = await client.copy(`${open.address}/${name}:v1`, `${open.address}/mirror/${name}:v1`)
    expect(r).toMatchObject({ blobsMounted: 2, blobsUploaded: 0, bytesUploaded: 0, manifestsPushed: 1 })
    // Only the manifest itself was sent.
    expect(client.stats.bytesSent - before).toBe(r.descriptor.size)
  })

  it("copies referrers along when asked", async () => {
    const name = uniqueRepo("copy/referrers")
    const src = `${open.address}/${name}`
    const image = await pushImage(src, "v1", 6)
    const evidence = Buffer.from('{"validated":true}')
    await client.pushBlob(src, evidence)
    const ev = await client.pushManifest(
      src,
      imageManifest(describeBytes("application/json", evidence), [describeBytes("application/json", evidence)], {
        artifactType: "application/vnd.aicr.evidence.v1+json",
        subject: image.descriptor,
      }),
    )
    await client.copy(`${src}:v1`, `${locked.address}/${name}`, { referrers: true })
    const found = await client.referrers(`${locked.address}/${name}@${image.descriptor.digest}`)
    expect(found.descriptors.map((d) => d.digest)).toEqual([ev.digest])
  })
})

describe("basic auth", () => {
  it("fails with Unauthorized without credentials and carries the registry and repository", async () => {
    const anonymous = new OciClient()
    try {
      const e = await failure(anonymous.tags(`${locked.address}/private/app`))
      expect(e).toMatchObject({ reason: { _tag: "Unauthorized" }, status: 401, registry: locked.address, repository: "private/app" })
      expect((await failure(anonymous.ping(locked.address))).reason._tag).toBe("Unauthorized")
    } finally {
      await anonymous.close()
    }
  })

  it("fails with Unauthorized with a wrong password", async () => {
    const wrong = new OciClient({ credentials: staticCredentials({ [locked.address]: { username: USER.user, password: "nope" } }) })
    try {
      expect((await failure(wrong.pushBlob(`${locked.address}/private/app`, Buffer.from("x")))).reason._tag).toBe("Unauthorized")
    } finally {
      await wrong.close()
    }
  })

  it("authenticates with credentials from a Docker config.json", async () => {
    const dir = await mkdtemp(join(tmpdir(), "oras-docker-"))
    const path = join(dir, "config.json")
    const auth = Buffer.from(`${USER.user}:${USER.password}`).toString("base64")
    await writeFile(path, JSON.stringify({ auths: { [`http://${locked.address}`]: { auth } } }))
    const fromConfig = new OciClient({ credentials: dockerConfigCredentials({ path }) })
    try {
      await fromConfig.ping(locked.address)
      const pushed = await fromConfig.pushBlob(`${locked.address}/private/from-config`, Buffer.from("config.json works"))
      expect(pushed.bytesUploaded).toBe(17)
    } finally {
      await fromConfig.close()
    }
  })
})
