// spec.paused on the real kube-apiserver with a real registry and the local chart upstream: while the runtime is
// paused the controller starts no mirror (Mirrored=False/Mirroring saying why, and nothing in the registry); once
// it is cleared, the resolution is mirrored.
import { join } from "node:path"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { type ChartUpstream, startChartUpstream } from "@aicr/chart-upstream"
import { OciClient } from "@aicr/oras"
import { applyManifests, createNamespace, eventually, expectOk, type HarnessInfo, kubeRequest, type Registry, startRegistry } from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { registryMirrorApp } from "../src/app"
import { contentConfigMap, contentData, INPUT_DIGEST } from "./support/fixtures"
import { resolveAsResolver } from "./support/resolved"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const SPEC = { intent: "training", platform: "kubeflow", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } }
let upstream: ChartUpstream
let registry: Registry
let ns: string
let mirror: { readonly stop: () => Promise<void> } | undefined

interface Cond {
  type: string
  status: string
  reason: string
  message: string
  observedGeneration?: number
}
const getRuntime = async () =>
  expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as {
    metadata: { generation: number }
    status?: { conditions?: Cond[]; mirror?: { inputDigest?: string } }
  }
const mirrored = async () => {
  const r = await getRuntime()
  const c = r.status?.conditions?.find((x) => x.type === "Mirrored")
  return c?.observedGeneration === r.metadata.generation ? c : undefined
}
const setPaused = async (paused: boolean) =>
  expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { spec: { paused } }, contentType: "application/merge-patch+json" }), "set paused")

const resolve = (inputDigest: string) => resolveAsResolver(info, inputDigest)

/** The tags of the bundle repository in the registry (none: the repository does not exist). */
const bundleTags = async (): Promise<string[]> => {
  const res = await fetch(`http://${registry.address}/v2/aicr/paused/bundles/cluster/tags/list`)
  if (res.status === 404) return []
  return ((await res.json()) as { tags?: string[] | null }).tags ?? []
}

beforeAll(async () => {
  ;[upstream, registry] = await Promise.all([
    startChartUpstream(),
    startRegistry({ name: "mirror-paused", dir: await mkdtemp(join(tmpdir(), "mirror-paused-registry-")) }),
  ])
  ns = await createNamespace(info, "aicr-mirror-paused")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  await applyManifests(info, [
    { apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: { ...SPEC, paused: true } },
    { ...contentConfigMap(INPUT_DIGEST, contentData()), metadata: { ...contentConfigMap(INPUT_DIGEST).metadata, namespace: ns } },
  ])
  mirror = startController(info, registryMirrorApp(), [
    "--registry",
    `oci://${registry.address}/aicr/paused`,
    "--operator-namespace",
    ns,
    ...Object.entries(upstream.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
  ])
})

afterAll(async () => {
  await mirror?.stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await upstream?.stop()
  await registry?.stop()
})

describe("registry-mirror and spec.paused on the local control plane", () => {
  it("starts no mirror while the runtime is paused, and mirrors once it is cleared", async () => {
    await resolve(INPUT_DIGEST)
    const waiting = await eventually(
      async () => {
        const m = await mirrored()
        return m?.message.startsWith("spec.paused") ? m : undefined
      },
      { timeoutMs: 60_000, what: "Mirrored=False saying paused" },
    )
    expect(waiting).toMatchObject({
      status: "False",
      reason: "Mirroring",
      message: `spec.paused is set: input ${INPUT_DIGEST.slice(7, 19)} is not mirrored until it is cleared`,
    })
    // A later event (the runtime touched) still starts nothing.
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: RUNTIME,
        body: { metadata: { annotations: { "test/touch": "1" } } },
        contentType: "application/merge-patch+json",
      }),
      "touch",
    )
    await new Promise((r) => setTimeout(r, 3_000))
    expect(await bundleTags()).toEqual([])
    expect((await getRuntime()).status?.mirror).toBeUndefined()

    await setPaused(false)
    await resolve(INPUT_DIGEST) // the resolver's Resolved=True for the new generation (inputs unchanged)
    const done = await eventually(
      async () => {
        const m = await mirrored()
        return m?.status === "True" ? m : undefined
      },
      { timeoutMs: 90_000, what: "Mirrored=True after unpausing" },
    )
    expect(done.reason).toBe("ContentMirrored")
    expect((await getRuntime()).status?.mirror?.inputDigest).toBe(INPUT_DIGEST)
    expect(await bundleTags()).toHaveLength(1)
    const client = new OciClient()
    try {
      const tag = (await bundleTags())[0]!
      expect((await client.resolve(`${registry.address}/aicr/paused/bundles/cluster:${tag}`)).digest).toMatch(/^sha256:/)
    } finally {
      await client.close()
    }
  }, 200_000)
})
