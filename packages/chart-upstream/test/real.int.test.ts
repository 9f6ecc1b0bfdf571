// The local upstream serving the REAL chart packages (third-party/charts) against the real helm v4 CLI: every chart
// both pinned AICR recipes name is served at its public repository path, `helm repo add` + `helm pull` get the
// project's own archive byte for byte over HTTP, `helm pull oci://…` over OCI, and `helm show chart` reads the
// project's own metadata. Without the folder this fails (it is part of the environment), it is not skipped.
import { createHash } from "node:crypto"
import { mkdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { isolatedHelm, type IsolatedHelm } from "@aicr/testing/harness"
import { parse } from "yaml"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ALL_AICR_COMPONENTS, type ChartUpstream, readRealCharts, realChartsDir, startChartUpstream } from "../src/index"

let upstream: ChartUpstream
let h: IsolatedHelm
const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`

beforeAll(async () => {
  upstream = await startChartUpstream({ components: ALL_AICR_COMPONENTS, charts: "real" })
  h = await isolatedHelm("chart-upstream-real-")
})

afterAll(async () => {
  await upstream?.stop()
  await h?.cleanup()
})

describe("local chart upstream with the real charts", () => {
  it("serves the project's own package for every chart of both recipes, none a stand-in", () => {
    const real = readRealCharts(realChartsDir()!)
    expect(upstream.charts).toHaveLength(real.length)
    for (const c of upstream.charts) {
      expect(c.origin, `${c.name}@${c.version}`).toBe("real")
      expect(c.digest).toBe(real.find((r) => r.name === c.name && r.version === c.version)!.digest)
    }
    expect(upstream.rewrites["https://helm.ngc.nvidia.com/nvidia"]).toBe(`${upstream.httpUrl}/helm.ngc.nvidia.com/nvidia`)
    expect(upstream.rewrites["oci://ghcr.io/nvidia/kai-scheduler"]).toBe(`${upstream.ociPrefix}/ghcr.io/nvidia/kai-scheduler`)
  })

  it("lets helm add each HTTP repository and pull each chart, byte for byte the project's archive", async () => {
    const out = join(h.work, "pulled-http")
    await mkdir(out)
    const http = upstream.charts.filter((c) => c.ref === undefined)
    const repos = [...new Set(http.map((c) => c.url))]
    for (const [i, url] of repos.entries()) await h.helm("repo", "add", `r${i}`, url)
    await h.helm("repo", "update")
    for (const c of http) {
      await h.helm("pull", `r${repos.indexOf(c.url)}/${c.name}`, "--version", c.version, "--destination", out)
      expect(sha(await readFile(join(out, `${c.name}-${c.version}.tgz`))), `${c.name}@${c.version}`).toBe(c.digest)
    }
  })

  it("lets helm pull the OCI sources byte for byte and show each chart's own metadata", async () => {
    const out = join(h.work, "pulled-oci")
    await mkdir(out)
    for (const c of upstream.charts.filter((x) => x.ref !== undefined)) {
      await h.helm("pull", `${c.url}/${c.name}`, "--version", c.version, "--plain-http", "--destination", out)
      const file = join(out, `${c.name}-${c.version}.tgz`)
      expect(sha(await readFile(file)), `${c.name}@${c.version}`).toBe(c.digest)
      const meta = parse(await h.helm("show", "chart", file)) as { name: string; version: string; appVersion: string }
      expect(meta).toMatchObject({ name: c.name, version: c.version })
    }
  })
})
