// The parsers, the error mapping and the flag builders, on real outputs of both pinned AICR binaries (generated
// here by running the CLI), plus the 1.x layout on a fixture built from its documentation (labelled as such).
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Result } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { aicr, readTree, SAMPLE_BUNDLE_FLAGS, SAMPLE_CRITERIA, tempDir, VERSIONS } from "../test/support/real-cli"
import {
  bundleDocument,
  bundleFlags,
  bundleFromEntries,
  capabilitiesOf,
  componentsInOrder,
  invalidCriterionOf,
  jobOutcome,
  outputOf,
  parseAicrErrorText,
  parseAicrFailure,
  parseBundle,
  parseRecipe,
  parseSnapshot,
  reasonOf,
  recipeArgs,
  snapshotFacts,
} from "./index"

const [CURRENT, PREVIOUS] = VERSIONS
const caps = (v: string) => capabilitiesOf(v)!

describe.each(VERSIONS)("AICR %s, real outputs", (version) => {
  const c = caps(version)
  let recipeText: string
  let bundle: { files: Record<string, string>; modes: Record<string, number> }
  beforeAll(async () => {
    const out = join(tempDir(), "recipe.json")
    const r = await aicr(version, recipeArgs({ service: "eks", accelerator: "h100", os: "ubuntu", intent: "training", platform: "kubeflow" }, out))
    expect(r.code).toBe(0)
    recipeText = readFileSync(out, "utf8")
    const dir = join(tempDir(), "bundle")
    const b = await aicr(version, ["bundle", "--recipe", out, "--output", dir, ...bundleFlags(SAMPLE_BUNDLE)])
    expect(b.code, b.stderr).toBe(0)
    bundle = readTree(dir)
  }, 120_000)

  it("the criteria values are those `aicr recipe --help` lists", async () => {
    const help = (await aicr(version, ["recipe", "--help"])).stdout
    for (const field of ["service", "accelerator", "intent", "os", "platform"] as const) {
      const line = help.split("\n").find((l) => new RegExp(`^\\s+--${field}\\b`).test(l))!
      const listed = /\(e\.g\. ([^)]+)\)/.exec(line)![1]!.split(", ")
      expect(listed, field).toEqual(c.criteria[field])
    }
  })

  it("recipe: the sample's 13 releases in deployment order, each dependency before its dependents", () => {
    const recipe = Result.getOrThrow(parseRecipe(recipeText, c))
    expect(recipe.metadata.version).toBe(c.version)
    const order = componentsInOrder(recipe)
    expect(order).toHaveLength(13)
    const index = new Map(order.map((x, i) => [x.name, i]))
    for (const x of order) for (const d of x.dependencyRefs ?? []) expect(index.get(d)!).toBeLessThan(index.get(x.name)!)
    const versions = Object.fromEntries(order.map((x) => [x.name, x.version]))
    if (version === PREVIOUS) expect(versions).toMatchObject({ "kai-scheduler": "v0.12.17", nvsentinel: "v0.10.0" })
    if (version === CURRENT) expect(versions).toMatchObject({ "kai-scheduler": "v0.13.0", nvsentinel: "v1.1.0" })
  })

  it("recipe: another version's recipe is AICRVersionMismatch; a 1.x apiVersion, a cut or a forged one AICRArtifactUnsupported", () => {
    const other = caps(version === CURRENT ? PREVIOUS : CURRENT)
    expect(Result.getFailure(parseRecipe(recipeText, other))).toMatchObject({ _tag: "Some", value: { reason: "AICRVersionMismatch" } })
    const modern = JSON.parse(recipeText)
    modern.apiVersion = "aicr.run/v1"
    expect(Result.getFailure(parseRecipe(JSON.stringify(modern), c))).toMatchObject({ _tag: "Some", value: { reason: "AICRArtifactUnsupported" } })
    expect(Result.getFailure(parseRecipe(recipeText.slice(0, recipeText.length / 2), c))).toMatchObject({
      _tag: "Some",
      value: { reason: "AICRArtifactUnsupported" },
    })
    const forged = JSON.parse(recipeText)
    forged.deploymentOrder.push("evil")
    const f = Result.getFailure(parseRecipe(JSON.stringify(forged), c))
    expect(f).toMatchObject({ _tag: "Some", value: { reason: "AICRArtifactUnsupported" } })
  })

  it("bundle: the flat layout's 13 folders, checksums verified, values and manifests per release", () => {
    const recipe = Result.getOrThrow(parseRecipe(recipeText, c))
    const parsed = Result.getOrThrow(parseBundle(bundle, c.bundleLayout, componentsInOrder(recipe)))
    expect(parsed.layout).toBe("flat")
    expect(parsed.releases.map((r) => r.name)).toEqual(recipe.deploymentOrder)
    expect(Object.keys(parsed.checksums).length).toBeGreaterThan(26)
    const gpu = parsed.releases.find((r) => r.name === "gpu-operator")!
    expect(gpu.values).toMatch(/driver:/)
    // The placement flags reached the values: the accelerated selector is gpu-operator's daemonsets.nodeSelector.
    expect(gpu.values).toMatch(/eks\.amazonaws\.com\/nodegroup: gpu/)
    expect(gpu.manifests.map(([f]) => f)).toEqual(["dcgm-exporter.yaml"])
    expect(bundle.modes["deploy.sh"]).toBe(0o755)
  })

  it("bundle: a tampered, a path-escaping or an oversized bundle is refused", () => {
    const recipe = Result.getOrThrow(parseRecipe(recipeText, c))
    const order = componentsInOrder(recipe)
    const tampered = { ...bundle, files: { ...bundle.files, "cert-manager/values.yaml": bundle.files["cert-manager/values.yaml"] + "\nx: 1\n" } }
    expect(Result.getFailure(parseBundle(tampered, "flat", order))).toMatchObject({
      _tag: "Some",
      value: { message: expect.stringMatching(/cert-manager\/values.yaml does not match its checksum/) },
    })
    const escaping = { ...bundle, files: { ...bundle.files, "../etc/passwd": "x" } }
    expect(Result.getFailure(parseBundle(escaping, "flat", order))).toMatchObject({
      _tag: "Some",
      value: { message: expect.stringMatching(/outside its directory/) },
    })
    const big = { ...bundle, files: { ...bundle.files, "README.md": "x".repeat(17 * 1024 * 1024) } }
    expect(Result.getFailure(parseBundle(big, "flat", order))).toMatchObject({ _tag: "Some", value: { message: expect.stringMatching(/bytes, more than/) } })
  })

  it("bundle: the content document is the tree exactly, and reads back into the same files and modes", () => {
    const doc = JSON.parse(bundleDocument(bundle))
    expect(doc).toMatchObject({ apiVersion: "operator.aicr.run/v1alpha1", kind: "Bundle", deployer: "helm" })
    expect(doc.files).toEqual(bundle.files)
    expect(doc.modes).toEqual(bundle.modes)
    const back = bundleFromEntries(
      Object.entries(bundle.files).map(([path, text]) => ({ path: `./${path}`, data: Buffer.from(text), mode: bundle.modes[path]! })),
    )
    expect(back).toEqual(bundle)
  })

  it("snapshot: the agent's document parses and yields the facts AICR derives (no GPU, no cluster here)", async () => {
    const out = join(tempDir(), "snapshot.yaml")
    const r = await aicr(version, ["snapshot", "--output", out], { AICR_AGENT_MODE: "true", NODE_NAME: "node-a" })
    expect(r.code, r.stderr).toBe(0)
    const snap = Result.getOrThrow(parseSnapshot(readFileSync(out, "utf8"), c))
    const facts = snapshotFacts(snap)
    expect(facts).toMatchObject({ node: "node-a", gpuCount: 0, accelerator: undefined, kubernetes: undefined })
    expect(facts.missing).toContain("K8s.server.version")
    expect(Result.getFailure(parseSnapshot(readFileSync(out, "utf8").replace(/^apiVersion: .*$/m, "apiVersion: aicr.run/v1"), c))).toMatchObject({
      _tag: "Some",
      value: { reason: "AICRArtifactUnsupported" },
    })
  })
})

describe("AICR failures, from the real CLI", () => {
  it.each([
    [CURRENT, ["--intent", "gaming"], "intent", "gaming"],
    [CURRENT, ["--accelerator", "h9000", "--intent", "training"], "accelerator", "h9000"],
    [CURRENT, ["--os", "windows", "--intent", "training"], "os", "windows"],
    [PREVIOUS, ["--accelerator", "b200", "--intent", "training"], "accelerator", "b200"],
  ])("AICR %s recipe %j → AICRInvalidRequest naming the bad value", async (version, flags, field, value) => {
    const r = await aicr(version, ["recipe", ...flags, "--output", join(tempDir(), "r.json")])
    expect(r.code).not.toBe(0)
    const e = parseAicrFailure(r.stderr, r.code)
    expect(reasonOf(e)).toBe("AICRInvalidRequest")
    expect(invalidCriterionOf(e)).toEqual({ field, value })
    expect(caps(version).criteria[field as "intent"]).not.toContain(value)
  })

  it("v0.11.1 wraps recipe errors in INTERNAL (exit 8): the innermost code decides", async () => {
    const r = await aicr(CURRENT, ["recipe", "--intent", "gaming"])
    expect(r.code).toBe(8)
    expect(parseAicrFailure(r.stderr, r.code).codes).toEqual(["INTERNAL", "INVALID_REQUEST", "INVALID_REQUEST", "INVALID_REQUEST", "INVALID_REQUEST"])
  })

  it("a recipe file that is not there, an unknown flag, garbage output", async () => {
    const missing = await aicr(CURRENT, ["bundle", "--recipe", "/nonexistent/recipe.json", "--output", tempDir()])
    expect(missing.code).not.toBe(0)
    expect(reasonOf(parseAicrFailure(missing.stderr, missing.code))).toMatch(/^AICR(InvalidRequest|NotFound|Internal)$/)
    const flag = await aicr(CURRENT, ["recipe", "--no-such-flag"])
    expect(flag.code).toBe(1)
    expect(reasonOf(parseAicrFailure(flag.stderr, flag.code))).toBe("AICRInvalidRequest")
    expect(reasonOf(parseAicrFailure("\u0000\u0001 not json {{{", 137))).toBe("AICRInternal")
  })
})

describe("the reason of an AICR failure", () => {
  // AICR wraps every Kubernetes API error as INTERNAL (pkg/serializer/configmap.go: "failed to apply ConfigMap").
  const refused = (verb: string) =>
    `[INTERNAL] failed to serialize snapshot: [INTERNAL] failed to apply ConfigMap: configmaps "aicr-snapshot-0a1b" is forbidden: User "system:serviceaccount:aicr-discovery:aicr-agent" cannot ${verb} resource "configmaps" in API group "" in the namespace "aicr-discovery"`
  it.each([
    ["the API server refusing the Job's identity (RBAC 403) inside INTERNAL", refused("patch"), 8, "AICRUnauthorized"],
    [
      "the API server asking for credentials (401)",
      "[INTERNAL] failed to get kubernetes version: the server has asked for the client to provide credentials",
      8,
      "AICRUnauthorized",
    ],
    [
      "an admission policy refusing the write: AICR's own INTERNAL",
      `[INTERNAL] failed to apply ConfigMap: configmaps "aicr-snapshot-0a1b" is forbidden: ValidatingAdmissionPolicy 'freeze' with binding 'freeze' denied request: frozen`,
      8,
      "AICRInternal",
    ],
    ["AICR's UNAUTHORIZED code", "[UNAUTHORIZED] binary attestation verification failed", 4, "AICRUnauthorized"],
    ["a deadline inside AICR", "[TIMEOUT] K8s collector context cancelled", 5, "AICRTimeout"],
  ] as const)("%s", (_, text, code, reason) => {
    expect(reasonOf(parseAicrErrorText(text, code))).toBe(reason)
  })
})

describe("jobOutcome", () => {
  const failedJob = { status: { failed: 1, conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }] } }
  const pod = (exitCode: number, message: string) => ({
    status: { phase: "Failed", containerStatuses: [{ name: "aicr", state: { terminated: { exitCode, message } } }] },
  })
  it.each([
    [
      "complete",
      { status: { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] } },
      pod(0, "sha256:abc\n"),
      { _tag: "Succeeded", terminationMessage: "sha256:abc\n" },
    ],
    [
      "AICR's failure line",
      failedJob,
      pod(8, '{"level":"ERROR","msg":"command failed","error":"[INTERNAL] x: [NOT_FOUND] no such thing","exitCode":8}'),
      { _tag: "Failed", reason: "AICRNotFound", transient: false },
    ],
    [
      "unavailable is transient",
      failedJob,
      pod(6, '{"level":"ERROR","msg":"command failed","error":"[SERVICE_UNAVAILABLE] api server down","exitCode":6}'),
      { _tag: "Failed", reason: "AICRInternal", transient: true },
    ],
    [
      "deadline passed, pods still terminating (FailureTarget, Kubernetes ≥ 1.31)",
      { status: { failed: 1, conditions: [{ type: "FailureTarget", status: "True", reason: "DeadlineExceeded" }] } },
      undefined,
      { _tag: "Failed", reason: "AICRTimeout", transient: false, message: "ran past its deadline" },
    ],
    [
      "deadline",
      { status: { failed: 1, conditions: [{ type: "Failed", status: "True", reason: "DeadlineExceeded" }] } },
      { status: { containerStatuses: [{ name: "aicr", state: { waiting: { reason: "ErrImagePull", message: "no build" } } }] } },
      { _tag: "Failed", reason: "AICRTimeout", message: "ran past its deadline; the pod was ErrImagePull: no build" },
    ],
    ["running", { status: { active: 1 } }, { status: { phase: "Running" } }, { _tag: "Running", detail: "running" }],
  ])("%s", (_name, job, p, expected) => {
    expect(jobOutcome(job, p)).toMatchObject(expected)
  })

  it("outputOf reads AICR's cm:// writer keys", () => {
    expect(outputOf({ format: "json", "snapshot.json": "{}", timestamp: "t" })).toBe("{}")
    expect(outputOf({ "snapshot.yaml": "a: 1" })).toBe("a: 1")
    expect(outputOf({})).toBeUndefined()
  })
})

describe("flags", () => {
  it("the sample placement maps onto exactly the bundle flags a user would type", () => {
    expect(bundleFlags(SAMPLE_BUNDLE)).toEqual(["--deployer", "helm", ...SAMPLE_BUNDLE_FLAGS])
    expect(recipeArgs({ service: "eks", accelerator: "h100", os: "ubuntu", intent: "training", platform: "kubeflow" }, "o").slice(1, 11)).toEqual(
      SAMPLE_CRITERIA,
    )
  })
})

// ---- AICR 1.x: FIXTURE built from the documented layout (research/aicr-newer.md §5.2), not from a real binary ----
describe("AICR 1.x numbered bundle layout (fixture from the documentation, no 1.x binary is built here)", () => {
  const c = caps("1.1.0")
  const sha = (t: string) => createHash("sha256").update(t).digest("hex")
  const files: Record<string, string> = {
    "bundle-info.yaml": [
      "apiVersion: aicr.run/v1",
      "build: {deployer: helm}",
      "kind: BundleInfo",
      "layout:",
      "  entrypoint: deploy.sh",
      "  releases:",
      "    - {component: cert-manager, name: cert-manager, namespace: cert-manager, path: 001-cert-manager}",
      "    - {component: gpu-operator, name: gpu-operator-readiness, namespace: gpu-operator, path: 002-gpu-operator-readiness}",
      "    - {component: gpu-operator, name: gpu-operator, namespace: gpu-operator, path: 003-gpu-operator}",
      "metadata: {version: v1.1.0}",
      "",
    ].join("\n"),
    "001-cert-manager/values.yaml": "installCRDs: true\n",
    "001-cert-manager/cluster-values.yaml": "nodeSelector: {pool: system}\n",
    "002-gpu-operator-readiness/values.yaml": "{}\n",
    "003-gpu-operator/values.yaml": "driver: {enabled: true}\n",
    "003-gpu-operator/cluster-values.yaml": "daemonsets: {nodeSelector: {pool: gpu}}\n",
    "deploy.sh": "#!/bin/bash\n",
  }
  files["checksums.txt"] =
    Object.keys(files)
      .sort()
      .map((p) => `${sha(files[p]!)}  ${p}`)
      .join("\n") + "\n"

  it("capabilities: aicr.run/v1, numbered layout, upgrade-check and readiness gates", () => {
    expect(c).toMatchObject({ apiVersion: "aicr.run/v1", bundleLayout: "numbered", upgradeCheck: true, readinessGates: true })
    expect(caps(CURRENT)).toMatchObject({ apiVersion: "aicr.nvidia.com/v1alpha1", bundleLayout: "flat", upgradeCheck: false, readinessGates: false })
  })

  it("releases come from bundle-info.yaml in its order, readiness releases separate, cluster-values read", () => {
    const parsed = Result.getOrThrow(parseBundle({ files, modes: {} }, "numbered", []))
    expect(parsed.releases.map((r) => [r.name, r.component, r.path])).toEqual([
      ["cert-manager", "cert-manager", "001-cert-manager"],
      ["gpu-operator-readiness", "gpu-operator", "002-gpu-operator-readiness"],
      ["gpu-operator", "gpu-operator", "003-gpu-operator"],
    ])
    expect(parsed.releases[2]!.clusterValues).toMatch(/pool: gpu/)
  })

  it("a numbered bundle without bundle-info.yaml, or naming a folder it lacks, is refused", () => {
    const { "bundle-info.yaml": _info, ...rest } = files
    expect(Result.isFailure(parseBundle({ files: rest, modes: {} }, "numbered", []))).toBe(true)
  })
})

const SAMPLE_BUNDLE = {
  systemNodeSelector: { "eks.amazonaws.com/nodegroup": "system" },
  acceleratedNodeSelector: { "eks.amazonaws.com/nodegroup": "gpu" },
  acceleratedTolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
}
