import { fixtureBundle, fixtureRecipe, type RecipeResult } from "@aicr/chart-upstream"
import { describe, expect, it } from "vitest"
import { contentData, INPUT_DIGEST } from "../test/support/fixtures"
import { readResolution, type Resolution } from "./content"
import { bundleTag, planMirror, type PlanItem } from "./plan"

const prefix = { registry: "127.0.0.1:5000", prefix: "aicr/cluster" }
const resolutionOf = (data: Record<string, string>): Resolution => {
  const r = readResolution(data)
  if (!r.ok) throw new Error(r.why)
  return r.resolution
}

describe("readResolution", () => {
  it("reads every release of the fixture recipe in deployment order, with manifests and no local charts", () => {
    const r = resolutionOf(contentData())
    expect(r.releases.map((x) => x.name)).toEqual(fixtureRecipe().deploymentOrder)
    const gpu = r.releases.find((x) => x.name === "gpu-operator")!
    expect(gpu).toMatchObject({ namespace: "gpu-operator", source: "https://helm.ngc.nvidia.com/nvidia", chart: "gpu-operator", version: "v25.10.1" })
    expect(gpu.manifests.map(([f]) => f)).toEqual(["dcgm-exporter.yaml"])
    expect(r.releases.find((x) => x.name === "skyhook-customizations")).toMatchObject({ source: "", manifests: [["tuning.yaml", expect.any(String)]] })
    expect(r.bundle.files["deploy.sh"]).toContain("Deployment complete")
  })

  it("skips a component the bundle dropped (disabled)", () => {
    const bundle = fixtureBundle()
    const files = Object.fromEntries(Object.entries(bundle.files).filter(([p]) => !p.startsWith("aws-efa/")))
    const r = resolutionOf(contentData(fixtureRecipe(), { files, modes: bundle.modes }))
    expect(r.releases.map((x) => x.name)).not.toContain("aws-efa")
  })

  const broken: Array<[string, Record<string, string>, RegExp]> = [
    ["no recipe.json", { "values.json": contentData()["values.json"]! }, /no recipe\.json/],
    ["recipe.json that is not JSON", { ...contentData(), "recipe.json": "{" }, /not JSON/],
    ["a recipe without deploymentOrder", { ...contentData(), "recipe.json": '{"componentRefs":[]}' }, /RecipeResult/],
    ["values.json that is not a Bundle", { ...contentData(), "values.json": '{"files":{}}' }, /Bundle/],
    [
      "a bundle path escaping the tree",
      { ...contentData(), "values.json": JSON.stringify({ kind: "Bundle", files: { "../etc/passwd": "x" } }) },
      /relative path/,
    ],
    ["an argocd bundle", { ...contentData(), "values.json": JSON.stringify({ kind: "Bundle", deployer: "argocd", files: {} }) }, /argocd/],
    ["an order naming an unknown component", { ...contentData(), "recipe.json": JSON.stringify({ ...fixtureRecipe(), deploymentOrder: ["ghost"] }) }, /ghost/],
  ]
  it.each(broken)("refuses %s", (_name, data, why) => {
    const r = readResolution(data)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.why).toMatch(why)
  })
})

describe("planMirror", () => {
  const plan = planMirror(resolutionOf(contentData()), INPUT_DIGEST, prefix)
  if (!plan.ok) throw new Error(JSON.stringify(plan.unsupported))
  const byKey = (k: string) => plan.plan.items.find((i) => i.key === k) as PlanItem

  it("copies each upstream chart to <prefix>/charts/<chart>, tagged with its version", () => {
    expect(byKey("aws-efa")).toMatchObject({ _tag: "Chart", repository: "127.0.0.1:5000/aicr/cluster/charts/aws-efa-k8s-device-plugin", tag: "v0.5.3" })
    expect(byKey("kai-scheduler")).toMatchObject({ _tag: "Chart", source: { _tag: "Oci", repository: "ghcr.io/nvidia/kai-scheduler/kai-scheduler" } })
  })

  it("wraps a manifest-only release into <prefix>/wrappers/<release> under the release's own key", () => {
    expect(byKey("skyhook-customizations")).toMatchObject({
      _tag: "Wrapper",
      chart: "skyhook-customizations",
      repository: "127.0.0.1:5000/aicr/cluster/wrappers/skyhook-customizations",
    })
  })

  it("wraps the extra manifests of a chart release under <release>-manifests", () => {
    const w = byKey("gpu-operator-manifests")
    expect(w).toMatchObject({
      _tag: "Wrapper",
      release: "gpu-operator",
      chart: "gpu-operator",
      repository: "127.0.0.1:5000/aicr/cluster/wrappers/gpu-operator",
    })
    expect(w._tag === "Wrapper" && w.files.map((f) => f.path)).toEqual([
      "gpu-operator/Chart.yaml",
      "gpu-operator/templates/manifests.yaml",
      "gpu-operator/manifests/dcgm-exporter.yaml",
    ])
    expect(byKey("gpu-operator")).toMatchObject({ _tag: "Chart" })
  })

  it("versions wrappers by content, so changed manifests get a new tag and equal ones the same", () => {
    const again = planMirror(resolutionOf(contentData()), INPUT_DIGEST, prefix)
    const w1 = byKey("gpu-operator-manifests")
    expect(again.ok && again.plan.items.find((i) => i.key === "gpu-operator-manifests")!.tag).toBe(w1.tag)
    expect(w1.tag).toMatch(/^0\.0\.0-aicr-[a-f0-9]{16}$/)
    const bundle = fixtureBundle()
    const files = { ...bundle.files, "gpu-operator/manifests/dcgm-exporter.yaml": "kind: ConfigMap\n" }
    const changed = planMirror(resolutionOf(contentData(fixtureRecipe(), { files, modes: bundle.modes })), INPUT_DIGEST, prefix)
    expect(changed.ok && changed.plan.items.find((i) => i.key === "gpu-operator-manifests")!.tag).not.toBe(w1.tag)
  })

  it("has one item per chart, one per manifest wrapper, and the bundle tagged by input", () => {
    expect(plan.plan.items).toHaveLength(13 + 3)
    expect(plan.plan.bundle).toMatchObject({ repository: "127.0.0.1:5000/aicr/cluster/bundles/cluster", tag: bundleTag(INPUT_DIGEST) })
    expect(bundleTag(INPUT_DIGEST)).toBe(`input-${INPUT_DIGEST.slice(7, 39)}`)
  })

  it("pushes a local chart from the bundle to <prefix>/wrappers/<chart> with its own version", () => {
    const bundle = fixtureBundle()
    const files = {
      ...bundle.files,
      "aws-efa/chart/Chart.yaml": "apiVersion: v2\nname: efa-local\nversion: 1.2.3\n",
      "aws-efa/chart/templates/x.yaml": "kind: X\n",
    }
    const p = planMirror(resolutionOf(contentData(fixtureRecipe(), { files, modes: bundle.modes })), INPUT_DIGEST, prefix)
    expect(p.ok && p.plan.items.find((i) => i.key === "aws-efa")).toMatchObject({
      _tag: "Wrapper",
      chart: "efa-local",
      version: "1.2.3",
      repository: "127.0.0.1:5000/aicr/cluster/wrappers/efa-local",
      tag: "1.2.3",
    })
  })

  const unsupported: Array<[string, (r: RecipeResult) => RecipeResult, RegExp]> = [
    [
      "a Kustomize component",
      (r) => ({ ...r, componentRefs: r.componentRefs.map((c) => (c.name === "aws-efa" ? { ...c, type: "Kustomize" as const } : c)) }),
      /Kustomize/,
    ],
    [
      "a git source",
      (r) => ({ ...r, componentRefs: r.componentRefs.map((c) => (c.name === "aws-efa" ? { ...c, source: "git://example/x" } : c)) }),
      /git:\/\//,
    ],
    [
      "a release with neither chart nor manifests",
      (r) => ({ ...r, componentRefs: r.componentRefs.map((c) => (c.name === "aws-efa" ? { ...c, source: "", chart: undefined as never } : c)) }),
      /neither/,
    ],
  ]
  it.each(unsupported)("reports %s as unsupported, naming the release", (_name, edit, why) => {
    const p = planMirror(resolutionOf(contentData(edit(fixtureRecipe()))), INPUT_DIGEST, prefix)
    expect(p.ok).toBe(false)
    if (!p.ok) expect(p.unsupported).toEqual([{ release: "aws-efa", why: expect.stringMatching(why) }])
  })
})
