// What AICR makes of bad overrides, on the real outputs of both pinned binaries: a malformed --set is refused
// (exit 2), an unknown component key is ignored silently, a path through a non-map is left out with only a log
// line; overrideProblems reads the latter two from the rendered bundle.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Result } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { aicr, readTree, SAMPLE_CRITERIA, tempDir, VERSIONS } from "../test/support/real-cli"
import {
  type BundleRelease,
  capabilitiesOf,
  coerceSetValue,
  componentsInOrder,
  invalidSetFlagOf,
  overrideProblems,
  parseAicrFailure,
  parseBundle,
  parseRecipe,
  reasonOf,
} from "./index"

const GOOD = [
  { path: "gpuoperator:driver.version", value: "580.105.08" },
  { path: "certmanager:replicaCount", value: "2" },
  { path: "gpuoperator:dcgmExporter.enabled", value: "false" },
  { path: "gpuoperator:driver.brandNewKey", value: "x" },
]
const UNKNOWN_KEY = { path: "nosuchcomponent:foo.bar", value: "1" }
const NOT_A_MAP = { path: "gpuoperator:driver.version.major", value: "580" }

describe.each(VERSIONS)("AICR %s and --set", (version) => {
  const caps = capabilitiesOf(version)!
  let recipe: string
  const render = async (sets: ReadonlyArray<{ path: string; value: string }>): Promise<ReadonlyArray<BundleRelease>> => {
    const out = join(tempDir(), "bundle")
    const r = await aicr(version, ["bundle", "--recipe", recipe, "--output", out, ...sets.flatMap((s) => ["--set", `${s.path}=${s.value}`])])
    expect(r.code, r.stderr).toBe(0)
    const order = componentsInOrder(Result.getOrThrow(parseRecipe(readFileSync(recipe, "utf8"), caps)))
    return Result.getOrThrow(parseBundle(readTree(out), caps.bundleLayout, order)).releases
  }
  beforeAll(async () => {
    recipe = join(tempDir(), "recipe.json")
    expect((await aicr(version, ["recipe", ...SAMPLE_CRITERIA, "--format", "json", "--output", recipe])).code).toBe(0)
  }, 60_000)

  it("overrides AICR applies (by component name or key, numbers, booleans, a new key) are no problem; enabled=false is not checked", async () => {
    expect(overrideProblems(GOOD, await render(GOOD))).toEqual([])
    const off = [{ path: "skyhookcustomizations:enabled", value: "false" }]
    expect(overrideProblems(off, await render(off))).toEqual([])
  }, 60_000)

  it("an unknown component key: AICR renders without it and exits 0; OverridePathUnknown naming it", async () => {
    const problems = overrideProblems([...GOOD, UNKNOWN_KEY], await render([...GOOD, UNKNOWN_KEY]))
    expect(problems).toEqual([
      { reason: "OverridePathUnknown", override: "nosuchcomponent:foo.bar=1", message: expect.stringContaining('no release is named "nosuchcomponent"') },
    ])
  }, 60_000)

  it("the component's name and its key mixed: AICR applies only the name's overrides, silently; OverridePathUnknown names the dropped one", async () => {
    const mixed = [
      { path: "gpuoperator:driver.brandNewKey", value: "x" },
      { path: "gpu-operator:dcgmExporter.enabled", value: "false" },
    ]
    expect(overrideProblems(mixed, await render(mixed))).toEqual([
      {
        reason: "OverridePathUnknown",
        override: "gpuoperator:driver.brandNewKey=x",
        message: "gpuoperator:driver.brandNewKey=x: the rendered values of gpu-operator do not carry it at driver.brandNewKey",
      },
    ])
  }, 60_000)

  it("a path through a string: AICR leaves it out and exits 0; InvalidOverride naming the segment", async () => {
    const out = join(tempDir(), "bundle")
    const r = await aicr(version, ["bundle", "--recipe", recipe, "--output", out, "--set", `${NOT_A_MAP.path}=${NOT_A_MAP.value}`])
    expect(r.code).toBe(0)
    expect(r.stderr).toContain("is not a map")
    const problems = overrideProblems([NOT_A_MAP], await render([NOT_A_MAP]))
    expect(problems).toEqual([
      {
        reason: "InvalidOverride",
        override: "gpuoperator:driver.version.major=580",
        message: "gpuoperator:driver.version.major=580: driver.version is a string in the values of gpu-operator, not a map, so AICR left the override out",
      },
    ])
  }, 60_000)

  it("an empty value: AICR refuses the --set (exit 2); invalidSetFlagOf names it", async () => {
    const r = await aicr(version, ["bundle", "--recipe", recipe, "--output", tempDir(), "--set", "gpuoperator:driver.version="])
    expect(r.code).toBe(2)
    const e = parseAicrFailure(r.stderr, r.code)
    expect(reasonOf(e)).toBe("AICRInvalidRequest")
    expect(invalidSetFlagOf(e)).toBe("gpuoperator:driver.version=")
  })
})

describe("coerceSetValue", () => {
  it.each([
    ["true", true],
    ["false", false],
    ["2", 2],
    ["-3", -3],
    ["1.5", 1.5],
    ["1.0", 1],
    ["v1.0", "v1.0"],
    ["", ""],
    ["yes", "yes"],
  ])("%j → %j", (v, want) => {
    expect(coerceSetValue(v)).toBe(want)
  })
  it("a failure that is not about --set is not an override refusal", () => {
    expect(
      invalidSetFlagOf(parseAicrFailure('{"level":"ERROR","msg":"command failed","error":"[NOT_FOUND] recipe data not found","exitCode":3}', 3)),
    ).toBeUndefined()
  })
})
