// Blobs against a real registry (Debian's CNCF distribution on loopback): monolithic and chunked uploads,
// streaming without buffering, cross-repository mounts, typed errors, and digest verification of tampered storage.
import { createHash } from "node:crypto"
import { existsSync, readdirSync } from "node:fs"
import { mkdtemp, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { type Readable } from "node:stream"
import { type Registry, startRegistry } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { digestOf, OciClient } from "../src/index"
import { blobDataPath, failure, generatedBlob, memorySampler, uniqueRepo } from "./support/fixtures"

let registry: Registry
let client: OciClient

beforeAll(async () => {
  registry = await startRegistry({ name: "oras-blobs" })
  client = new OciClient()
})
afterAll(async () => {
  await client?.close()
  await registry?.stop()
})

const drainHash = async (stream: Readable) => {
  const h = createHash("sha256")
  let size = 0
  for await (const c of stream as AsyncIterable<Buffer>) {
    h.update(c)
    size += c.length
  }
  return { digest: `sha256:${h.digest("hex")}`, size }
}

describe("blob upload and download", () => {
  it("pushes bytes monolithically, finds them with HEAD and pulls them back verified", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/mono")}`
    const bytes = Buffer.from("a small config blob")
    const pushed = await client.pushBlob(repo, bytes)
    expect(pushed).toMatchObject({ digest: digestOf(bytes), size: bytes.length, skipped: false, mounted: false, bytesUploaded: bytes.length })
    expect(await client.blobExists(repo, pushed.digest)).toEqual({ digest: pushed.digest, size: bytes.length })
    expect(await client.fetchBlob(repo, { digest: pushed.digest, size: bytes.length })).toEqual(bytes)
  })

  it("skips an upload when the blob is already there and sends no bytes", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/skip")}`
    const bytes = Buffer.from("twice")
    await client.pushBlob(repo, bytes)
    const before = client.stats.bytesSent
    expect(await client.pushBlob(repo, bytes)).toMatchObject({ skipped: true, bytesUploaded: 0 })
    expect(client.stats.bytesSent - before).toBe(0)
  })

  it("streams a 128 MiB generated blob up in 4 MiB chunks and down again without holding it in memory", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/chunked")}`
    const blob = generatedBlob(128 * 1024 * 1024, 7)
    const sampler = memorySampler(50)
    const pushed = await client.pushBlob(repo, blob.stream(), { mode: "chunked", chunkSize: 4 * 1024 * 1024 })
    expect(pushed).toMatchObject({ digest: blob.digest, size: blob.size, bytesUploaded: blob.size })
    const pulled = await drainHash(await client.pullBlob(repo, { digest: blob.digest, size: blob.size }))
    const peak = sampler.stop()
    console.info(`peak live memory while streaming ${blob.size} bytes: ${JSON.stringify(peak)}`)
    expect(pulled).toEqual({ digest: blob.digest, size: blob.size })
    // Live buffers stay around a few chunks; the whole blob never is in memory.
    expect(peak.arrayBuffers).toBeLessThan(blob.size / 4)
    expect(peak.heapUsed).toBeLessThan(blob.size / 4)
  })

  it("streams a generated blob of known digest in one monolithic PUT", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/stream")}`
    const blob = generatedBlob(12 * 1024 * 1024 + 3, 8)
    const before = client.stats.requests
    const pushed = await client.pushBlob(repo, blob.stream(), { digest: blob.digest, size: blob.size })
    expect(pushed).toMatchObject({ digest: blob.digest, bytesUploaded: blob.size })
    // HEAD (absent), POST (session), PUT (content)
    expect(client.stats.requests - before).toBe(3)
    expect(await client.blobExists(repo, blob.digest)).toMatchObject({ size: blob.size })
  })

  it("uploads a stream of unknown digest chunked and learns its digest while streaming", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/unknown")}`
    const blob = generatedBlob(3 * 1024 * 1024 + 5, 9)
    const pushed = await client.pushBlob(repo, blob.stream(), { chunkSize: 1024 * 1024 })
    expect(pushed).toMatchObject({ digest: blob.digest, size: blob.size })
  })

  it("refuses to commit a streamed upload whose content does not match the digest it was given", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/wrong")}`
    const blob = generatedBlob(2 * 1024 * 1024, 10)
    const e = await failure(client.pushBlob(repo, blob.stream(), { digest: digestOf("other"), size: blob.size, mode: "chunked", chunkSize: 1024 * 1024 }))
    expect(e.reason._tag).toBe("DigestMismatch")
    expect(await client.blobExists(repo, blob.digest)).toBeUndefined()
  })

  it("aborts a monolithic streamed PUT whose content does not match, and the registry keeps nothing", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/wrongmono")}`
    const blob = generatedBlob(3 * 1024 * 1024, 11)
    const claimed = generatedBlob(3 * 1024 * 1024, 12).digest
    const e = await failure(client.pushBlob(repo, blob.stream(), { digest: claimed, size: blob.size }))
    expect(e.reason).toMatchObject({ _tag: "DigestMismatch", expected: claimed })
    expect(await client.blobExists(repo, claimed)).toBeUndefined()
    expect(await client.blobExists(repo, blob.digest)).toBeUndefined()
  })

  it("writes a pulled blob to a file atomically", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/file")}`
    const bytes = Buffer.alloc(300_000, 3)
    const { digest } = await client.pushBlob(repo, bytes)
    const dir = await mkdtemp(join(tmpdir(), "oras-file-"))
    const info = await client.pullBlobToFile(repo, { digest, size: bytes.length }, join(dir, "blob"))
    expect(info).toEqual({ digest, size: bytes.length })
    expect(await readFile(join(dir, "blob"))).toEqual(bytes)
  })
})

describe("cross-repository mount", () => {
  it("mounts a blob from another repository without uploading it", async () => {
    const from = `${registry.address}/${uniqueRepo("mount/src")}`
    const to = `${registry.address}/${uniqueRepo("mount/dst")}`
    const bytes = Buffer.alloc(1024 * 1024, 5)
    const { digest } = await client.pushBlob(from, bytes)
    const before = client.stats.bytesSent
    expect(await client.mountBlob(from, to, digest)).toBe(true)
    expect(client.stats.bytesSent - before).toBe(0)
    expect(await client.blobExists(to, digest)).toMatchObject({ size: bytes.length })
  })

  it("falls back to uploading when the source repository lacks the blob (registry answers 202)", async () => {
    const to = `${registry.address}/${uniqueRepo("mount/fallback")}`
    const bytes = Buffer.from("not in the source repository")
    const pushed = await client.pushBlob(to, bytes, { mountFrom: uniqueRepo("mount/empty") })
    expect(pushed).toMatchObject({ mounted: false, skipped: false, bytesUploaded: bytes.length })
    expect(await client.mountBlob(`${registry.address}/${uniqueRepo("mount/none")}`, to, digestOf("absent"))).toBe(false)
  })
})

describe("typed errors and verification", () => {
  it("reports a missing blob as NotFound with registry, repository and digest", async () => {
    const repo = uniqueRepo("blobs/missing")
    const digest = digestOf("missing")
    expect(await client.blobExists(`${registry.address}/${repo}`, digest)).toBeUndefined()
    const e = await failure(client.fetchBlob(`${registry.address}/${repo}`, { digest }))
    expect(e).toMatchObject({ reason: { _tag: "NotFound" }, registry: registry.address, repository: repo, reference: digest, status: 404 })
  })

  it("detects a blob tampered with in the registry's storage and leaves no partial file", async () => {
    const repo = `${registry.address}/${uniqueRepo("blobs/tamper")}`
    const bytes = Buffer.alloc(256 * 1024, 1)
    const { digest } = await client.pushBlob(repo, bytes)
    const path = blobDataPath(registry.dir, "oras-blobs", digest)
    expect(existsSync(path)).toBe(true)
    const tampered = Buffer.from(bytes)
    tampered[1000] = 2
    await writeFile(path, tampered)

    const streamed = await failure(client.pullBlob(repo, { digest, size: bytes.length }).then(drainHash))
    expect(streamed.reason).toMatchObject({ _tag: "DigestMismatch", expected: digest, actual: digestOf(tampered) })

    const dir = await mkdtemp(join(tmpdir(), "oras-tamper-"))
    const target = join(dir, "blob")
    const toFile = await failure(client.pullBlobToFile(repo, { digest, size: bytes.length }, target))
    expect(toFile.reason._tag).toBe("DigestMismatch")
    expect(readdirSync(dirname(target))).toEqual([])
  })
})
