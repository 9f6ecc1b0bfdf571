import { FIXTURE_CHARTS, packageChart, writeTgz } from "@aicr/chart-upstream"
import { chartAnnotations, chartConfigJson, readChartMetadata } from "@aicr/oras"
import { describe, expect, it } from "vitest"
import { bundleArtifact, chartArtifact, chartLayerOf, chartYamlOf, CREATED, gzip, sha256, tar, wrapperVersion } from "./artifacts"

const kps = FIXTURE_CHARTS.find((c) => c.chart === "kube-prometheus-stack")!

describe("chartYamlOf", () => {
  it("finds Chart.yaml at the start of a large archive", () => {
    const big = packageChart(kps, { fillerBytes: 6 * 1024 * 1024 })
    expect(chartYamlOf(big.tgz)).toContain("name: kube-prometheus-stack")
  })
  it("finds Chart.yaml after a large incompressible file", () => {
    const filler = packageChart(kps, { fillerBytes: 3 * 1024 * 1024 })
    const files = [{ path: "x/files/big.bin", data: gzip(Buffer.alloc(0)) }, { path: "x/blob.bin", data: Buffer.from(filler.tgz) }, { path: "x/Chart.yaml", data: Buffer.from("apiVersion: v2\nname: x\nversion: 1.0.0\n") }]
    expect(chartYamlOf(writeTgz(files))).toBe("apiVersion: v2\nname: x\nversion: 1.0.0\n")
  })
  it("returns undefined for an archive without one, and for garbage", () => {
    expect(chartYamlOf(writeTgz([{ path: "x/values.yaml", data: Buffer.from("a: 1\n") }]))).toBeUndefined()
    expect(chartYamlOf(Buffer.from("not gzip"))).toBeUndefined()
  })
})

describe("chartArtifact", () => {
  it("lays a chart out as helm push does, with created fixed to the epoch", () => {
    const p = packageChart(FIXTURE_CHARTS[0]!)
    const a = chartArtifact(p.tgz)
    const meta = readChartMetadata(p.tgz)
    expect(a.metadata).toEqual(meta)
    expect(a.config.bytes).toEqual(chartConfigJson(meta))
    expect(a.tag).toBe(p.version)
    const manifest = JSON.parse(a.manifest.bytes.toString()) as { annotations: Record<string, string>; layers: Array<{ digest: string }> }
    expect(manifest.annotations).toEqual(chartAnnotations(meta, CREATED))
    expect(manifest.layers[0]!.digest).toBe(p.digest)
    expect(chartLayerOf(manifest)).toBe(p.digest)
    expect(chartLayerOf({ config: { mediaType: "application/vnd.oci.empty.v1+json" }, layers: [] })).toBeUndefined()
    expect(chartArtifact(p.tgz).manifest.digest).toBe(a.manifest.digest)
  })
})

describe("determinism", () => {
  it("builds identical tars, wrappers and bundles from identical input", () => {
    const files = [{ path: "a/b.txt", data: Buffer.from("x") }]
    expect(sha256(gzip(tar(files)))).toBe(sha256(gzip(tar(files))))
    expect(bundleArtifact({ "a.txt": "1" }, {}, `sha256:${"1".repeat(64)}`).manifest.digest).toBe(bundleArtifact({ "a.txt": "1" }, {}, `sha256:${"1".repeat(64)}`).manifest.digest)
    expect(wrapperVersion([["a.yaml", "x"]])).toBe(wrapperVersion([["a.yaml", "x"]]))
    expect(wrapperVersion([["a.yaml", "x"]])).not.toBe(wrapperVersion([["a.yaml", "y"]]))
    expect(wrapperVersion([["ab", "c"]])).not.toBe(wrapperVersion([["a", "bc"]]))
  })
})
