// Helm interop against a real registry with the real helm v4 CLI: `helm pull` fetches what we pushed byte for
// byte, we pull what `helm push` pushed byte for byte, and our config/manifest encoding equals Helm's.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { isolatedHelm, type IsolatedHelm, type Registry, startRegistry } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chartAnnotations, chartConfigJson, chartTag, digestOf, MediaType, OciClient } from "../src/index"
import { uniqueRepo } from "./support/fixtures"

let registry: Registry
let client: OciClient
let work: string
let h: IsolatedHelm
let chartTgz: Buffer
const NAME = "demo-chart"
const VERSION = "1.2.3+build.5"

const helm = (...args: string[]) => h.helm(...args)

beforeAll(async () => {
  registry = await startRegistry({ name: "oras-helm" })
  client = new OciClient()
  h = await isolatedHelm("oras-helm-")
  work = h.work
  const dir = join(work, "src", NAME)
  await mkdir(join(dir, "templates"), { recursive: true })
  await writeFile(
    join(dir, "Chart.yaml"),
    [
      "apiVersion: v2",
      `name: ${NAME}`,
      "description: A chart <used> by the oras interop tests & nothing else",
      "type: application",
      `version: ${VERSION}`,
      'appVersion: "2.0"',
      "home: https://example.com/demo",
      "sources: [https://github.com/example/demo]",
      "maintainers:",
      "  - {name: Ada, email: ada@example.com}",
      "annotations:",
      "  category: test",
      "",
    ].join("\n"),
  )
  await writeFile(join(dir, "values.yaml"), "replicas: 1\n")
  await writeFile(join(dir, "templates", "cm.yaml"), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\ndata: {replicas: "{{ .Values.replicas }}"}\n')
  await helm("package", dir, "--destination", join(work, "pkg"))
  chartTgz = await readFile(join(work, "pkg", `${NAME}-${VERSION}.tgz`))
})

afterAll(async () => {
  await client?.close()
  await registry?.stop()
  await h?.cleanup()
})

describe("helm interop", () => {
  it("lets helm pull a chart we pushed, byte for byte, provenance included", async () => {
    const repo = `${uniqueRepo("charts")}/${NAME}`
    const prov = Buffer.from("-----BEGIN PGP SIGNED MESSAGE-----\nnot a real signature\n")
    const pushed = await client.pushChart(`${registry.address}/${repo}`, chartTgz, { provenance: prov })
    expect(pushed.reference.tag).toBe(chartTag(VERSION))
    expect(pushed.metadata).toMatchObject({ name: NAME, version: VERSION, appVersion: "2.0" })

    const out = join(work, `pulled-${repo.replaceAll("/", "-")}`)
    await mkdir(out)
    await helm("pull", `oci://${registry.address}/${repo}`, "--version", VERSION, "--plain-http", "--prov", "--destination", out)
    expect((await readdir(out)).sort()).toEqual([`${NAME}-${VERSION}.tgz`, `${NAME}-${VERSION}.tgz.prov`])
    expect(await readFile(join(out, `${NAME}-${VERSION}.tgz`))).toEqual(chartTgz)
    expect(await readFile(join(out, `${NAME}-${VERSION}.tgz.prov`))).toEqual(prov)
    expect(await helm("show", "chart", `oci://${registry.address}/${repo}`, "--version", VERSION, "--plain-http")).toContain(`name: ${NAME}`)
  })

  it("pulls a chart helm pushed, byte for byte, with Helm's media types", async () => {
    const prefix = uniqueRepo("helm-pushed")
    await helm("push", join(work, "pkg", `${NAME}-${VERSION}.tgz`), `oci://${registry.address}/${prefix}`, "--plain-http")
    const ref = `${registry.address}/${prefix}/${NAME}:${chartTag(VERSION)}`
    const pulled = await client.pullChart(ref)
    expect(pulled.chart).toEqual(chartTgz)
    expect(pulled.metadata).toMatchObject({ name: NAME, version: VERSION, apiVersion: "v2", appVersion: "2.0" })
    const { manifest } = await client.fetchManifest(ref)
    expect("config" in manifest && manifest.config.mediaType).toBe(MediaType.HelmConfig)
    expect("layers" in manifest && manifest.layers.map((l) => l.mediaType)).toEqual([MediaType.HelmChart])
  })

  it("encodes config and manifest exactly as helm push does, so equal inputs give equal digests", async () => {
    const prefix = uniqueRepo("helm-same")
    await helm("push", join(work, "pkg", `${NAME}-${VERSION}.tgz`), `oci://${registry.address}/${prefix}`, "--plain-http")
    const theirs = await client.fetchManifest(`${registry.address}/${prefix}/${NAME}:${chartTag(VERSION)}`)
    if (!("config" in theirs.manifest)) throw new Error("helm pushed an index")
    const theirConfig = await client.fetchBlob(`${registry.address}/${prefix}/${NAME}`, theirs.manifest.config)
    const created = theirs.manifest.annotations?.["org.opencontainers.image.created"]
    expect(created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)

    const meta = (await client.pullChart(`${registry.address}/${prefix}/${NAME}:${chartTag(VERSION)}`)).metadata
    expect(chartConfigJson(meta)).toEqual(theirConfig)
    expect(theirs.manifest.annotations).toEqual(chartAnnotations(meta, created!))

    const ours = await client.pushChart(`${registry.address}/${uniqueRepo("ours")}/${NAME}`, chartTgz, { created: created! })
    expect(ours.manifest.digest).toBe(theirs.descriptor.digest)
    expect(ours.config.digest).toBe(digestOf(theirConfig))
  })
})
