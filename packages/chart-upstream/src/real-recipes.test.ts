// The fixture charts against the REAL recipes of both pinned AICR binaries: every chart a real
// h100-eks-ubuntu-training-kubeflow recipe names (source, chart, version, namespace) is one the local upstream serves.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { aicrBinary, readVersions } from "@aicr/testing/harness"
import { describe, expect, it } from "vitest"
import { ALL_AICR_COMPONENTS, FIXTURE_COMPONENTS } from "./index"

const { aicr, aicrPrevious } = readVersions()

const realRecipe = (version: string) => {
  const dir = mkdtempSync(join(tmpdir(), "upstream-recipe-"))
  execFileSync(
    aicrBinary(version),
    [
      "recipe",
      "--service",
      "eks",
      "--accelerator",
      "h100",
      "--os",
      "ubuntu",
      "--intent",
      "training",
      "--platform",
      "kubeflow",
      "--format",
      "json",
      "--output",
      join(dir, "r.json"),
    ],
    {
      env: { PATH: process.env.PATH ?? "", HOME: dir },
      stdio: "ignore",
    },
  )
  return JSON.parse(readFileSync(join(dir, "r.json"), "utf8")) as {
    deploymentOrder: string[]
    componentRefs: Array<{ name: string; namespace: string; source: string; chart?: string; version?: string; dependencyRefs?: string[] }>
  }
}

describe.each([aicr, aicrPrevious])("the real AICR %s recipe", (version) => {
  const recipe = realRecipe(version)
  it("names 13 releases, each served with its source, chart, version and namespace", () => {
    expect(recipe.deploymentOrder).toHaveLength(13)
    for (const c of recipe.componentRefs) {
      const served = ALL_AICR_COMPONENTS.filter((f) => f.name === c.name && f.version === c.version)
      expect(served, `${c.name} ${c.version}`).toHaveLength(1)
      expect(served[0]).toMatchObject({ namespace: c.namespace, source: c.source, ...(c.chart ? { chart: c.chart } : {}) })
    }
  })
  it("orders the shared releases as the fixtures do", () => {
    const fixtureOrder = FIXTURE_COMPONENTS.map((c) => c.name).filter((n) => recipe.deploymentOrder.includes(n))
    expect(fixtureOrder).toEqual(recipe.deploymentOrder)
  })
})
