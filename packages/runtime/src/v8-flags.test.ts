// The V8 flags of the controllers that set them (the step-executor, the validation gate, the resolver) take effect in the bundle as
// it ships: each bundle is built and started as the image starts it (`node main.mjs [flags]`, nothing on node's command line but a probe), and V8 itself says whether it
// still optimizes. Node documents `v8.setFlagsFromString` after start as undefined behaviour, so this is checked on
// the Node the tests run on (the image's), not assumed.
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { DEFAULT_V8_FLAGS, MEMORY_V8_FLAGS, v8FlagsOf } from "./v8-flags"

/** The controllers whose main.ts imports their v8-flags.ts first. */
const APPS = ["step-executor", "validation-gate", "resolver", "planner"] as const

// %GetOptimizationStatus bits (V8's runtime-test.cc, OptimizationStatus).
const NEVER_OPTIMIZE = 1 << 1
const OPTIMIZED = 1 << 4
const MAGLEVVED = 1 << 5
const TURBOFANNED = 1 << 6

/**
 * Loaded with `--import` before the bundle, under `--allow-natives-syntax`. When the process exits (the bundle has
 * run its top and its main), it asks V8 to optimize two fresh functions on their next call, one with TurboFan and one
 * with Maglev, and writes their optimization status.
 */
const PROBE = `import { writeFileSync } from "node:fs"
process.on("exit", () => {
  function turbofan(x) { return x * 3 + 1 }
  %PrepareFunctionForOptimization(turbofan); turbofan(1); turbofan(2); %OptimizeFunctionOnNextCall(turbofan); turbofan(3)
  function maglev(x) { return x * 5 + 1 }
  %PrepareFunctionForOptimization(maglev); maglev(1); maglev(2); %OptimizeMaglevOnNextCall(maglev); maglev(3)
  writeFileSync(process.env.PROBE_OUT, JSON.stringify({ turbofan: %GetOptimizationStatus(turbofan), maglev: %GetOptimizationStatus(maglev) }))
})
`

/**
 * Loaded with `--import` before the bundle: records every flag the bundle sets through `v8.setFlagsFromString` (the
 * ES module binding the bundle imports is synced to the wrapper) and writes them at exit.
 */
const FLAGS_PROBE = `import { createRequire, syncBuiltinESMExports } from "node:module"
import { writeFileSync } from "node:fs"
const v8 = createRequire(import.meta.url)("node:v8")
const set = v8.setFlagsFromString
const flags = []
v8.setFlagsFromString = (f) => { flags.push(f); return set(f) }
syncBuiltinESMExports()
process.on("exit", () => writeFileSync(process.env.PROBE_OUT, JSON.stringify(flags)))
`

let work: string
const entries = new Map<string, string>()

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "v8-flags-"))
  for (const app of APPS) entries.set(app, (await buildApp(app, join(work, app))).entry)
  writeFileSync(join(work, "probe.mjs"), PROBE)
  writeFileSync(join(work, "flags-probe.mjs"), FLAGS_PROBE)
}, 120_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

/** Runs the shipped bundle until it exits (its kubeconfig does not exist) and returns what the probe read. */
const probed = async <T>(app: string, probe: string, nodeFlags: ReadonlyArray<string>, env: Record<string, string>): Promise<T> => {
  const entry = entries.get(app)!
  const out = join(work, `probe-${Math.random().toString(36).slice(2, 8)}.json`)
  const child = spawn(process.execPath, [...nodeFlags, "--import", join(work, probe), entry, "--kubeconfig", join(work, "absent")], {
    stdio: "ignore",
    env: { PATH: process.env["PATH"] ?? "", NODE_ENV: "production", PROBE_OUT: out, ...env },
  })
  await once(child, "exit")
  return JSON.parse(readFileSync(out, "utf8")) as T
}
const statusOf = (app: string, env: Record<string, string>) => probed<{ turbofan: number; maglev: number }>(app, "probe.mjs", ["--allow-natives-syntax"], env)

it("the flags are no optimizing compilers, and AICR_V8_FLAGS replaces them", () => {
  expect(DEFAULT_V8_FLAGS).toEqual(["--no-opt", "--no-maglev"])
  expect(v8FlagsOf(undefined)).toEqual(DEFAULT_V8_FLAGS)
  expect(v8FlagsOf("")).toEqual([])
  expect(v8FlagsOf(" --no-opt  --max-lazy ")).toEqual(["--no-opt", "--max-lazy"])
})

describe.each(APPS)("the %s's V8 flags", (app) => {
  it("take effect in the shipped bundle: neither TurboFan nor Maglev optimizes a function asked to", { timeout: 60_000 }, async () => {
    const s = await statusOf(app, {})
    expect(s.turbofan & NEVER_OPTIMIZE).toBe(NEVER_OPTIMIZE)
    expect(s.turbofan & (OPTIMIZED | TURBOFANNED)).toBe(0)
    expect(s.maglev & (OPTIMIZED | MAGLEVVED)).toBe(0)
  })

  it("with AICR_V8_FLAGS empty, the same bundle optimizes them (the check above can fail)", { timeout: 60_000 }, async () => {
    const s = await statusOf(app, { AICR_V8_FLAGS: "" })
    expect(s.turbofan & NEVER_OPTIMIZE).toBe(0)
    expect(s.turbofan & (OPTIMIZED | TURBOFANNED)).toBe(OPTIMIZED | TURBOFANNED)
    expect(s.maglev & (OPTIMIZED | MAGLEVVED)).toBe(OPTIMIZED | MAGLEVVED)
  })
})

describe("the resolver's and the planner's --optimize-for-size", () => {
  // Its effect (V8's pooled pages given back after the first list of 5,000 Nodes) is measured by the resolver bench
  // (docs/adr/20261204-resolver-optimize-for-size.md); here: the shipped bundle sets it at start, before it loads.
  it("is set by each shipped bundle with the optimizing compilers off, and AICR_V8_FLAGS replaces them", { timeout: 90_000 }, async () => {
    expect(MEMORY_V8_FLAGS).toEqual(["--optimize-for-size", ...DEFAULT_V8_FLAGS])
    for (const app of ["resolver", "planner"]) {
      expect(await probed<string[]>(app, "flags-probe.mjs", [], {}), app).toEqual(MEMORY_V8_FLAGS)
      expect(await probed<string[]>(app, "flags-probe.mjs", [], { AICR_V8_FLAGS: "" }), app).toEqual([])
    }
    expect(await probed<string[]>("step-executor", "flags-probe.mjs", [], {})).toEqual(DEFAULT_V8_FLAGS)
  })
})
