// The real charts folder (third-party/charts): where it is found, that every package matches its index entry, and
// that it holds every chart both pinned AICR recipes name, so `charts: "real"` serves no stand-in for them. The folder
// is part of this project's environment: without it these tests fail, they are not skipped.
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { ALL_AICR_COMPONENTS, FIXTURE_CHARTS, indexYaml, packageChart, readRealCharts, realChartsDir, upstreamCharts } from "./index"

const dir = realChartsDir()

describe("the real charts folder", () => {
  it("is found beside the checkout, or where AICR_CHARTS_DIR / AICR_THIRD_PARTY_DIR say; none turns it off", () => {
    expect(dir, "third-party/charts beside the checkout").toBeDefined()
    expect(realChartsDir({ AICR_CHARTS_DIR: dir })).toBe(dir)
    expect(realChartsDir({ AICR_THIRD_PARTY_DIR: join(dir!, "..") })).toBe(join(dir!, "..", "charts"))
    expect(realChartsDir({ AICR_CHARTS_DIR: "none" })).toBeUndefined()
    expect(realChartsDir({ AICR_CHARTS_DIR: mkdtempSync(join(tmpdir(), "no-charts-")) })).toBeUndefined()
  })

  it("is what the CLI (and so up) serves by default; --charts, then AICR_UPSTREAM_CHARTS, choose; stand-ins without it", () => {
    expect(upstreamCharts(undefined, {})).toBe("real")
    expect(upstreamCharts(undefined, { AICR_UPSTREAM_CHARTS: "stand-in" })).toBe("stand-in")
    expect(upstreamCharts("real", { AICR_UPSTREAM_CHARTS: "stand-in" })).toBe("real")
    expect(upstreamCharts("stand-in", {})).toBe("stand-in")
    expect(upstreamCharts(undefined, { AICR_CHARTS_DIR: "none" })).toBe("stand-in")
    expect(upstreamCharts(undefined, { AICR_CHARTS_DIR: mkdtempSync(join(tmpdir(), "no-charts-")) })).toBe("stand-in")
    expect(() => upstreamCharts(undefined, { AICR_UPSTREAM_CHARTS: "upstream" })).toThrow(/must be real or stand-in, not upstream/u)
  })

  it("holds the real package of every chart both pinned AICR recipes name, each matching its index digest", () => {
    const real = readRealCharts(dir!)
    const wanted = ALL_AICR_COMPONENTS.filter((c) => c.chart !== undefined)
      .map((c) => `${c.chart}@${c.version}`)
      .sort()
    expect(real.map((c) => `${c.name}@${c.version}`).sort()).toEqual(wanted)
    for (const c of real) {
      expect(c.digest).toBe(`sha256:${createHash("sha256").update(c.tgz).digest("hex")}`)
      expect(c.entry).toMatchObject({ name: c.name, version: c.version })
    }
  })

  it("refuses a package whose bytes do not match the index", () => {
    const bad = mkdtempSync(join(tmpdir(), "bad-charts-"))
    const pkg = packageChart(FIXTURE_CHARTS[0]!)
    writeFileSync(join(bad, pkg.file), Buffer.concat([pkg.tgz, Buffer.from([0])]))
    writeFileSync(join(bad, "index.yaml"), indexYaml([pkg]))
    expect(() => readRealCharts(bad)).toThrow(/is not the index's/u)
  })

  it("keeps a real package's own index entry (apiVersion, appVersion, dependencies) in the served index", () => {
    const real = readRealCharts(dir!)
    const kps = real.find((c) => c.name === "kube-prometheus-stack")!
    const served = parse(indexYaml([kps])) as { entries: Record<string, Array<Record<string, unknown>>> }
    expect(served.entries["kube-prometheus-stack"]).toEqual([{ ...kps.entry, urls: [kps.file] }])
    expect(served.entries["kube-prometheus-stack"]![0]!.dependencies).toBeDefined()
  })
})
