// The resolver on the local control plane: the real kube-apiserver, kwok nodes, the process kubelet running the
// real AICR binaries as the Jobs the resolver creates, and a real registry the bundle Jobs push to.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import { jobRbac } from "@aicr/aicr"
import { parseConfig, runApp } from "@aicr/runtime"
import {
  addNode, aicrBinary, applyManifests, createNamespace, eventually, expectOk, gpuNode, type HarnessInfo, h100Host, kubeRequest, readVersions, type Registry, removeNode,
  setHostProfile, startRegistry,
} from "@aicr/testing/harness"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { resolverApp } from "../src/app"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const { aicr: CURRENT, aicrPrevious: PREVIOUS } = readVersions()
const NAMESPACES = ["cert-manager", "gpu-operator", "kai-scheduler", "kube-system", "kubeflow", "monitoring", "nvidia-dra-driver", "nvsentinel", "skyhook"]
const work = mkdtempSync(join(tmpdir(), "resolver-int-"))
let registry: Registry
let ns: string
let fiber: Fiber.Fiber<never, unknown> | undefined

const start = (version: string, extra: string[] = []) => {
  const config = parseConfig("resolver", [
    "--kubeconfig", info.kubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=warn",
    "--aicr-version", version, "--registry", `oci://${registry.address}/aicr/it`, "--operator-namespace", ns, "--component-namespaces", NAMESPACES.join(","),
    ...extra,
  ], {})
  fiber = Effect.runFork(runApp(resolverApp, config))
}
const stop = async () => {
  if (fiber) await Effect.runPromise(Fiber.interrupt(fiber))
  fiber = undefined
}

interface Cond { type: string; status: string; reason: string; message: string; observedGeneration?: number }
interface Runtime {
  metadata: { generation: number }
  status?: { conditions?: Cond[]; discovery?: { system?: { nodeCount: number }; accelerated?: { nodeCount: number }; criteria?: Record<string, string> }; resolution?: { inputDigest?: string; contentConfigMap?: string; releases?: number; aicr?: { version: string; image: string } } }
}
const getRuntime = async () => expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as Runtime
const cond = (r: Runtime, type: string) => r.status?.conditions?.find((c) => c.type === type)
const current = (r: Runtime, type: string) => {
  const c = cond(r, type)
  return c?.observedGeneration === r.metadata.generation ? c : undefined
}
const waitFor = (type: string, status: string, reason?: string, timeoutMs = 240_000) =>
  eventually(async () => {
    const r = await getRuntime()
    const c = current(r, type)
    return c?.status === status && (reason === undefined || c.reason === reason) ? r : undefined
  }, { timeoutMs, intervalMs: 500, what: `${type}=${status}${reason ? `/${reason}` : ""}` })

const SAMPLE = {
  intent: "training",
  platform: "kubeflow",
  criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
  placement: {
    system: { nodeSelector: { "eks.amazonaws.com/nodegroup": "system" } },
    accelerated: { nodeSelector: { "eks.amazonaws.com/nodegroup": "gpu" }, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] },
  },
}
const setSpec = async (spec: unknown) =>
  expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec }, contentType: "application/merge-patch+json" }), "patch spec")

const aicrJobs = async (kind?: string) => {
  const sel = encodeURIComponent(`operator.aicr.run/role=aicr-job${kind ? `,operator.aicr.run/aicr-job=${kind}` : ""}`)
  return (expectOk(await kubeRequest(info, { method: "GET", path: `/apis/batch/v1/namespaces/${ns}/jobs?labelSelector=${sel}` }), "jobs") as { items: Array<{ metadata: { name: string } }> }).items.map((j) => j.metadata.name).sort()
}
const content = async (name: string) => (expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/configmaps/${name}` }), "content") as { data: Record<string, string>; immutable?: boolean })

const run = promisify(execFile)
/** What a user gets running `aicr bundle --deployer helm` by hand from the same recipe and flags. */
const handBundle = async (version: string, recipeJson: string, flags: string[]) => {
  const dir = mkdtempSync(join(work, "hand-"))
  writeFileSync(join(dir, "recipe.json"), recipeJson)
  await run(aicrBinary(version), ["bundle", "--recipe", join(dir, "recipe.json"), "--output", join(dir, "out"), ...flags], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir } })
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
  "--deployer", "helm",
  "--system-node-selector", "eks.amazonaws.com/nodegroup=system",
  "--accelerated-node-selector", "eks.amazonaws.com/nodegroup=gpu",
  "--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule",
]

beforeAll(async () => {
  registry = await startRegistry({ name: "resolver-int", dir: mkdtempSync(join(work, "registry-")) })
  ns = await createNamespace(info, "aicr-res")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  await applyManifests(info, [...jobRbac({ namespace: ns, discoveryNamespace: ns, serviceAccount: "aicr-jobs", agentServiceAccount: "aicr-agent" })])
  await applyManifests(info, [{ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: SAMPLE }])
  start(CURRENT)
})

afterAll(async () => {
  await stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await registry?.stop()
  rmSync(work, { recursive: true, force: true })
})

describe("resolver on the local control plane", () => {
  it(`resolves the sample runtime for real with AICR ${CURRENT}: 13 releases, and the recorded bundle is the hand-run one byte for byte`, async () => {
    const r = await waitFor("Resolved", "True", "InputsResolved")
    expect(current(r, "Discovered")).toMatchObject({ status: "True", reason: "NodeGroupsDiscovered" })
    expect(r.status?.discovery?.criteria).toMatchObject({ accelerator: "h100", os: "ubuntu" })
    expect(r.status?.resolution).toMatchObject({ releases: 13, aicr: { version: CURRENT, image: `ghcr.io/nvidia/aicr:${CURRENT}` } })
    const cm = await content(r.status!.resolution!.contentConfigMap!)
    expect(cm.immutable).toBe(true)
    const recipe = JSON.parse(cm.data["recipe.json"]!)
    expect(recipe.deploymentOrder).toHaveLength(13)
    expect(cm.data["snapshot.json"]).toMatch(/kind: Snapshot/)
    const bundle = JSON.parse(cm.data["values.json"]!)
    expect(bundle.files).toEqual(await handBundle(CURRENT, cm.data["recipe.json"]!, SAMPLE_FLAGS))
    expect(await aicrJobs("recipe")).toHaveLength(1)
    expect(await aicrJobs("bundle")).toHaveLength(1)
    expect(await aicrJobs("snapshot")).toHaveLength(1)
  }, 300_000)
})
