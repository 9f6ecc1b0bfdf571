// The mirror executor against real registries (Debian's distribution) and the local chart upstream (HTTP Helm
// repositories + an OCI registry), checked with the real helm v4 CLI.
import { mkdir, readFile, readdir } from "node:fs/promises"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { type ChartUpstream, fixtureBundle, FIXTURE_CHARTS, fixtureRecipe, packageChart, startChartUpstream } from "@aicr/chart-upstream"
import { digestOf, OciClient, parseReference, staticCredentials } from "@aicr/oras"
import { isolatedHelm, type IsolatedHelm, type Registry, startRegistry } from "@aicr/testing/harness"
import { parseAllDocuments } from "yaml"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chartArtifact } from "../src/artifacts"
import { readResolution } from "../src/content"
import { type MirrorPlan, planMirror } from "../src/plan"
import { runMirror } from "../src/mirror"
import { parseRewrites } from "../src/source"
import { contentData, INPUT_DIGEST, OTHER_INPUT_DIGEST } from "./support/fixtures"
import { expectOrasPullsFixtureBundle } from "./support/oras-pull"

let upstream: ChartUpstream
let registry: Registry
let client: OciClient
let helm: IsolatedHelm
const fast = { maxAttempts: 2, baseDelayMs: 50, maxDelayMs: 200 }

const planFor = (registryAddress: string, prefix: string, inputDigest = INPUT_DIGEST): MirrorPlan => {
  const r = readResolution(contentData())
  if (!r.ok) throw new Error(r.why)
  const p = planMirror(
    r.resolution,
    inputDigest,
    { registry: registryAddress, prefix },
    parseRewrites(Object.entries(upstream.rewrites).map(([a, b]) => `${a}=${b}`)),
  )
  if (!p.ok) throw new Error(JSON.stringify(p.unsupported))
  return p.plan
}
const rewrites = () => parseRewrites(Object.entries(upstream.rewrites).map(([a, b]) => `${a}=${b}`))

beforeAll(async () => {
  ;[upstream, registry, helm] = await Promise.all([startChartUpstream(), startRegistry({ name: "mirror-dst" }), isolatedHelm("registry-mirror-helm-")])
  client = new OciClient({ retry: fast })
})

afterAll(async () => {
  await client?.close()
  await upstream?.stop()
  await registry?.stop()
  await helm?.cleanup()
})

describe("mirroring the fixture recipe", () => {
  const prefix = "aicr/cluster-a"
  let first: Awaited<ReturnType<typeof runMirror>>

  beforeAll(async () => {
    first = await runMirror(client, planFor(registry.address, prefix), { rewrites: rewrites() })
  })

  it("pushes every chart, wrapper and the bundle, each digest-pinned", () => {
    expect(first.charts.map((c) => c.key).sort()).toEqual(
      [...FIXTURE_CHARTS.map((c) => c.name), "gpu-operator-manifests", "kubeflow-trainer-manifests", "skyhook-customizations"].sort(),
    )
    for (const c of [...first.charts, first.bundle]) {
      expect(c.action).toBe("pushed")
      expect(c.ref).toMatch(new RegExp(`^${registry.address}/${prefix}/(charts|wrappers|bundles)/[a-z0-9-]+:[\\w.-]+@sha256:[a-f0-9]{64}$`))
    }
    expect(first.bundle.ref).toContain(`/${prefix}/bundles/cluster:input-`)
    expect(first.bytesUploaded).toBeGreaterThan(256 * 1024)
  })

  it("copies OCI charts by digest, and pushes HTTP charts exactly as helm push lays them out", async () => {
    for (const u of upstream.charts) {
      const mirrored = first.charts.find((c) => c.ref.includes(`/charts/${u.name}:`))!
      if (u.manifestDigest !== undefined) expect(mirrored.digest).toBe(u.manifestDigest)
      const pulled = await client.pullChart(mirrored.ref)
      expect(digestOf(pulled.chart)).toBe(u.digest)
      if (u.manifestDigest === undefined) expect(mirrored.digest).toBe(chartArtifact(pulled.chart).manifest.descriptor.digest)
    }
  })

  it("uploads 0 bytes and pushes nothing when the same plan is mirrored again", async () => {
    const again = await runMirror(client, planFor(registry.address, prefix), { rewrites: rewrites() })
    expect(again.bytesUploaded).toBe(0)
    expect(again.pushed).toBe(0)
    expect(again.charts.map((c) => c.ref)).toEqual(first.charts.map((c) => c.ref))
    expect(again.bundle.ref).toBe(first.bundle.ref)
  })

  it("does not download HTTP charts again when the index digest shows the tag already holds them", async () => {
    const before = upstream.requests.filter((r) => r.path.endsWith(".tgz")).length
    await runMirror(client, planFor(registry.address, prefix), { rewrites: rewrites() })
    expect(upstream.requests.filter((r) => r.path.endsWith(".tgz")).length).toBe(before)
  })

  it("lets real helm pull every mirrored chart by version from oci://…/charts/<name>", async () => {
    const out = join(helm.work, "pulled")
    await mkdir(out, { recursive: true })
    for (const c of FIXTURE_CHARTS) {
      await helm.helm("pull", `oci://${registry.address}/${prefix}/charts/${c.chart}`, "--version", c.version, "--plain-http", "--destination", out)
    }
    expect((await readdir(out)).sort()).toEqual(FIXTURE_CHARTS.map((c) => `${c.chart}-${c.version}.tgz`).sort())
    const cert = FIXTURE_CHARTS.find((c) => c.chart === "cert-manager")!
    expect(digestOf(await readFile(join(out, `cert-manager-${cert.version}.tgz`)))).toBe(upstream.charts.find((u) => u.name === "cert-manager")!.digest)
  })

  it("pushes wrapper charts that helm renders into exactly the release's manifests", async () => {
    for (const key of ["gpu-operator-manifests", "skyhook-customizations"]) {
      const w = first.charts.find((c) => c.key === key)!
      const r = parseReference(w.ref)
      const repo = `${r.registry}/${r.repository}`
      const version = r.tag!
      const text = await helm.helm("template", "x", `oci://${repo}`, "--version", version, "--plain-http")
      const docs = parseAllDocuments(text)
        .map((d) => d.toJS() as { kind?: string; metadata?: { name: string } })
        .filter((d) => d?.kind !== undefined)
      const release = key.replace(/-manifests$/, "")
      const manifests = Object.entries(fixtureBundle().files).filter(([p]) => p.startsWith(`${release}/manifests/`))
      expect(docs.map((d) => `${d.kind}/${d.metadata!.name}`)).toEqual(
        manifests.map(([, t]) => parseAllDocuments(t)[0]!.toJS() as { kind: string; metadata: { name: string } }).map((d) => `${d.kind}/${d.metadata.name}`),
      )
    }
  })

  it("pushes the bundle as one layer oras unpacks at the output root, byte for byte", async () => {
    const { manifest } = await client.fetchManifest(first.bundle.ref)
    if (!("layers" in manifest)) throw new Error("bundle is an index")
    expect(manifest.artifactType).toBe("application/vnd.aicr.bundle.v1")
    const layer = manifest.layers[0]!
    expect(layer.annotations).toMatchObject({ "org.opencontainers.image.title": ".", "io.deis.oras.content.unpack": "true" })
    const tar = gunzipSync(await client.fetchBlob(first.bundle.ref, layer, { maxBytes: 16 * 1024 * 1024 }))
    const files: Record<string, string> = {}
    for (let off = 0; off + 512 <= tar.length;) {
      const h = tar.subarray(off, off + 512)
      if (h.every((b) => b === 0)) break
      const name = h.subarray(0, 100).toString("utf8").replace(/\0.*$/su, "")
      const pfx = h.subarray(345, 500).toString("utf8").replace(/\0.*$/su, "")
      const size = parseInt(h.subarray(124, 136).toString("utf8"), 8)
      if (h[156] === 0x30) files[pfx ? `${pfx}/${name}` : name] = tar.subarray(off + 512, off + 512 + size).toString("utf8")
      off += 512 + Math.ceil(size / 512) * 512
    }
    expect(files).toEqual(fixtureBundle().files)
  })

  it("the real oras CLI pulls it into -o's root: every file, byte for byte, 0644 or 0755", async () => {
    await expectOrasPullsFixtureBundle(first.bundle.ref)
  })
})

describe("never overwriting", () => {
  it("refuses a tag that holds another chart, naming the tag and both digests", async () => {
    const prefix = "aicr/conflict"
    const cert = upstream.charts.find((c) => c.name === "cert-manager")!
    // Someone pushed another chart archive under cert-manager's version tag.
    const other = packageChart({ ...FIXTURE_CHARTS.find((c) => c.chart === "cert-manager")!, fillerBytes: 1 })
    const pushed = await client.pushChart(`${registry.address}/${prefix}/charts/cert-manager`, other.tgz)
    const err = await runMirror(client, planFor(registry.address, prefix), { rewrites: rewrites() }).catch((e: unknown) => e)
    expect(err).toMatchObject({
      _tag: "ConflictError",
      reference: `${registry.address}/${prefix}/charts/cert-manager:${cert.version}`,
      existing: pushed.manifest.digest,
    })
    const e = err as { wanted: string; message: string }
    expect(e.wanted).toMatch(/^sha256:[a-f0-9]{64}$/)
    expect(e.wanted).not.toBe(pushed.manifest.digest)
    expect(e.message).toContain(pushed.manifest.digest)
    expect(e.message).toContain(e.wanted)
    // …and the tag still holds what was there.
    expect((await client.resolve(`${registry.address}/${prefix}/charts/cert-manager:${cert.version}`)).digest).toBe(pushed.manifest.digest)
  })

  it("refuses a bundle tag that holds another bundle", async () => {
    const prefix = "aicr/bundle-conflict"
    const plan = planFor(registry.address, prefix)
    await runMirror(client, plan, { rewrites: rewrites() })
    // A different bundle rendered for the same input (it cannot be, unless the content changed under the tag).
    const changed = { ...plan, bundle: { ...plan.bundle, files: { ...plan.bundle.files, "README.md": "changed\n" } } }
    await expect(runMirror(client, changed, { rewrites: rewrites() })).rejects.toMatchObject({
      _tag: "ConflictError",
      reference: `${plan.bundle.repository}:${plan.bundle.tag}`,
    })
  })

  it("pushes a second resolution beside the first one, deleting nothing", async () => {
    const prefix = "aicr/two-inputs"
    const a = await runMirror(client, planFor(registry.address, prefix, INPUT_DIGEST), { rewrites: rewrites() })
    const b = await runMirror(client, planFor(registry.address, prefix, OTHER_INPUT_DIGEST), { rewrites: rewrites() })
    expect(b.bundle.ref).not.toBe(a.bundle.ref)
    expect(b.pushed).toBe(1) // only the new bundle tag: every chart is already there
    expect((await client.tags(`${registry.address}/${prefix}/bundles/cluster`)).sort()).toEqual(
      [a.bundle.ref, b.bundle.ref].map((r) => parseReference(r).tag).sort(),
    )
  })
})

describe("registry failures", () => {
  it("reports an outage mid-mirror as a transient failure and completes once the registry is back", async () => {
    const dir = join(helm.work, "flaky-registry")
    let flaky = await startRegistry({ name: "flaky", dir })
    const port = Number(flaky.address.split(":")[1])
    const plan = planFor(flaky.address, "aicr/flaky")
    let stopped: Promise<void> | undefined
    const err = await runMirror(client, plan, {
      rewrites: rewrites(),
      concurrency: 1,
      onArtifact: () => void (stopped ??= flaky.stop()),
    }).catch((e: unknown) => e)
    await stopped
    expect(err).toMatchObject({ _tag: "RegistryUnavailableError", registry: flaky.address })
    flaky = await startRegistry({ name: "flaky", dir, port })
    try {
      const done = await runMirror(client, plan, { rewrites: rewrites() })
      expect(done.present).toBeGreaterThanOrEqual(1) // what was pushed before the outage is kept
      expect(done.pushed + done.present).toBe(plan.items.length + 1)
    } finally {
      await flaky.stop()
    }
  })

  it("reports an upstream outage as transient too", async () => {
    upstream.fail(503)
    try {
      await expect(runMirror(client, planFor(registry.address, "aicr/upstream-down"), { rewrites: rewrites() })).rejects.toMatchObject({
        _tag: "RegistryUnavailableError",
      })
    } finally {
      upstream.fail(undefined)
    }
  })

  it("reports wrong credentials on an htpasswd registry as Unauthorized", async () => {
    const secured = await startRegistry({ name: "secured", htpasswd: { user: "mirror", password: "right" } })
    const wrong = new OciClient({ credentials: staticCredentials({ [secured.address]: { username: "mirror", password: "wrong" } }), retry: fast })
    const right = new OciClient({ credentials: staticCredentials({ [secured.address]: { username: "mirror", password: "right" } }), retry: fast })
    try {
      await expect(runMirror(wrong, planFor(secured.address, "aicr/secured"), { rewrites: rewrites() })).rejects.toMatchObject({
        _tag: "UnauthorizedError",
        registry: secured.address,
      })
      const ok = await runMirror(right, planFor(secured.address, "aicr/secured"), { rewrites: rewrites() })
      expect(ok.pushed).toBe(ok.charts.length + 1)
    } finally {
      await wrong.close()
      await right.close()
      await secured.stop()
    }
  })

  it("reports a chart the upstream does not have as ChartSourceUnsupported, naming the release", async () => {
    const recipe = fixtureRecipe()
    const edited = { ...recipe, componentRefs: recipe.componentRefs.map((c) => (c.name === "cert-manager" ? { ...c, version: "v9.9.9" } : c)) }
    const r = readResolution(contentData(edited))
    if (!r.ok) throw new Error(r.why)
    const p = planMirror(r.resolution, INPUT_DIGEST, { registry: registry.address, prefix: "aicr/missing" }, rewrites())
    if (!p.ok) throw new Error("unplannable")
    await expect(runMirror(client, p.plan, { rewrites: rewrites() })).rejects.toMatchObject({
      _tag: "ChartSourceUnsupportedError",
      release: "cert-manager",
      message: expect.stringContaining("v9.9.9"),
    })
  })
})
