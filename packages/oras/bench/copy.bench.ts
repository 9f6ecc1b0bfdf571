// Copy throughput and peak memory of @aicr/oras for one large blob, between two real registries on loopback.
// Not a test: it prints numbers. Run: npx tsx packages/oras/bench/copy.bench.ts [sizeMiB=512] [chunkMiB=8]
import { createHash } from "node:crypto"
import { rmSync } from "node:fs"
import { Readable } from "node:stream"
import { startRegistry } from "@aicr/testing/harness"
import { MediaType, OciClient, staticCredentials } from "../src/index"

const MiB = 1024 * 1024
const sizeMiB = Number(process.argv[2] ?? 512)
const chunkMiB = Number(process.argv[3] ?? 8)
const size = sizeMiB * MiB

/** Deterministic content, produced on the fly (1 MiB pieces); never held whole. */
const piece = (i: number, block: Buffer) => {
  const b = Buffer.from(block.subarray(0, Math.min(MiB, size - i * MiB)))
  if (b.length >= 4) b.writeUInt32BE(i, 0)
  return b
}
const block = Buffer.alloc(MiB)
for (let i = 0; i < MiB; i += 64) createHash("sha512").update(String(i)).digest().copy(block, i)
const source = () =>
  Readable.from(
    (function* () {
      for (let i = 0; i < Math.ceil(size / MiB); i++) yield piece(i, block)
    })(),
    { objectMode: false, highWaterMark: MiB },
  )

/** Peak RSS growth over the start of a phase, sampled every 10 ms (no forced GC: what the process really took). */
const measure = async <A>(label: string, bytes: number, f: () => Promise<A>): Promise<A> => {
  const base = process.memoryUsage().rss
  let peak = base
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
  const t0 = performance.now()
  const result = await f()
  const seconds = (performance.now() - t0) / 1000
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage().rss)
  const rate = bytes > 0 ? `${(bytes / MiB / seconds).toFixed(1).padStart(7)} MiB/s` : "      - MiB/s"
  console.log(
    `${label.padEnd(44)} ${seconds.toFixed(2).padStart(7)} s ${rate}   peak RSS ${(peak / MiB).toFixed(0).padStart(4)} MiB (+${((peak - base) / MiB).toFixed(0)})`,
  )
  return result
}

const USER = { user: "bench", password: "bench-pass" }
const [src, dst] = await Promise.all([startRegistry({ name: "bench-src" }), startRegistry({ name: "bench-dst", htpasswd: USER })])
const client = new OciClient({
  chunkSize: chunkMiB * MiB,
  credentials: staticCredentials({ [dst.address]: { username: USER.user, password: USER.password } }),
})
try {
  console.log(`@aicr/oras copy benchmark: blob ${sizeMiB} MiB, chunk ${chunkMiB} MiB, node ${process.version}, distribution on loopback`)
  const layer = await measure("push (chunked PATCH, digest while streaming)", size, () =>
    client.pushBlob(`${src.address}/bench/app`, source(), { mode: "chunked" }),
  )
  const config = await client.pushBlob(`${src.address}/bench/app`, Buffer.from('{"bench":true}'))
  await client.pushManifest(`${src.address}/bench/app:v1`, {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    config: { mediaType: MediaType.OciConfig, digest: config.digest, size: config.size },
    layers: [{ mediaType: MediaType.OciLayer, digest: layer.digest, size: layer.size }],
  })
  await measure("push again (HEAD, skipped)", 0, () => client.pushBlob(`${src.address}/bench/app`, source(), { digest: layer.digest, size }))

  const sent0 = client.stats.bytesSent
  const r1 = await measure("copy to another registry (pull→verify→PUT)", size, () => client.copy(`${src.address}/bench/app:v1`, `${dst.address}/mirror/app`))
  const sent1 = client.stats.bytesSent
  const r2 = await measure("copy again (everything present)", 0, () => client.copy(`${src.address}/bench/app:v1`, `${dst.address}/mirror/app`))
  const sent2 = client.stats.bytesSent
  await measure("copy within the registry (mount)", 0, () => client.copy(`${src.address}/bench/app:v1`, `${src.address}/mirror/app`))
  await measure("pull (verified stream, hashed and dropped)", size, async () => {
    const h = createHash("sha256")
    for await (const c of await client.pullBlob(`${dst.address}/mirror/app`, { digest: layer.digest, size })) h.update(c as Buffer)
  })
  console.log(`first copy: ${r1.blobsUploaded} blobs, ${r1.bytesUploaded} bytes uploaded, ${sent1 - sent0} request-body bytes sent`)
  console.log(`second copy: ${r2.blobsUploaded} blobs, ${r2.bytesUploaded} bytes uploaded, ${sent2 - sent1} request-body bytes sent`)
  console.log(`process max RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB for a ${sizeMiB} MiB blob`)
} finally {
  await client.close()
  await Promise.all([src.stop(), dst.stop()])
  rmSync(src.dir, { recursive: true, force: true })
  rmSync(dst.dir, { recursive: true, force: true })
}
