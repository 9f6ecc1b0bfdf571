import { FIXTURE_CHARTS, indexYaml, packageChart } from "@aicr/chart-upstream"
import { type OciClient, OciError } from "@aicr/oras"
import { describe, expect, it } from "vitest"
import { findIndexEntry, runMirror, shortCause } from "./mirror"
import type { MirrorPlan } from "./plan"

const cert = FIXTURE_CHARTS.find((c) => c.chart === "cert-manager")!
const pkg = packageChart(cert)
const REPO = "https://charts.jetstack.io"

/** Just enough of OciClient for HTTP-sourced charts: an empty registry that records pushes. */
const fakeClient = () => {
  const pushed: string[] = []
  const stats = { requests: 0, bytesSent: 0 }
  const client = {
    stats,
    manifestExists: async () => undefined,
    pushBlob: async (_repo: string, bytes: Uint8Array) => {
      stats.bytesSent += bytes.length
      return { digest: "", size: bytes.length, skipped: false, mounted: false, bytesUploaded: bytes.length }
    },
    pushManifest: async (ref: string, content: { bytes: Uint8Array }) => {
      pushed.push(ref)
      stats.bytesSent += content.bytes.length
      return { mediaType: "", digest: "", size: 0 }
    },
  }
  return { client: client as unknown as OciClient, pushed }
}

const plan = (): MirrorPlan => ({
  inputDigest: `sha256:${"1".repeat(64)}`,
  items: [
    {
      _tag: "Chart",
      key: "cert-manager",
      release: "cert-manager",
      source: { _tag: "HelmRepo", repoUrl: REPO, chart: "cert-manager", version: cert.version, original: REPO },
      repository: "r:1/p/charts/cert-manager",
      tag: cert.version,
    },
  ],
  bundle: { repository: "r:1/p/bundles/cluster", tag: "input-1", files: { "README.md": "x" }, modes: {} },
})

/** A fetch answering from a script: path → responses in order (the last one repeats). */
const scriptedFetch = (script: Record<string, Array<() => Response>>) => {
  const seen: string[] = []
  const f = (async (input: string | URL | Request) => {
    const path = new URL(String(input)).pathname
    seen.push(path)
    const answers = script[path] ?? [() => new Response("no", { status: 404 })]
    const next = answers.length > 1 ? answers.shift()! : answers[0]!
    return next()
  }) as typeof fetch
  return { fetch: f, seen }
}
const ok = (body: string | Buffer) => () => new Response(body, { status: 200, headers: { "content-length": String(Buffer.byteLength(body)) } })

describe("runMirror over an HTTP Helm repository", () => {
  it("downloads the archive the index names and pushes it under its version tag", async () => {
    const { client, pushed } = fakeClient()
    const f = scriptedFetch({ "/index.yaml": [ok(indexYaml([pkg]))], [`/${pkg.file}`]: [ok(pkg.tgz)] })
    const r = await runMirror(client, plan(), { fetch: f.fetch })
    expect(pushed).toEqual([`r:1/p/charts/cert-manager:${cert.version}`, "r:1/p/bundles/cluster:input-1"])
    expect(r.charts[0]).toMatchObject({ key: "cert-manager", action: "pushed", ref: expect.stringMatching(/@sha256:[a-f0-9]{64}$/) })
  })

  it("retries a 503 from the upstream and succeeds", async () => {
    const { client } = fakeClient()
    const f = scriptedFetch({ "/index.yaml": [() => new Response("busy", { status: 503 }), ok(indexYaml([pkg]))], [`/${pkg.file}`]: [ok(pkg.tgz)] })
    await runMirror(client, plan(), { fetch: f.fetch })
    expect(f.seen.filter((p) => p === "/index.yaml")).toHaveLength(2)
  })

  it.each([
    [503, "RegistryUnavailableError"],
    [401, "UnauthorizedError"],
    [404, "ChartSourceUnsupportedError"],
  ])("maps a persistent HTTP %i from the upstream to %s", async (status, tag) => {
    const { client } = fakeClient()
    const f = scriptedFetch({ "/index.yaml": [() => new Response("x", { status })] })
    await expect(runMirror(client, plan(), { fetch: f.fetch })).rejects.toMatchObject({ _tag: tag })
  })

  it("refuses an archive larger than the limit before reading it", async () => {
    const { client } = fakeClient()
    const f = scriptedFetch({ "/index.yaml": [ok(indexYaml([pkg]))], [`/${pkg.file}`]: [ok(pkg.tgz)] })
    await expect(runMirror(client, plan(), { fetch: f.fetch, maxChartBytes: 100 })).rejects.toMatchObject({ _tag: "ContentTooLargeError" })
  })

  it("refuses an archive that does not hash to the index's digest (transient: the upstream is inconsistent)", async () => {
    const { client } = fakeClient()
    const other = packageChart({ ...cert, fillerBytes: 10 })
    const f = scriptedFetch({ "/index.yaml": [ok(indexYaml([pkg]))], [`/${pkg.file}`]: [ok(other.tgz)] })
    await expect(runMirror(client, plan(), { fetch: f.fetch })).rejects.toMatchObject({ _tag: "RegistryUnavailableError", cause: "digest mismatch" })
  })

  it("refuses a version the index does not list, naming the release and the version", async () => {
    const { client } = fakeClient()
    const f = scriptedFetch({ "/index.yaml": [ok(indexYaml([packageChart({ ...cert, version: "v1.0.0" })]))] })
    await expect(runMirror(client, plan(), { fetch: f.fetch })).rejects.toMatchObject({
      _tag: "ChartSourceUnsupportedError",
      release: "cert-manager",
      message: expect.stringContaining(cert.version),
    })
  })
})

describe("findIndexEntry", () => {
  const index = {
    entries: {
      a: [
        { version: "1.2.3", urls: ["a-1.2.3.tgz"] },
        { version: "v2.0.0", urls: ["a-2.tgz"] },
      ],
    },
  }
  it("matches exactly first", () => expect(findIndexEntry(index, "a", "1.2.3")?.urls).toEqual(["a-1.2.3.tgz"]))
  it("matches ignoring a leading v, as helm --version does", () => {
    expect(findIndexEntry(index, "a", "v1.2.3")?.version).toBe("1.2.3")
    expect(findIndexEntry(index, "a", "2.0.0")?.version).toBe("v2.0.0")
  })
  it("finds nothing for an unknown chart or a malformed index", () => {
    expect(findIndexEntry(index, "b", "1.2.3")).toBeUndefined()
    expect(findIndexEntry(null, "a", "1.2.3")).toBeUndefined()
    expect(findIndexEntry({ entries: { a: "x" } }, "a", "1.2.3")).toBeUndefined()
  })
})

describe("shortCause", () => {
  const e = (reason: OciError["reason"], message: string, status?: number) =>
    new OciError({ reason, registry: "r", message, ...(status !== undefined ? { status } : {}) })
  it.each([
    [e({ _tag: "Unavailable", attempts: 5 }, "Cannot reach registry r: connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)"), "ECONNREFUSED"],
    [e({ _tag: "Unavailable", attempts: 5 }, "Registry r answered 503", 503), "HTTP 503"],
    [e({ _tag: "DigestMismatch", expected: "a" }, "bad"), "digest mismatch"],
    [e({ _tag: "Unavailable", attempts: 1 }, "something odd"), "unreachable"],
  ])("%#: %s", (err, want) => expect(shortCause(err)).toBe(want))
})
