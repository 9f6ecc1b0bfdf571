// The resolver on the local control plane: the real kube-apiserver, kwok nodes, the process kubelet running the
// real AICR binaries as the Jobs the resolver creates, and a real registry the bundle Jobs push to.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import { jobRbac } from "@aicr/aicr"
import {
  addNode,
  aicrBinary,
  applyManifests,
  createNamespace,
  deleteClusterScoped,
  eventually,
  expectCondition,
  expectOk,
  gpuNode,
  h100Host,
  type HarnessInfo,
  kubeRequest,
  readVersions,
  recordedProcess,
  type Registry,
  removeNode,
  setHostProfile,
  startRegistry,
} from "@aicr/testing/harness"
import { RUNTIME, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { resolverApp } from "../src/app"
import { type Cond, type Runtime as FixtureRuntime, runtimeFixture, specFor } from "./runtime-fixture"

const info: HarnessInfo = inject("harness")
/** The AICR Jobs' RBAC this file applies; its cluster-scoped part (the fixed-name `aicr-node-reader`) is deleted after it. */
let rbac: ReadonlyArray<Record<string, unknown>> = []
const { aicr: CURRENT, aicrPrevious: PREVIOUS } = readVersions()
const NAMESPACES = ["cert-manager", "gpu-operator", "kai-scheduler", "kube-system", "kubeflow", "monitoring", "nvidia-dra-driver", "nvsentinel", "skyhook"]
const work = mkdtempSync(join(tmpdir(), "resolver-int-"))
let registry: Registry
let ns: string
let resolver: { readonly stop: () => Promise<void> } | undefined

/** The AICR built here is 0.x: the resolver runs with the development allowance unless a test says otherwise. */
/**
 * As shipped, bundle pulls run in the bundle's own `bundle-process.mjs` (built in beforeAll), here behind a wrapper
 * that records each child's pid, to show where the pulls ran.
 */
let bundleProcess: ReturnType<typeof recordedProcess>
const start = (version: string, namespaces: readonly string[] = NAMESPACES, opts: { allowUnsupported?: boolean; image?: string } = {}) => {
  resolver = startController(info, resolverApp({ bundleProcess: bundleProcess.entry }), [
    "--aicr-version",
    version,
    "--registry",
    `oci://${registry.address}/aicr/it`,
    "--operator-namespace",
    ns,
    "--component-namespaces",
    namespaces.join(","),
    `--allow-unsupported-aicr=${opts.allowUnsupported ?? true}`,
    ...(opts.image !== undefined ? ["--aicr-image", opts.image] : []),
  ])
}
const stop = async () => {
  await resolver?.stop()
  resolver = undefined
}

interface Runtime extends FixtureRuntime {
  status?: {
    conditions?: Cond[]
    discovery?: { system?: { nodeCount: number }; accelerated?: { nodeCount: number }; criteria?: Record<string, string> }
    resolution?: { inputDigest?: string; contentConfigMap?: string; releases?: number; aicr?: { version: string; image: string } }
  }
}
const { getRuntime, current, setSpec } = runtimeFixture<Runtime>(info)
const cond = (r: Runtime, type: string) => r.status?.conditions?.find((c) => c.type === type)
const waitFor = (type: string, status: string, reason?: string, timeoutMs = 240_000) =>
  eventually(
    async () => {
      const r = await getRuntime()
      const c = current(r, type)
      return c?.status === status && (reason === undefined || c.reason === reason) ? r : undefined
    },
    { timeoutMs, intervalMs: 500, what: `${type}=${status}${reason ? `/${reason}` : ""}` },
  )

const SAMPLE = specFor("gpu")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** Our own GPU node group (nodegroup res-gpu), so host-profile changes touch no node other tests use. */
const OWN = (i: number) => {
  const n = gpuNode(90 + i)
  return { ...n, name: `res-gpu-${i}`, labels: { ...n.labels, "kubernetes.io/hostname": `res-gpu-${i}`, "eks.amazonaws.com/nodegroup": "res-gpu" } }
}
const OWN_SPEC = {
  ...SAMPLE,
  placement: { ...SAMPLE.placement, accelerated: { ...SAMPLE.placement.accelerated, nodeSelector: { "eks.amazonaws.com/nodegroup": "res-gpu" } } },
}
const relabel = async (node: string, labels: Record<string, string | null>) =>
  expectOk(
    await kubeRequest(info, { method: "PATCH", path: `/api/v1/nodes/${node}`, body: { metadata: { labels } }, contentType: "application/merge-patch+json" }),
    `relabel ${node}`,
  )

const aicrJobs = async (kind?: string) => {
  const sel = encodeURIComponent(`operator.aicr.run/role=aicr-job${kind ? `,operator.aicr.run/aicr-job=${kind}` : ""}`)
  return (
    expectOk(await kubeRequest(info, { method: "GET", path: `/apis/batch/v1/namespaces/${ns}/jobs?labelSelector=${sel}` }), "jobs") as {
      items: Array<{ metadata: { name: string } }>
    }
  ).items
    .map((j) => j.metadata.name)
    .sort()
}
const content = async (name: string) =>
  expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/configmaps/${name}` }), "content") as {
    data: Record<string, string>
    immutable?: boolean
  }

const run = promisify(execFile)
/** What a user gets running `aicr bundle --deployer helm` by hand from the same recipe and flags. */
const handBundle = async (version: string, recipeJson: string, flags: string[]) => {
  const dir = mkdtempSync(join(work, "hand-"))
  writeFileSync(join(dir, "recipe.json"), recipeJson)
  await run(aicrBinary(version), ["bundle", "--recipe", join(dir, "recipe.json"), "--output", join(dir, "out"), ...flags], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir },
  })
  const files: Record<string, string> = {}
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n)
      if (statSync(p).isDirectory()) walk(p)
      else files[relative(join(dir, "out"), p)] = readFileSync(p, "utf8")
    }
  }
  walk(join(dir, "out"))
  return files
}
const SAMPLE_FLAGS = [
  "--deployer",
  "helm",
  "--system-node-selector",
  "eks.amazonaws.com/nodegroup=system",
  "--accelerated-node-selector",
  "eks.amazonaws.com/nodegroup=gpu",
  "--accelerated-node-toleration",
  "nvidia.com/gpu:NoSchedule",
]

beforeAll(async () => {
  bundleProcess = recordedProcess(work, join((await buildApp("resolver", join(work, "bundle"))).outdir, "bundle-process.mjs"))
  registry = await startRegistry({ name: "resolver-int", dir: mkdtempSync(join(work, "registry-")) })
  ns = await createNamespace(info, "aicr-res")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  await applyManifests(info, [...(rbac = jobRbac({ namespace: ns, discoveryNamespace: ns, serviceAccount: "aicr-jobs", agentServiceAccount: "aicr-agent" }))])
  await applyManifests(info, [{ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: SAMPLE }])
  start(CURRENT)
})

afterAll(async () => {
  await stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  for (const i of [0, 1, 2]) await removeNode(info, `res-gpu-${i}`).catch(() => undefined)
  await registry?.stop()
  rmSync(work, { recursive: true, force: true })
  await deleteClusterScoped(info, rbac)
})

describe("resolver on the local control plane", () => {
  it(`resolves the sample runtime for real with AICR ${CURRENT}: 13 releases, and the recorded bundle is the hand-run one byte for byte`, async () => {
    const r = await waitFor("Resolved", "True", "InputsResolved")
    expectCondition(current(r, "Resolved"), "Resolved", "True", "InputsResolved")
    expectCondition(current(r, "Discovered"), "Discovered", "True", "NodeGroupsDiscovered")
    expect(r.status?.discovery?.criteria).toMatchObject({ accelerator: "h100", os: "ubuntu" })
    expect(r.status?.resolution).toMatchObject({ releases: 13, aicr: { version: CURRENT, image: `ghcr.io/nvidia/aicr:${CURRENT}` } })
    const cm = await content(r.status!.resolution!.contentConfigMap!)
    expect(cm.immutable).toBe(true)
    const recipe = JSON.parse(cm.data["recipe.json"]!)
    expect(recipe.deploymentOrder).toHaveLength(13)
    expect(JSON.parse(cm.data["snapshot.json"]!)).toMatchObject({ kind: "Snapshot", metadata: { "source-node": "kwok-gpu-0" } })
    const bundle = JSON.parse(cm.data["values.json"]!)
    expect(bundle.files).toEqual(await handBundle(CURRENT, cm.data["recipe.json"]!, SAMPLE_FLAGS))
    // The bundle was pulled back in a child process, not in the test's (the resolver's) process.
    const pids = bundleProcess.pids()
    expect(pids.length).toBeGreaterThanOrEqual(1)
    expect(pids).not.toContain(process.pid)
    expect(await aicrJobs("recipe")).toHaveLength(1)
    expect(await aicrJobs("bundle")).toHaveLength(1)
    expect(await aicrJobs("snapshot")).toHaveLength(1)
  }, 300_000)

  it("node churn that changes no input runs no AICR; a new driver on a host re-resolves exactly once", async () => {
    await addNode(info, OWN(0), { wait: true })
    await addNode(info, OWN(1), { wait: true })
    await setSpec(OWN_SPEC)
    const first = await waitFor("Resolved", "True", "InputsResolved")
    expectCondition(current(first, "Resolved"), "Resolved", "True", "InputsResolved")
    const jobs = { snapshot: await aicrJobs("snapshot"), recipe: await aicrJobs("recipe"), bundle: await aicrJobs("bundle") }
    // A third node of the same profile, then relabelling one with a label discovery does not read: no input changes.
    await addNode(info, OWN(2), { wait: true })
    await eventually(async () => ((await getRuntime()).status?.discovery?.accelerated?.nodeCount === 3 ? true : undefined), { what: "3 accelerated nodes" })
    await relabel("res-gpu-1", { "team.example/owner": "ml" })
    await removeNode(info, "res-gpu-2")
    await eventually(async () => ((await getRuntime()).status?.discovery?.accelerated?.nodeCount === 2 ? true : undefined), { what: "2 accelerated nodes" })
    await sleep(3000)
    expect({ snapshot: await aicrJobs("snapshot"), recipe: await aicrJobs("recipe"), bundle: await aicrJobs("bundle") }).toEqual(jobs)
    expect((await getRuntime()).status?.resolution?.inputDigest).toBe(first.status?.resolution?.inputDigest)
    expect(current(await getRuntime(), "Resolved")?.status).toBe("True")

    // A driver upgrade on one host (and the GPU feature discovery labels it brings): one new snapshot, recipe, bundle.
    await setHostProfile(info, "res-gpu-1", h100Host({ driver: "580.95.05", cuda: "13.0" }))
    const second = await eventually(
      async () => {
        const r = await getRuntime()
        return r.status?.resolution?.inputDigest !== first.status?.resolution?.inputDigest && current(r, "Resolved")?.status === "True" ? r : undefined
      },
      { timeoutMs: 120_000, what: "re-resolved after the driver change" },
    )
    expect(second.status?.resolution?.releases).toBe(13)
    await sleep(3000)
    expect((await aicrJobs("recipe")).length).toBe(jobs.recipe.length + 1)
    expect((await aicrJobs("bundle")).length).toBe(jobs.bundle.length + 1)
    expect((await aicrJobs("snapshot")).length).toBe(jobs.snapshot.length + 1)
  }, 300_000)

  it("each discovery reason from a real node layout", async () => {
    // Two GPU products in the accelerated group.
    await relabel("res-gpu-1", { "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB" })
    let r = await waitFor("Discovered", "False", "AcceleratedGroupHeterogeneous", 60_000)
    expectCondition(current(r, "Discovered"), "Discovered", "False", "AcceleratedGroupHeterogeneous")
    expect(cond(r, "Discovered")?.message).toMatch(/NVIDIA-A100-SXM4-80GB.*NVIDIA-H100-80GB-HBM3|NVIDIA-H100-80GB-HBM3.*NVIDIA-A100-SXM4-80GB/)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "AcceleratedGroupHeterogeneous")
    await relabel("res-gpu-1", { "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3" })
    await waitFor("Discovered", "True", "NodeGroupsDiscovered", 120_000)

    // A selector no node matches.
    await setSpec({ ...OWN_SPEC, placement: { ...OWN_SPEC.placement, system: { nodeSelector: { "eks.amazonaws.com/nodegroup": "nowhere" } } } })
    r = await waitFor("Discovered", "False", "NodeGroupEmpty", 60_000)
    expectCondition(current(r, "Discovered"), "Discovered", "False", "NodeGroupEmpty")
    expect(cond(r, "Discovered")?.message).toBe("No node matches spec.placement.system (eks.amazonaws.com/nodegroup=nowhere)")

    // A node in both groups: every GPU node carries nvidia.com/gpu.present=true.
    await setSpec({ ...OWN_SPEC, placement: { ...OWN_SPEC.placement, system: { nodeSelector: { "nvidia.com/gpu.present": "true" } } } })
    r = await waitFor("Discovered", "False", "PlacementOverlap", 60_000)
    expectCondition(current(r, "Discovered"), "Discovered", "False", "PlacementOverlap")
    expect(cond(r, "Discovered")?.message).toMatch(/match both the system and the accelerated nodeSelector: .*res-gpu-0, res-gpu-1/)

    // The snapshot shows H100 where the spec declares A100.
    await setSpec({ ...OWN_SPEC, criteria: { ...OWN_SPEC.criteria, accelerator: "a100" } })
    r = await waitFor("Discovered", "False", "CriteriaConflict", 120_000)
    expectCondition(current(r, "Discovered"), "Discovered", "False", "CriteriaConflict")
    expect(cond(r, "Discovered")?.message).toBe('spec.criteria.accelerator is "a100" but the snapshot shows "h100"')

    // The snapshot host has no OS release ID: the snapshot lacks facts the recipe needs.
    await setSpec(OWN_SPEC)
    await waitFor("Resolved", "True", "InputsResolved", 120_000)
    // (A new driver on it too: the snapshot is retaken when the group's facts change, and the OS is not one of them.)
    const profile = h100Host({ driver: "580.105.08", cuda: "13.0" })
    await setHostProfile(info, "res-gpu-0", { ...profile, os: { ...profile.os, id: "", versionId: "" } })
    r = await waitFor("Discovered", "False", "SnapshotIncomplete", 120_000)
    expectCondition(current(r, "Discovered"), "Discovered", "False", "SnapshotIncomplete")
    expect(cond(r, "Discovered")?.message).toMatch(/on node res-gpu-0: the snapshot lacks OS\.release\.ID, OS\.release\.VERSION_ID/)
    await setHostProfile(info, "res-gpu-0", h100Host({ driver: "580.105.09", cuda: "13.0" }))
    await waitFor("Discovered", "True", "NodeGroupsDiscovered", 120_000)
  }, 400_000)

  it("intent gaming, accelerator h9000, os windows: the bad value and what this AICR accepts, and no AICR run", async () => {
    const before = await aicrJobs("recipe")
    await setSpec({ ...OWN_SPEC, intent: "gaming", criteria: { service: "eks", accelerator: "h9000", os: "windows" } })
    const r = await waitFor("Resolved", "False", "AICRInvalidRequest", 120_000)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "AICRInvalidRequest")
    expect(cond(r, "Resolved")?.message).toBe(
      'spec.criteria.accelerator "h9000" is not one AICR 0.11.1 accepts (a100, b200, gb200, h100, l40); spec.criteria.os "windows" is not one AICR 0.11.1 accepts (amazonlinux, cos, rhel, ubuntu); spec.intent "gaming" is not one AICR 0.11.1 accepts (inference, training)',
    )
    expect(await aicrJobs("recipe")).toEqual(before)
  }, 200_000)

  it("a release outside the allowed namespaces is NamespaceNotAllowed, naming each", async () => {
    await stop()
    await setSpec(SAMPLE)
    start(
      CURRENT,
      NAMESPACES.filter((n) => n !== "skyhook" && n !== "nvsentinel"),
    )
    const r = await waitFor("Resolved", "False", "NamespaceNotAllowed", 120_000)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "NamespaceNotAllowed")
    expect(cond(r, "Resolved")?.message).toMatch(
      /3 release\(s\) outside the allowed namespaces .*: skyhook-operator \(skyhook\), skyhook-customizations \(skyhook\), nvsentinel \(nvsentinel\)/,
    )
  }, 200_000)

  it(`the version gate: the real AICR ${CURRENT} (0.x) without the development allowance is AICRVersionMismatch with the range, and runs no Job`, async () => {
    await stop()
    await setSpec(SAMPLE)
    // What the real binary says it is: the version the gate refuses.
    const reported = (await run(aicrBinary(CURRENT), ["--version"], { env: { PATH: process.env.PATH, HOME: work } })).stdout
    expect(reported).toContain(CURRENT.replace(/^v/, ""))
    const before = { snapshot: await aicrJobs("snapshot"), recipe: await aicrJobs("recipe"), bundle: await aicrJobs("bundle") }
    start(CURRENT, NAMESPACES, { allowUnsupported: false })
    const r = await waitFor("Resolved", "False", "AICRVersionMismatch", 120_000)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "AICRVersionMismatch")
    expect(cond(r, "Resolved")?.message).toBe(
      `AICR ${CURRENT.replace(/^v/, "")} is outside the supported range >=1.0.0,<2.0.0: pin a supported release (chart aicr.version); a development control plane may allow it with aicr.allowUnsupportedVersion (resolver --allow-unsupported-aicr)`,
    )
    expectCondition(current(r, "Discovered"), "Discovered", "False", "AICRVersionMismatch")
    await sleep(2000)
    expect({ snapshot: await aicrJobs("snapshot"), recipe: await aicrJobs("recipe"), bundle: await aicrJobs("bundle") }).toEqual(before)

    // With the allowance the same AICR resolves, and the message names the allowance.
    await stop()
    start(CURRENT)
    const ok = await waitFor("Resolved", "True", "InputsResolved", 240_000)
    expectCondition(current(ok, "Resolved"), "Resolved", "True", "InputsResolved")
    expect(cond(ok, "Resolved")?.message).toMatch(
      /into 13 releases; AICR \S+ is outside the supported range >=1\.0\.0,<2\.0\.0, allowed for development only \(aicr\.allowUnsupportedVersion\)$/,
    )
  }, 400_000)

  it(`the version gate: an AICR image of ${PREVIOUS} under the pinned ${CURRENT} records its own version in the snapshot, AICRVersionMismatch naming both`, async () => {
    await stop()
    await setSpec(SAMPLE)
    start(CURRENT, NAMESPACES, { image: `ghcr.io/nvidia/aicr:${PREVIOUS}` })
    const r = await waitFor("Discovered", "False", "AICRVersionMismatch", 240_000)
    expectCondition(current(r, "Discovered"), "Discovered", "False", "AICRVersionMismatch")
    expect(cond(r, "Discovered")?.message).toMatch(
      new RegExp(
        `^Snapshot Job ${ns}/aicr-snapshot-\\w+ on node \\S+: Snapshot records AICR v?${PREVIOUS.replace(/^v/, "").replaceAll(".", "\\.")}, the pinned AICR is ${CURRENT.replace(/^v/, "").replaceAll(".", "\\.")}$`,
      ),
    )
    expectCondition(current(r, "Resolved"), "Resolved", "False", "AICRVersionMismatch")
  }, 300_000)

  it("overrides the real AICR does not apply: OverridePathUnknown / InvalidOverride naming each; one it refuses: InvalidOverride", async () => {
    await stop()
    await setSpec(SAMPLE)
    start(CURRENT)
    // An unknown component key (AICR ignores it silently) and a path through a string (AICR leaves it out).
    await setSpec({
      ...SAMPLE,
      overrides: [
        { path: "gpuoperator:driver.version.major", value: "580" },
        { path: "nosuchcomponent:foo.bar", value: "1" },
      ],
    })
    let r = await waitFor("Resolved", "False", "InvalidOverride", 240_000)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "InvalidOverride")
    expect(cond(r, "Resolved")?.message).toMatch(
      new RegExp(
        `^Bundle Job ${ns}/aicr-bundle-\\w+ did not apply 2 override\\(s\\): gpuoperator:driver\\.version\\.major=580: driver\\.version is a string in the values of gpu-operator, not a map, so AICR left the override out; ` +
          `nosuchcomponent:foo\\.bar=1: no release is named "nosuchcomponent" and no release's values carry the value \\(AICR ignores an unknown component key\\)$`,
      ),
    )
    await setSpec({ ...SAMPLE, overrides: [{ path: "nosuchcomponent:foo.bar", value: "1" }] })
    r = await waitFor("Resolved", "False", "OverridePathUnknown", 240_000)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "OverridePathUnknown")
    expect(cond(r, "Resolved")?.message).toContain('nosuchcomponent:foo.bar=1: no release is named "nosuchcomponent"')
    // An empty value passes admission; AICR refuses the --set (exit 2).
    await setSpec({ ...SAMPLE, overrides: [{ path: "gpuoperator:driver.version", value: "" }] })
    r = await waitFor("Resolved", "False", "InvalidOverride", 240_000)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "InvalidOverride")
    expect(cond(r, "Resolved")?.message).toMatch(
      /^AICR refused the override gpuoperator:driver\.version=: Bundle Job \S+ exited 2: .*path and value cannot be empty/,
    )
    // A good override resolves.
    await setSpec({ ...SAMPLE, overrides: [{ path: "gpuoperator:driver.version", value: "580.105.08" }] })
    await waitFor("Resolved", "True", "InputsResolved", 240_000)
  }, 900_000)

  it("spec.paused: a new input starts no AICR Job until it is cleared, then resolves", async () => {
    await stop()
    await setSpec(SAMPLE)
    start(CURRENT)
    const before = await waitFor("Resolved", "True", "InputsResolved", 240_000)
    expectCondition(current(before, "Resolved"), "Resolved", "True", "InputsResolved")
    const recipes = await aicrJobs("recipe")
    // Paused and a new toleration in one edit: the input changes, nothing runs.
    const changed = {
      ...SAMPLE,
      paused: true,
      placement: {
        ...SAMPLE.placement,
        accelerated: {
          ...SAMPLE.placement.accelerated,
          tolerations: [...SAMPLE.placement.accelerated.tolerations, { key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" }],
        },
      },
    }
    await setSpec(changed)
    const r = await waitFor("Resolved", "False", "Resolving", 60_000)
    expectCondition(current(r, "Resolved"), "Resolved", "False", "Resolving")
    expect(cond(r, "Resolved")?.message).toMatch(/^spec\.paused is set: input [0-9a-f]{12} is not resolved until it is cleared$/)
    expect(r.status?.resolution?.inputDigest).toBe(before.status?.resolution?.inputDigest)
    await sleep(3000)
    expect(await aicrJobs("recipe")).toEqual(recipes)

    await setSpec({ ...changed, paused: false })
    const after = await waitFor("Resolved", "True", "InputsResolved", 240_000)
    expectCondition(current(after, "Resolved"), "Resolved", "True", "InputsResolved")
    expect(after.status?.resolution?.inputDigest).not.toBe(before.status?.resolution?.inputDigest)
    expect((await aicrJobs("recipe")).length).toBe(recipes.length + 1)
    // Leave the sample spec for the next test.
    await setSpec(SAMPLE)
    await waitFor("Resolved", "True", "InputsResolved", 240_000)
  }, 500_000)

  it(`AICR ${PREVIOUS} resolves the same runtime into its own recipe, and its recorded bundle is the hand-run one`, async () => {
    await stop()
    start(PREVIOUS)
    const r = await eventually(
      async () => {
        const x = await getRuntime()
        return x.status?.resolution?.aicr?.version === PREVIOUS && current(x, "Resolved")?.status === "True" ? x : undefined
      },
      { timeoutMs: 240_000, what: `resolved with ${PREVIOUS}` },
    )
    const cm = await content(r.status!.resolution!.contentConfigMap!)
    const recipe = JSON.parse(cm.data["recipe.json"]!)
    const versions = Object.fromEntries(recipe.componentRefs.map((c: { name: string; version?: string }) => [c.name, c.version]))
    expect(versions).toMatchObject({ "kai-scheduler": "v0.12.17", nvsentinel: "v0.10.0" })
    expect(JSON.parse(cm.data["values.json"]!).files).toEqual(await handBundle(PREVIOUS, cm.data["recipe.json"]!, SAMPLE_FLAGS))
  }, 300_000)
})
