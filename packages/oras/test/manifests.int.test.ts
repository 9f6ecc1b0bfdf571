// Manifests, indexes, tags and referrers against a real registry (distribution 2.8 on loopback).
import { type Registry, startRegistry } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { digestOf, EMPTY_JSON, type ImageIndex, MediaType, OciClient, referrersTag } from "../src/index"
import { describeBytes, failure, imageManifest, uniqueRepo } from "./support/fixtures"

let registry: Registry
let client: OciClient

beforeAll(async () => {
  registry = await startRegistry({ name: "oras-manifests" })
  client = new OciClient()
})
afterAll(async () => {
  await client?.close()
  await registry?.stop()
})

/** Pushes a one-layer image and returns its manifest descriptor. */
const pushImage = async (repo: string, content: string, tag?: string) => {
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } }))
  const layer = Buffer.from(content)
  await client.pushBlob(repo, config)
  await client.pushBlob(repo, layer)
  const manifest = imageManifest(describeBytes(MediaType.OciConfig, config), [describeBytes(MediaType.OciLayer, layer)])
  return client.pushManifest(tag !== undefined ? `${repo}:${tag}` : repo, manifest)
}

describe("manifests and indexes", () => {
  it("pushes a manifest by tag, resolves it with HEAD and fetches the same bytes", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/image")}`
    const pushed = await pushImage(repo, "layer-1", "v1")
    const resolved = await client.resolve(`${repo}:v1`)
    expect(resolved).toEqual({ mediaType: MediaType.OciManifest, digest: pushed.digest, size: pushed.size })
    const fetched = await client.fetchManifest(`${repo}:v1`)
    expect(digestOf(fetched.bytes)).toBe(pushed.digest)
    expect(fetched.descriptor.digest).toBe(pushed.digest)
    expect(await client.fetchManifest(`${repo}@${pushed.digest}`)).toMatchObject({ descriptor: { digest: pushed.digest } })
  })

  it("pushes a manifest by digest only, leaving no tag", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/bydigest")}`
    const pushed = await pushImage(repo, "untagged")
    expect((await client.resolve(`${repo}@${pushed.digest}`)).digest).toBe(pushed.digest)
    expect(await failure(client.tags(repo))).toMatchObject({ reason: { _tag: "NotFound" } })
  })

  it("pushes an index over two manifests with artifactType and annotations, and resolves it", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/index")}`
    const amd = await pushImage(repo, "amd64 layer")
    const arm = await pushImage(repo, "arm64 layer")
    const index: ImageIndex = {
      schemaVersion: 2,
      mediaType: MediaType.OciIndex,
      artifactType: "application/vnd.aicr.bundle.v1",
      manifests: [
        { ...amd, platform: { architecture: "amd64", os: "linux" } },
        { ...arm, platform: { architecture: "arm64", os: "linux" } },
      ],
      annotations: { "org.opencontainers.image.version": "1.0.0" },
    }
    const pushed = await client.pushManifest(`${repo}:multi`, index)
    expect(pushed).toMatchObject({ mediaType: MediaType.OciIndex, artifactType: "application/vnd.aicr.bundle.v1" })
    expect(await client.resolve(`${repo}:multi`)).toMatchObject({ mediaType: MediaType.OciIndex, digest: pushed.digest })
    const fetched = await client.fetchManifest(`${repo}:multi`)
    expect(fetched.manifest).toEqual(index)
  })

  it("re-tags an existing manifest without touching blobs", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/retag")}`
    const pushed = await pushImage(repo, "retag", "v1")
    const before = client.stats.bytesSent
    const tagged = await client.tag(`${repo}:v1`, "stable")
    expect(tagged.digest).toBe(pushed.digest)
    expect(client.stats.bytesSent - before).toBe(pushed.size)
    expect((await client.resolve(`${repo}:stable`)).digest).toBe(pushed.digest)
  })

  it.each([
    { name: "a missing tag", ref: "m/absent:v9", want: "NotFound" },
    { name: "a missing digest", ref: `m/absent@${digestOf("nothing")}`, want: "NotFound" },
  ])("reports $name as $want", async ({ ref, want }) => {
    const e = await failure(client.fetchManifest(`${registry.address}/${ref}`))
    expect(e.reason._tag).toBe(want)
    expect(e.registry).toBe(registry.address)
  })

  it("refuses a manifest whose blobs are missing with a typed Invalid error", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/dangling")}`
    const manifest = imageManifest(describeBytes(MediaType.OciConfig, Buffer.from("{}x")), [])
    const e = await failure(client.pushManifest(`${repo}:v1`, manifest))
    expect(e).toMatchObject({ reason: { _tag: "Invalid" }, status: 400, code: "MANIFEST_BLOB_UNKNOWN" })
  })
})

describe("tags and repositories", () => {
  it("lists every tag even though distribution 2.8 ignores n, and honours last", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/tags")}`
    const pushed = await pushImage(repo, "tagged")
    const { bytes } = await client.fetchManifest(`${repo}@${pushed.digest}`)
    const tags = ["a1", "a2", "b1", "b2", "c1"]
    for (const t of tags) await client.pushManifest(`${repo}:${t}`, { bytes, mediaType: MediaType.OciManifest })
    const pages: string[][] = []
    for await (const page of client.listTags(repo, { pageSize: 2 })) pages.push(page)
    expect(pages.flat().sort()).toEqual(tags)
    expect((await client.tags(repo, { pageSize: 2, last: "b1" })).sort()).toEqual(["b2", "c1"])
  })

  it("pages through the catalog with n, last and the Link header", async () => {
    const prefix = uniqueRepo("cat")
    const names = ["r1", "r2", "r3", "r4", "r5"].map((n) => `${prefix}/${n}`)
    for (const n of names) await pushImage(`${registry.address}/${n}`, n, "v1")
    const pages: string[][] = []
    for await (const page of client.listRepositories(registry.address, { pageSize: 2, last: `${prefix}/r0` })) {
      pages.push(page.filter((r) => r.startsWith(`${prefix}/`)))
      if (pages.flat().length >= names.length) break
    }
    expect(pages.slice(0, 3)).toEqual([names.slice(0, 2), names.slice(2, 4), names.slice(4, 5)])
  })
})

describe("referrers", () => {
  it("finds artifacts that refer to a subject through the tag-schema fallback (distribution 2.8 has no API)", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/referrers")}`
    const subject = await pushImage(repo, "subject", "v1")
    await client.pushBlob(repo, EMPTY_JSON.bytes)
    const evidence = Buffer.from('{"passed":true}')
    await client.pushBlob(repo, evidence)
    const artifact = (type: string, layer: Buffer) =>
      imageManifest(EMPTY_JSON.descriptor, [describeBytes("application/json", layer)], {
        artifactType: type,
        subject,
        annotations: { "org.opencontainers.image.created": "2026-12-02T00:00:00Z" },
      })
    const a = await client.pushManifest(repo, artifact("application/vnd.aicr.evidence.v1+json", evidence))
    const b = await client.pushManifest(repo, artifact("application/vnd.aicr.sbom.v1+json", evidence))

    const all = await client.referrers(`${repo}:v1`)
    expect(all.source).toBe("tag-schema")
    expect(all.descriptors.map((d) => d.digest).sort()).toEqual([a.digest, b.digest].sort())
    expect(all.descriptors.find((d) => d.digest === a.digest)).toMatchObject({
      mediaType: MediaType.OciManifest,
      artifactType: "application/vnd.aicr.evidence.v1+json",
      annotations: { "org.opencontainers.image.created": "2026-12-02T00:00:00Z" },
    })
    const only = await client.referrers(`${repo}@${subject.digest}`, { artifactType: "application/vnd.aicr.sbom.v1+json" })
    expect(only.descriptors.map((d) => d.digest)).toEqual([b.digest])
    // The fallback index is an ordinary tag the registry lists.
    expect(await client.tags(repo)).toContain(referrersTag(subject.digest))
  })

  it("returns no referrers for a subject nobody refers to", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/noreferrers")}`
    const subject = await pushImage(repo, "lonely", "v1")
    expect(await client.referrers(`${repo}@${subject.digest}`)).toEqual({ descriptors: [], source: "tag-schema" })
  })

  it("adds a referrer pushed twice to the fallback index only once", async () => {
    const repo = `${registry.address}/${uniqueRepo("m/idempotent")}`
    const subject = await pushImage(repo, "subject-2", "v1")
    await client.pushBlob(repo, EMPTY_JSON.bytes)
    const m = imageManifest(EMPTY_JSON.descriptor, [EMPTY_JSON.descriptor], { artifactType: "application/vnd.aicr.x", subject })
    await client.pushManifest(repo, m)
    await client.pushManifest(repo, m)
    expect((await client.referrers(`${repo}@${subject.digest}`)).descriptors).toHaveLength(1)
  })
})
