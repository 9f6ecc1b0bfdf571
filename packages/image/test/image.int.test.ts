// The operator's image built without a daemon, checked the way a user would: built twice from scratch (no layer
// cache) to the same digest; pushed to the real registry with @aicr/oras and read back with the real oras CLI (the
// index, each platform's manifest and config, a layer through GNU tar); copied from its OCI layout by oras to the
// same digest; and its amd64 root filesystem runs Node as the nonroot user.
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { OciClient } from "@aicr/oras"
import { toolPath } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { type BuiltImage, buildImage, controllerImage, MEDIA, nodeLock, NONROOT, pushImage } from "../src/index"

const run = promisify(execFile)
const info = inject("harness")
const work = mkdtempSync(join(tmpdir(), "aicr-image-int-"))
const client = new OciClient()
let bundle: string
let first: BuiltImage
const spec = () => controllerImage("registry-mirror", bundle, { version: "0.0.0-test", revision: "0123456789abcdef" }, ["amd64", "arm64"])
const oras = async (...args: string[]) => (await run(toolPath("oras"), args, { maxBuffer: 64 << 20, encoding: "buffer" })).stdout

beforeAll(async () => {
  bundle = (await buildApp("registry-mirror", join(work, "bundle"))).outdir
  first = await buildImage(spec(), { outDir: join(work, "a"), useCache: false })
}, 600_000)

afterAll(async () => {
  await client.close()
  rmSync(work, { recursive: true, force: true })
})

describe("daemonless images", () => {
  it("builds to the same digest from scratch, twice", { timeout: 600_000 }, async () => {
    const second = await buildImage(spec(), { outDir: join(work, "b"), useCache: false })
    expect(second.digest).toBe(first.digest)
    expect(second.manifests.map((m) => m.digest)).toEqual(first.manifests.map((m) => m.digest))
  })

  it("pushes an index of linux/amd64 and linux/arm64 that the oras CLI reads back byte for byte", async () => {
    const repo = `${info.registry}/images-test/aicr-operator-registry-mirror`
    const ref = await pushImage(client, first, repo, "v0.0.0-test")
    expect(ref).toBe(`${repo}:v0.0.0-test@${first.digest}`)
    const index = await oras("manifest", "fetch", "--plain-http", `${repo}:v0.0.0-test`)
    expect(index.equals(first.indexBytes)).toBe(true)
    const parsed = JSON.parse(index.toString()) as {
      mediaType: string
      manifests: { platform: { os: string; architecture: string } }[]
      annotations: Record<string, string>
    }
    expect(parsed.mediaType).toBe(MEDIA.index)
    expect(parsed.manifests.map((m) => `${m.platform.os}/${m.platform.architecture}`)).toEqual(["linux/amd64", "linux/arm64"])
    expect(parsed.annotations).toMatchObject({
      "org.opencontainers.image.title": "aicr-operator-registry-mirror",
      "org.opencontainers.image.revision": "0123456789abcdef",
    })

    for (const arch of ["amd64", "arm64"] as const) {
      const manifest = JSON.parse((await oras("manifest", "fetch", "--plain-http", "--platform", `linux/${arch}`, `${repo}:v0.0.0-test`)).toString())
      expect(manifest.layers).toHaveLength(3)
      expect(manifest.layers.every((l: { mediaType: string }) => l.mediaType === MEDIA.layer)).toBe(true)
      const config = JSON.parse((await oras("manifest", "fetch-config", "--plain-http", "--platform", `linux/${arch}`, `${repo}:v0.0.0-test`)).toString())
      expect(config).toMatchObject({
        architecture: arch,
        os: "linux",
        created: "1970-01-01T00:00:00Z",
        config: { User: `${NONROOT}:${NONROOT}`, Entrypoint: ["/nodejs/bin/node", "/app/main.mjs"], WorkingDir: "/app" },
        rootfs: { type: "layers" },
      })
      expect(config.rootfs.diff_ids).toHaveLength(3)
    }
  })

  it("has layers GNU tar lists with fixed times and owners: Debian's libc, Node for the platform, the app", async () => {
    const repo = `${info.registry}/images-test/aicr-operator-registry-mirror`
    const arm = first.manifests.find((m) => m.platform === "arm64")!
    const listing = async (digest: string) => {
      const file = join(work, digest.slice(7))
      await oras("blob", "fetch", "--plain-http", "--output", file, `${repo}@${digest}`)
      return (await run("tar", ["--numeric-owner", "-tvzf", file], { maxBuffer: 64 << 20 })).stdout.trim().split("\n")
    }
    const [base, node, app] = await Promise.all(arm.layers.map((l) => listing(l.digest)))
    expect(base!.some((l) => l.endsWith(" lib/aarch64-linux-gnu/libc.so.6"))).toBe(true)
    expect(base!).toContainEqual(expect.stringMatching(/^drwx------ 65532\/65532 .* home\/nonroot\/$/))
    expect(base!).toContainEqual(expect.stringMatching(/^drwxrwxrwt 0\/0 .* tmp\/$/))
    expect(base!.some((l) => l.endsWith(" etc/ssl/certs/ca-certificates.crt"))).toBe(true)
    expect(base!.some((l) => l.endsWith(" var/lib/dpkg/status.d/libstdc++6"))).toBe(true)
    expect(node!).toContainEqual(expect.stringMatching(/^-rwxr-xr-x 0\/0 .* nodejs\/bin\/node$/))
    expect(app!.some((l) => l.endsWith(" app/main.mjs"))).toBe(true)
    expect([...base!, ...node!, ...app!].every((l) => l.includes(" 1970-01-01 00:00 "))).toBe(true)
  })

  it("is copied by oras from its OCI layout to the same digest", async () => {
    const dst = `${info.registry}/images-test/copied:v0.0.0-test`
    await oras("copy", "--from-oci-layout", "--to-plain-http", `${first.layout}:0.0.0-test`, dst)
    const copied = await client.resolve(dst)
    expect(copied.digest).toBe(first.digest)
  })

  it("runs Node from its amd64 root filesystem as nonroot", async () => {
    const root = join(work, "rootfs")
    mkdirSync(root)
    for (const l of first.manifests.find((m) => m.platform === "amd64")!.layers) await run("tar", ["-xzf", l.file, "-C", root])
    const { stdout } = await run("unshare", [
      "--root",
      root,
      "--setuid",
      String(NONROOT),
      "--setgid",
      String(NONROOT),
      "/nodejs/bin/node",
      "-e",
      "console.log(JSON.stringify({ v: process.version, uid: process.getuid(), user: require('os').userInfo().username, cas: require('tls').rootCertificates.length > 100 }))",
    ])
    expect(JSON.parse(stdout)).toEqual({ v: `v${nodeLock().version}`, uid: NONROOT, user: "nonroot", cas: true })
  })
})
