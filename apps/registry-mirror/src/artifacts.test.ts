import { FIXTURE_CHARTS, packageChart } from "@aicr/chart-upstream"
import { chartAnnotations, chartLayer, digestOf, readChartMetadata } from "@aicr/oras"
import { gunzipSync } from "node:zlib"
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

/** Every entry of a ustar archive as `[type, name, mode]` (names without a ustar prefix: the bundle's paths are short). */
const entriesOf = (tar: Buffer): Array<[string, string, string]> => {
  const out: Array<[string, string, string]> = []
  for (let off = 0; off + 512 <= tar.length;) {
    const h = tar.subarray(off, off + 512)
    if (h.every((b) => b === 0)) break
    const size = parseInt(h.subarray(124, 135).toString(), 8)
    out.push([String.fromCharCode(h[156]!), h.subarray(0, 100).toString().replace(/\0+$/u, ""), h.subarray(100, 107).toString()])
    off += 512 + Math.ceil(size / 512) * 512
  }
  return out
}

describe("bundleArtifact", () => {
  it("lays the files out at the root with a directory entry before each directory's files, files 0644 or 0755, titled . for oras pull -o", () => {
    const files = {
      "README.md": "r",
      "deploy.sh": "#!/bin/sh\n",
      "gpu-operator/values.yaml": "a: 1\n",
      "gpu-operator/manifests/dcgm.yaml": "kind: X\n",
      "cert-manager/values.yaml": "b: 2\n",
    }
    // AICR writes its bundle files 0600 and deploy.sh 0700 (or 0755).
    const a = bundleArtifact(files, { "README.md": 0o600, "deploy.sh": 0o700, "gpu-operator/values.yaml": 0o600 }, `sha256:${"1".repeat(64)}`)
    expect(a.layer.descriptor.annotations).toMatchObject({ "org.opencontainers.image.title": ".", "io.deis.oras.content.unpack": "true" })
    expect(entriesOf(gunzipSync(a.layer.bytes))).toEqual([
      ["0", "README.md", "0000644"],
      ["5", "cert-manager/", "0000755"],
      ["0", "cert-manager/values.yaml", "0000644"],
      ["0", "deploy.sh", "0000755"],
      ["5", "gpu-operator/", "0000755"],
      ["5", "gpu-operator/manifests/", "0000755"],
      ["0", "gpu-operator/manifests/dcgm.yaml", "0000644"],
      ["0", "gpu-operator/values.yaml", "0000644"],
    ])
  })
})
