import { describe, expect, it } from "vitest"
import { isOciError } from "./errors"
import { digestOf } from "./digest"
import { chartAnnotations, chartConfigJson, chartLayer, chartLayout, goJson, readChartMetadata } from "./helm"
import { MediaType } from "./media-types"
import { chartTag, chartVersion } from "./reference"
import { writeTgz } from "./tar"

const chartYaml = `apiVersion: v2
name: demo
description: A <demo> chart & more
type: application
version: 1.0.0+build.7
appVersion: "1.16"
home: https://example.com/demo
sources:
  - https://github.com/example/demo
  - https://github.com/example/other
maintainers:
  - name: Ada
    email: ada@example.com
  - name: Bob
keywords: [gpu, aicr]
deprecated: false
annotations:
  org.opencontainers.image.title: ignored
  zeta: z
  alpha: a
dependencies:
  - name: sub
    version: 0.1.0
    repository: oci://r/charts
    enabled: true
`

const tgz = writeTgz([
  { path: "demo/Chart.yaml", data: Buffer.from(chartYaml) },
  { path: "demo/values.yaml", data: Buffer.from("replicas: 1\n") },
])

describe("chart tags", () => {
  it.each([
    { version: "1.2.3", tag: "1.2.3" },
    { version: "1.0.0+build.7", tag: "1.0.0_build.7" },
    { version: "2.0.0-rc.1+a+b", tag: "2.0.0-rc.1_a_b" },
  ])("maps version $version to tag $tag and back", ({ version, tag }) => {
    expect(chartTag(version)).toBe(tag)
    expect(chartVersion(tag)).toBe(version)
  })
})

describe("readChartMetadata", () => {
  it("reads Chart.yaml, keeping scalars as written (appVersion stays a string)", () => {
    const meta = readChartMetadata(tgz)
    expect(meta).toMatchObject({ name: "demo", version: "1.0.0+build.7", appVersion: "1.16", apiVersion: "v2", type: "application" })
    expect(meta.maintainers).toEqual([{ name: "Ada", email: "ada@example.com" }, { name: "Bob" }])
    expect(meta.dependencies).toEqual([{ name: "sub", version: "0.1.0", repository: "oci://r/charts", enabled: true }])
    expect(meta.deprecated).toBeUndefined()
  })

  it("reads a numeric-looking version as its text", () => {
    const t = writeTgz([{ path: "x/Chart.yaml", data: Buffer.from("name: x\nversion: 1.10\n") }])
    expect(readChartMetadata(t).version).toBe("1.10")
  })

  it.each([
    { name: "an archive without Chart.yaml", data: writeTgz([{ path: "demo/values.yaml", data: Buffer.from("a: 1") }]) },
    { name: "a nested Chart.yaml only (subchart)", data: writeTgz([{ path: "demo/charts/sub/Chart.yaml", data: Buffer.from("name: s\nversion: 1.0.0") }]) },
    { name: "a Chart.yaml without version", data: writeTgz([{ path: "demo/Chart.yaml", data: Buffer.from("name: demo\n") }]) },
    { name: "bytes that are not gzip", data: Buffer.from("not a tarball") },
  ])("rejects $name with reason Invalid", ({ data }) => {
    expect(() => readChartMetadata(data)).toThrow()
    try {
      readChartMetadata(data)
    } catch (e) {
      expect(isOciError(e, "Invalid")).toBe(true)
    }
  })
})

describe("chart config and annotations", () => {
  const meta = readChartMetadata(tgz)

  it("writes the config in Helm's chart.Metadata field order with Go's HTML escaping", () => {
    const json = chartConfigJson(meta).toString()
    expect(Object.keys(JSON.parse(json))).toEqual([
      "name",
      "home",
      "sources",
      "version",
      "description",
      "keywords",
      "maintainers",
      "apiVersion",
      "appVersion",
      "annotations",
      "dependencies",
      "type",
    ])
    expect(json).toContain('"description":"A \\u003cdemo\\u003e chart \\u0026 more"')
    expect(json).toContain('"annotations":{"alpha":"a","org.opencontainers.image.title":"ignored","zeta":"z"}')
  })

  it("derives Helm's manifest annotations, keeping title and version from the chart", () => {
    expect(chartAnnotations(meta, "2026-12-02T10:00:00Z")).toEqual({
      alpha: "a",
      "org.opencontainers.image.authors": "Ada (ada@example.com), Bob",
      "org.opencontainers.image.created": "2026-12-02T10:00:00Z",
      "org.opencontainers.image.description": "A <demo> chart & more",
      "org.opencontainers.image.source": "https://github.com/example/demo",
      "org.opencontainers.image.title": "demo",
      "org.opencontainers.image.url": "https://example.com/demo",
      "org.opencontainers.image.version": "1.0.0+build.7",
      zeta: "z",
    })
  })

  it("leaves out empty annotation values", () => {
    expect(Object.keys(chartAnnotations({ name: "x", version: "1.0.0", description: "  " }, "t"))).toEqual([
      "org.opencontainers.image.created",
      "org.opencontainers.image.title",
      "org.opencontainers.image.version",
    ])
  })

  it("escapes like Go's encoding/json", () => {
    expect(goJson({ s: "<a>&\u2028" })).toBe('{"s":"\\u003ca\\u003e\\u0026\\u2028"}')
  })
})

describe("chartLayout", () => {
  it("lays a chart out as helm push does: config, chart layer, annotations, version tag", () => {
    const meta = readChartMetadata(tgz)
    const l = chartLayout(tgz, { created: "1970-01-01T00:00:00Z" })
    expect(l.metadata).toEqual(meta)
    expect(l.tag).toBe("1.0.0_build.7")
    expect(l.config.bytes).toEqual(chartConfigJson(meta))
    expect(l.config.descriptor).toEqual({ mediaType: MediaType.HelmConfig, digest: digestOf(l.config.bytes), size: l.config.bytes.length })
    expect(l.chart).toEqual({ mediaType: MediaType.HelmChart, digest: digestOf(tgz), size: tgz.length })
    const manifest = JSON.parse(l.manifest.bytes.toString()) as Record<string, unknown>
    expect(Object.keys(manifest)).toEqual(["schemaVersion", "config", "layers", "annotations"])
    expect(manifest).toEqual({ schemaVersion: 2, config: l.config.descriptor, layers: [l.chart], annotations: chartAnnotations(meta, "1970-01-01T00:00:00Z") })
    expect(l.manifest.descriptor).toEqual({ mediaType: MediaType.OciManifest, digest: digestOf(l.manifest.bytes), size: l.manifest.bytes.length })
    expect(chartLayout(tgz, { created: "1970-01-01T00:00:00Z" }).manifest.bytes).toEqual(l.manifest.bytes)
  })

  it("sorts the provenance layer with the chart layer by digest", () => {
    const l = chartLayout(tgz, { created: "1970-01-01T00:00:00Z", provenance: Buffer.from("prov") })
    const layers = (JSON.parse(l.manifest.bytes.toString()) as { layers: Array<{ digest: string }> }).layers.map((x) => x.digest)
    expect(layers).toEqual([l.chart.digest, l.provenance!.digest].sort())
  })

  it("finds the chart layer of a chart manifest only", () => {
    const manifest = JSON.parse(chartLayout(tgz).manifest.bytes.toString()) as Parameters<typeof chartLayer>[0]
    expect(chartLayer(manifest)?.digest).toBe(digestOf(tgz))
    expect(
      chartLayer({ schemaVersion: 2, mediaType: MediaType.OciManifest, config: { mediaType: MediaType.OciEmpty, digest: "sha256:x", size: 2 }, layers: [] }),
    ).toBeUndefined()
  })
})
