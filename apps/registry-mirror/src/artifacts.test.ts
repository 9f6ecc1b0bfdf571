import { FIXTURE_CHARTS, packageChart } from "@aicr/chart-upstream"
import { chartAnnotations, chartLayer, digestOf, readChartMetadata } from "@aicr/oras"
import { describe, expect, it } from "vitest"
import { bundleArtifact, chartArtifact, CREATED } from "./artifacts"
import { wrapperVersion } from "./wrapper"

describe("chartArtifact", () => {
  it("lays a chart out as helm push does, with created fixed to the epoch", () => {
    const p = packageChart(FIXTURE_CHARTS[0]!)
    const a = chartArtifact(p.tgz)
    expect(a.metadata).toEqual(readChartMetadata(p.tgz))
    expect(a.tag).toBe(p.version)
    const manifest = JSON.parse(a.manifest.bytes.toString()) as Parameters<typeof chartLayer>[0] & { annotations: Record<string, string> }
    expect(manifest.annotations).toEqual(chartAnnotations(a.metadata, CREATED))
    expect(chartLayer(manifest)?.digest).toBe(p.digest)
    expect(chartArtifact(p.tgz).manifest.descriptor.digest).toBe(a.manifest.descriptor.digest)
  })

  it("reads the metadata of a large chart from the start of its archive", () => {
    const kps = FIXTURE_CHARTS.find((c) => c.chart === "kube-prometheus-stack")!
    expect(chartArtifact(packageChart(kps, { fillerBytes: 6 * 1024 * 1024 }).tgz).metadata.name).toBe("kube-prometheus-stack")
  })
})

describe("determinism", () => {
  it("builds identical bundles and wrapper versions from identical input", () => {
    const input = `sha256:${"1".repeat(64)}`
    const a = bundleArtifact({ "a.txt": "1", "deploy.sh": "#!/bin/sh\n" }, { "deploy.sh": 0o755 }, input)
    expect(bundleArtifact({ "deploy.sh": "#!/bin/sh\n", "a.txt": "1" }, { "deploy.sh": 0o755 }, input).manifest.digest).toBe(a.manifest.digest)
    expect(a.manifest.digest).toBe(digestOf(a.manifest.bytes))
    expect(bundleArtifact({ "a.txt": "1", "deploy.sh": "#!/bin/sh\n" }, {}, input).manifest.digest).not.toBe(a.manifest.digest)
    expect(wrapperVersion([["a.yaml", "x"]])).toBe(wrapperVersion([["a.yaml", "x"]]))
    expect(wrapperVersion([["a.yaml", "x"]])).not.toBe(wrapperVersion([["a.yaml", "y"]]))
    expect(wrapperVersion([["ab", "c"]])).not.toBe(wrapperVersion([["a", "bc"]]))
  })
})
