import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { canonicalJson, digestOf, sha256 } from "./digest"
import { MAX_OVERRIDE_PATH_LENGTH, MAX_OVERRIDE_VALUE_BYTES, MAX_OVERRIDES } from "./clusterruntime"
import { MAX_NODE_SELECTOR_ENTRIES, MAX_TOLERATIONS } from "./common"
import { desiredStateDigest, encodePlan, inputDigest, readPlan, type ResolutionInputs } from "./plan"
import { eksClusterRuntime, samplePlan } from "./samples"

describe("canonicalJson", () => {
  it.each([
    { name: "sorts object keys", given: { b: 1, a: { d: 2, c: 3 } }, want: '{"a":{"c":3,"d":2},"b":1}' },
    { name: "keeps array order", given: [3, 1, 2], want: "[3,1,2]" },
    { name: "drops undefined members", given: { a: undefined, b: null }, want: '{"b":null}' },
    { name: "writes numbers as ECMAScript does", given: { n: 1e21, m: 0.1, z: -0 }, want: '{"m":0.1,"n":1e+21,"z":0}' },
    { name: "escapes strings as JSON.stringify does", given: { s: 'a"\n\u2028' }, want: '{"s":"a\\"\\n\u2028"}' },
    { name: "sorts keys by UTF-16 code units", given: { é: 1, z: 2, Z: 3 }, want: '{"Z":3,"z":2,"é":1}' },
  ])("$name", ({ given, want }) => {
    expect(canonicalJson(given)).toBe(want)
  })

  it.each([
    { name: "refuses NaN", given: { n: Number.NaN } },
    { name: "refuses Infinity", given: [Number.POSITIVE_INFINITY] },
    { name: "refuses a Date", given: { d: new Date(0) } },
    { name: "refuses a function", given: { f: () => 1 } },
  ])("$name", ({ given }) => {
    expect(() => canonicalJson(given)).toThrow(/canonicalJson/)
  })

  it("digests as sha256 of the canonical bytes", () => {
    expect(digestOf({ b: 1, a: 2 })).toBe(sha256('{"a":2,"b":1}'))
    expect(sha256("")).toBe("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })
})

describe("desiredStateDigest", () => {
  const plan = samplePlan()
  it.each([
    { name: "ignores createdAt", change: { createdAt: "2030-01-01T00:00:00Z" } },
    { name: "ignores content ConfigMap names", change: { content: [{ ...plan.content[0]!, configMap: "aicr-content-other" }] } },
    { name: "ignores the inputDigest and the AICR flags", change: { inputDigest: `sha256:${"9".repeat(64)}`, flags: ["bundle"] } },
    { name: "ignores the order of the releases array", change: { releases: [...plan.releases].reverse() } },
    { name: "ignores upstream provenance and readiness gates", change: { releases: plan.releases.map(({ upstream: _u, readinessGate: _g, ...r }) => r) } },
  ])("$name", ({ change }) => {
    expect(desiredStateDigest({ ...plan, ...change })).toBe(plan.desiredStateDigest)
  })

  it.each([
    {
      name: "changes with a chart digest",
      releases: plan.releases.map((r, i) => (i === 0 ? { ...r, chart: { ...r.chart, digest: `sha256:${"7".repeat(64)}` } } : r)),
    },
    { name: "changes with a values digest", releases: plan.releases.map((r, i) => (i === 1 ? { ...r, values: { digest: `sha256:${"8".repeat(64)}` } } : r)) },
    { name: "changes with a release namespace", releases: plan.releases.map((r, i) => (i === 1 ? { ...r, namespace: "gpu" } : r)) },
    { name: "changes when a release is removed", releases: plan.releases.slice(1) },
  ])("$name", ({ releases }) => {
    expect(desiredStateDigest({ ...plan, releases })).not.toBe(plan.desiredStateDigest)
  })
})

describe("inputDigest", () => {
  const spec = eksClusterRuntime().spec
  const inputs: ResolutionInputs = {
    aicr: { version: "v1.1.2", image: "ghcr.io/nvidia/aicr@sha256:" + "a".repeat(64) },
    ...spec,
    overrides: [
      { path: "b:x", value: "1" },
      { path: "a:y", value: "2" },
    ],
    discovered: { acceleratedNodes: 4 },
  }
  it("does not depend on the order of overrides", () => {
    expect(inputDigest({ ...inputs, overrides: [...inputs.overrides!].reverse() })).toBe(inputDigest(inputs))
  })
  it.each([
    { name: "changes with the AICR version", change: { aicr: { ...inputs.aicr, version: "v1.1.3" } } },
    { name: "changes with the intent", change: { intent: "inference" } },
    {
      name: "changes with an override value",
      change: {
        overrides: [
          { path: "b:x", value: "2" },
          { path: "a:y", value: "2" },
        ],
      },
    },
    { name: "changes with the discovered node count", change: { discovered: { acceleratedNodes: 5 } } },
  ])("$name", ({ change }) => {
    expect(inputDigest({ ...inputs, ...change })).not.toBe(inputDigest(inputs))
  })
})

describe("readPlan", () => {
  const plan = samplePlan()
  it("reads back what encodePlan wrote", () => {
    expect(readPlan(encodePlan(plan))).toEqual(Result.succeed(plan))
  })

  it("reads back a plan whose flags are the largest bundle argv the ClusterRuntime CRD admits", () => {
    // 64 overrides of 4 KiB with the longest path, 16 selector entries and 16 tolerations per group (the CRD's limits).
    const pair = (flag: string, value: string) => [flag, value]
    // A label key at its limit: a 251-character DNS prefix and a 63-character name.
    const longKey = (i: number) => `${["a", "b", "c"].map((c) => c.repeat(63)).join(".")}.${"d".repeat(59)}/${"k".repeat(61)}${`${i}`.padStart(2, "0")}`
    const path = `gpu-operator:${"p".repeat(MAX_OVERRIDE_PATH_LENGTH - "gpu-operator:".length)}`
    const flags = [
      ...["bundle", "--recipe", `cm://aicr-system/aicr-recipe-${"a".repeat(12)}`, "--deployer", "helm"],
      ...(["--system-node-selector", "--accelerated-node-selector"] as const).flatMap((f) =>
        Array.from({ length: MAX_NODE_SELECTOR_ENTRIES }, (_, i) => pair(f, `${longKey(i)}=${"v".repeat(63)}`)).flat(),
      ),
      ...(["--system-node-toleration", "--accelerated-node-toleration"] as const).flatMap((f) =>
        Array.from({ length: MAX_TOLERATIONS }, (_, i) => pair(f, `${longKey(i)}=${"v".repeat(63)}:NoSchedule`)).flat(),
      ),
      ...Array.from({ length: MAX_OVERRIDES }, () => pair("--set", `${path}=${"x".repeat(MAX_OVERRIDE_VALUE_BYTES)}`)).flat(),
      ...["--output", `oci://registry.example/aicr/bundles/cluster:aicr-${"b".repeat(32)}`, "--plain-http", "--image-refs", "/dev/termination-log"],
    ]
    const big = { ...plan, flags }
    expect(readPlan(encodePlan(big))).toEqual(Result.succeed(big))
  })

  it.each([
    { name: "refuses text that is not JSON", text: "{", want: /not JSON/ },
    { name: "refuses a document of another kind", text: encodePlan({ ...plan, kind: "Recipe" } as never), want: /Plan schema/ },
    {
      name: "refuses a plan whose digest does not match its releases",
      text: encodePlan({ ...plan, desiredStateDigest: `sha256:${"0".repeat(64)}` }),
      want: /does not match its releases/,
    },
    { name: "refuses a release listed twice", text: JSON.stringify({ ...plan, releases: [plan.releases[0], plan.releases[0]] }), want: /twice/ },
    {
      name: "refuses a dependency on an unknown release",
      text: JSON.stringify({ ...plan, releases: [plan.releases[1]] }),
      want: /unknown releases: gpu-operator→cert-manager/,
    },
    { name: "refuses a document over 1 MiB", text: " ".repeat(1024 * 1024 + 1), want: /more than 1048576/ },
  ])("$name", ({ text, want }) => {
    const r = readPlan(text)
    expect(Result.isFailure(r) && want.test(r.failure)).toBe(true)
  })
})
