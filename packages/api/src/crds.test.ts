import { readFileSync } from "node:fs"
import { parse } from "yaml"
import { describe, expect, it } from "vitest"
import { renderConditionCatalog } from "./catalog-doc"
import { assertedIn, tierTestFiles } from "./asserted-in-tests"
import { ClusterRuntimeCrd, renderCrds, RuntimeRolloutCrd } from "./crds"
import { buildCrd } from "./crd"
import { unbounded } from "./structural"

const CRDS_DIR = new URL("../../../crds/", import.meta.url)
const REGENERATE = "crds/ is out of date with packages/api: run `npx tsx packages/api/src/generate-crds.ts` (or `npm run crds`) and commit the result"

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- generated CRD JSON, indexed freely
const schemaOf = (crd: any) => crd.spec.versions[0].schema.openAPIV3Schema

describe("generated CRDs (golden)", () => {
  it.each(renderCrds().map((c) => [c.file, c.yaml] as const))("crds/%s matches the schemas", (file, yaml) => {
    let onDisk = ""
    try {
      onDisk = readFileSync(new URL(file, CRDS_DIR), "utf8")
    } catch {
      expect.fail(`crds/${file} is missing. ${REGENERATE}`)
    }
    expect(onDisk === yaml, REGENERATE).toBe(true)
  })

  it("docs/api/conditions.md matches the condition catalogs", () => {
    let onDisk = ""
    try {
      onDisk = readFileSync(new URL("../../../docs/api/conditions.md", import.meta.url), "utf8")
    } catch {
      expect.fail(`docs/api/conditions.md is missing. ${REGENERATE}`)
    }
    expect(
      onDisk === renderConditionCatalog(assertedIn(tierTestFiles()).of),
      `${REGENERATE} (the page also lists the int and e2e tests asserting each reason)`,
    ).toBe(true)
  }, 60_000) // parses every int and e2e test file: seconds on a loaded machine
})

describe("CRD shape", () => {
  const runtime = buildCrd(ClusterRuntimeCrd) as any // eslint-disable-line @typescript-eslint/no-explicit-any
  const rollout = buildCrd(RuntimeRolloutCrd) as any // eslint-disable-line @typescript-eslint/no-explicit-any

  it.each([
    {
      name: "ClusterRuntime is cluster-scoped with short name aicrrt",
      crd: runtime,
      want: { scope: "Cluster", shortName: "aicrrt", name: "clusterruntimes.operator.aicr.run" },
    },
    {
      name: "RuntimeRollout is cluster-scoped with short name aicrro",
      crd: rollout,
      want: { scope: "Cluster", shortName: "aicrro", name: "runtimerollouts.operator.aicr.run" },
    },
  ])("$name", ({ crd, want }) => {
    expect({ scope: crd.spec.scope, shortName: crd.spec.names.shortNames[0], name: crd.metadata.name }).toEqual(want)
    expect(crd.spec.versions[0]).toMatchObject({ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } })
    expect(crd.spec.names.categories).toContain("aicr")
  })

  it.each([
    { name: "ClusterRuntime", crd: runtime },
    { name: "RuntimeRollout", crd: rollout },
  ])("$name bounds every string, list and map, and has conditions as a list map keyed by type", ({ crd }) => {
    const schema = schemaOf(crd)
    expect(unbounded(schema.properties.spec, "spec")).toEqual([])
    expect(unbounded(schema.properties.status, "status")).toEqual([])
    expect(schema.properties.status.properties.conditions).toMatchObject({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })
    expect(JSON.stringify(schema)).not.toMatch(/"\$ref"|"anyOf"|"oneOf"|"allOf"|"additionalProperties":(true|false)/)
  })

  it.each([
    { name: "ClusterRuntime", crd: runtime, rooms: ["discovery", "resolution", "mirror", "plans", "engine", "credentials"] },
    { name: "RuntimeRollout", crd: rollout, rooms: ["assessment", "approval", "steps", "validation"] },
  ])("$name gives each status room its own object property", ({ crd, rooms }) => {
    const props = schemaOf(crd).properties.status.properties
    for (const r of rooms) expect(props[r]?.type, r).toBe("object")
  })

  it("defaults spec.validation.deployment to Required", () => {
    expect(schemaOf(runtime).properties.spec.properties.validation).toMatchObject({
      default: {},
      properties: { deployment: { default: "Required", enum: ["Required", "Disabled"] } },
    })
  })

  it("enforces the singleton name with a root CEL rule", () => {
    expect(schemaOf(runtime)["x-kubernetes-validations"]).toEqual([expect.objectContaining({ rule: "self.metadata.name == 'cluster'" })])
  })

  it.each([
    {
      name: "ClusterRuntime prints Ready, Reason, Step and Age, and Stalled, Rollout and Active Plan with -o wide",
      crd: runtime,
      want: ["Ready", "Reason", "Step", "Stalled*", "Rollout*", "Active Plan*", "Age"],
    },
    {
      name: "RuntimeRollout prints Kind, Approved, Progressing, Step, Outcome and Age",
      crd: rollout,
      want: ["Kind", "Approved", "Progressing", "Step", "Outcome", "To*", "Deadline*", "Age"],
    },
  ])("$name", ({ crd, want }) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    expect(crd.spec.versions[0].additionalPrinterColumns.map((c: any) => `${c.name}${c.priority === 1 ? "*" : ""}`)).toEqual(want)
  })

  it("writes YAML without anchors, so every rule reads where it applies", () => {
    for (const { yaml } of renderCrds()) {
      expect(yaml).not.toMatch(/[&*]a\d+/)
      expect(parse(yaml)).toBeTruthy()
    }
  })
})
