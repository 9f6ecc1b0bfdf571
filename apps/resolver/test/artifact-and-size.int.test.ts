// Two render refusals from real causes on the local control plane (the real kube-apiserver, kwok nodes, the process
// kubelet running the real AICR binary as the Jobs the resolver creates):
// - AICRArtifactUnsupported: the pinned AICR is 1.0.0 (inside the supported range) but the image is the real AICR
//   v0.11.1, whose snapshot is of the 0.x schema (apiVersion aicr.nvidia.com/v1alpha1, not aicr.run/v1);
// - ContentTooLarge: overrides the CRD admits (64 values of 4 KiB, every character one JSON escapes) make the content
//   pass the 1 MiB a ConfigMap holds, since each override is written twice, escaped, into values.json and flags.json;
//   half as many, unescaped, resolve, and the bundle argv recorded for them fits a plan that reads back.
// Each clears once its cause is gone.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { jobRbac } from "@aicr/aicr"
import { encodePlan, MAX_OVERRIDE_VALUE_BYTES, MAX_OVERRIDES, readPlan } from "@aicr/api"
import { samplePlan } from "@aicr/api/samples"
import {
  addNode,
  applyManifests,
  createNamespace,
  deleteClusterScoped,
  expectCondition,
  expectOk,
  gpuNode,
  h100Host,
  type HarnessInfo,
  kubeRequest,
  readVersions,
  type Registry,
  removeNode,
  setHostProfile,
  startRegistry,
  untilCondition,
} from "@aicr/testing/harness"
import { removeRuntime, RUNTIME, startController } from "@aicr/testing/world"
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { resolverApp } from "../src/app"
import { runtimeFixture, specFor } from "./runtime-fixture"
import { MAX_CONTENT_BYTES } from "../src/decide"

const info: HarnessInfo = inject("harness")
/** The AICR Jobs' RBAC this file applies; its cluster-scoped part (the fixed-name `aicr-node-reader`) is deleted after it. */
let rbac: ReadonlyArray<Record<string, unknown>> = []
const { aicr: CURRENT } = readVersions()
const NAMESPACES = ["cert-manager", "gpu-operator", "kai-scheduler", "kube-system", "kubeflow", "monitoring", "nvidia-dra-driver", "nvsentinel", "skyhook"]
const work = mkdtempSync(join(tmpdir(), "resolver-size-int-"))
const suffix = Math.random().toString(36).slice(2, 6)
const NODE = `size-gpu-${suffix}`
const GROUP = `size-gpu-${suffix}`
let registry: Registry
let ns: string
let resolver: { readonly stop: () => Promise<void> } | undefined

const start = (version: string, image?: string) => {
  resolver = startController(info, resolverApp(), [
    "--aicr-version",
    version,
    ...(image !== undefined ? ["--aicr-image", image] : []),
    "--registry",
    `oci://${registry.address}/aicr/size`,
    "--operator-namespace",
    ns,
    "--component-namespaces",
    NAMESPACES.join(","),
    "--allow-unsupported-aicr=true",
  ])
}
const stop = async () => {
  await resolver?.stop()
  resolver = undefined
}

const SPEC = specFor(GROUP)
const { getRuntime, current, setSpec } = runtimeFixture(info)
const pad2 = (n: number) => `${n}`.padStart(2, "0")

beforeAll(async () => {
  registry = await startRegistry({ name: "resolver-size-int", dir: mkdtempSync(join(work, "registry-")) })
  ns = await createNamespace(info, "aicr-size")
  await removeRuntime(info)
  await applyManifests(info, [...(rbac = jobRbac({ namespace: ns, discoveryNamespace: ns, serviceAccount: "aicr-jobs", agentServiceAccount: "aicr-agent" }))])
  const n = gpuNode(80)
  await addNode(info, { ...n, name: NODE, labels: { ...n.labels, "kubernetes.io/hostname": NODE, "eks.amazonaws.com/nodegroup": GROUP } }, { wait: true })
  await setHostProfile(info, NODE, h100Host({ driver: "580.105.08", cuda: "13.0" }))
  await applyManifests(info, [{ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: SPEC }])
}, 120_000)

afterAll(async () => {
  await stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await removeNode(info, NODE).catch(() => undefined)
  await registry?.stop()
  rmSync(work, { recursive: true, force: true })
  await deleteClusterScoped(info, rbac)
})

describe("render refusals from real causes", () => {
  it("AICRArtifactUnsupported: AICR 1.0.0 pinned, the real AICR 0.x as its image: the 0.x snapshot names the image to fix", async () => {
    start("v1.0.0", `ghcr.io/nvidia/aicr:${CURRENT}`)
    const c = await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "False", "AICRArtifactUnsupported", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
    expect(c.message).toMatch(
      new RegExp(
        `^Snapshot Job ${ns}/aicr-snapshot-\\w+ on node ${NODE}: Snapshot apiVersion "aicr\\.nvidia\\.com/v1alpha1" is not one AICR 1\\.0\\.0 writes \\(aicr\\.run/v1\\): ` +
          `the AICR image is not AICR 1\\.0\\.0's; pin the image of that version \\(chart aicr\\.image, resolver --aicr-image\\) or the version of that image \\(chart aicr\\.version\\)$`,
      ),
    )
    const r = await getRuntime()
    expectCondition(current(r, "Resolved"), "Resolved", "False", "AICRArtifactUnsupported")
    expect(current(r, "Resolved")?.message).toBe(c.message)
    // The version of the image pinned (a new snapshot key, so a new snapshot Job): discovery and resolution pass.
    await stop()
    start(CURRENT)
    await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "True", "NodeGroupsDiscovered", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
    await untilCondition(async () => current(await getRuntime(), "Resolved"), "Resolved", "True", "InputsResolved", { timeoutMs: 300_000, intervalMs: 500 })
  }, 600_000)

  it("ContentTooLarge: overrides at the CRD's limits, each written twice and JSON-escaped, pass 1 MiB; the message names spec.overrides", async () => {
    if (resolver === undefined) start(CURRENT)
    // Quotes and backslashes (an embedded JSON document, a regular expression): JSON escapes every one of them.
    const value = '"\\'.repeat(MAX_OVERRIDE_VALUE_BYTES / 2)
    const overrides = Array.from({ length: MAX_OVERRIDES }, (_, i) => ({ path: `gpu-operator:aicrNotes.n${pad2(i)}`, value }))
    // The API server admits them: the CRD's limits allow this much.
    await setSpec({ ...SPEC, overrides })
    const c = await untilCondition(async () => current(await getRuntime(), "Resolved"), "Resolved", "False", "ContentTooLarge", {
      timeoutMs: 300_000,
      intervalMs: 500,
    })
    const m = new RegExp(
      `^The content of input [0-9a-f]{12} is (\\d+) bytes, more than a ConfigMap holds \\(${MAX_CONTENT_BYTES}\\): ` +
        `((?:recipe|values|flags|snapshot)\\.json \\d+(?:, (?:recipe|values|flags|snapshot)\\.json \\d+){3}) bytes; ` +
        `spec\\.overrides \\(${MAX_OVERRIDES}, ${MAX_OVERRIDES * MAX_OVERRIDE_VALUE_BYTES} bytes of values\\) are written twice, JSON-escaped, into values\\.json and flags\\.json: shorten or remove overrides$`,
    ).exec(c.message)
    expect(m, c.message).not.toBeNull()
    const total = Number(m![1])
    const parts = Object.fromEntries(m![2]!.split(", ").map((p) => [p.split(" ")[0]!, Number(p.split(" ")[1])]))
    expect(total).toBeGreaterThan(MAX_CONTENT_BYTES)
    expect(Object.values(parts).reduce((a, b) => a + b, 0)).toBe(total)
    // Each escaped value once in values.json and once in flags.json.
    expect(parts["values.json"]).toBeGreaterThan(MAX_OVERRIDES * 2 * MAX_OVERRIDE_VALUE_BYTES)
    expect(parts["flags.json"]).toBeGreaterThan(MAX_OVERRIDES * 2 * MAX_OVERRIDE_VALUE_BYTES)
    expectCondition(current(await getRuntime(), "Discovered"), "Discovered", "True", "NodeGroupsDiscovered")
    // Half of them, unescaped: the content fits and the runtime resolves.
    await setSpec({ ...SPEC, overrides: overrides.slice(0, MAX_OVERRIDES / 2).map((o) => ({ ...o, value: "x".repeat(MAX_OVERRIDE_VALUE_BYTES) })) })
    await untilCondition(async () => current(await getRuntime(), "Resolved"), "Resolved", "True", "InputsResolved", { timeoutMs: 300_000, intervalMs: 500 })
    // The bundle argv the resolver recorded (flags.json, 4 KiB --set values) is one a plan holds and reads back.
    const cm = (await getRuntime()).status?.resolution?.contentConfigMap
    const content = expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/configmaps/${cm}` }), "get content") as {
      data: Record<string, string>
    }
    const flags = JSON.parse(content.data["flags.json"]!) as string[]
    expect(flags.filter((f) => f.startsWith("gpu-operator:aicrNotes.n"))).toHaveLength(MAX_OVERRIDES / 2)
    const plan = { ...samplePlan(), flags }
    expect(readPlan(encodePlan(plan))).toEqual(Result.succeed(plan))
  }, 600_000)
})
