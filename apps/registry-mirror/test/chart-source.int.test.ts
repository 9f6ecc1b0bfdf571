// ChartSourceUnsupported from a real cause on the local control plane: an upstream rewrite (chart
// registryMirror.upstreamRewrites, as an air-gapped install configures one) points https://charts.jetstack.io at the
// local upstream's Helm repository of the prometheus charts, whose real index.yaml has no cert-manager. The whole
// controller (runApp) reads the reference recipe's content; Mirrored names the release, the chart, both repositories
// and the fix, and clears once the rewrite points at a repository that holds the chart.
import { type ChartUpstream, startChartUpstream } from "@aicr/chart-upstream"
import {
  applyManifests,
  createNamespace,
  expectCondition,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  type Registry,
  startRegistry,
  untilCondition,
} from "@aicr/testing/harness"
import { removeRuntime, RUNTIME, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { registryMirrorApp } from "../src/app"
import { contentConfigMap, contentData, INPUT_DIGEST } from "./support/fixtures"
import { resolveAsResolver } from "./support/resolved"

const info: HarnessInfo = inject("harness")
const JETSTACK = "https://charts.jetstack.io"
const PROMETHEUS = "https://prometheus-community.github.io/helm-charts"
let upstream: ChartUpstream
let registry: Registry
let ns: string
let mirror: { readonly stop: () => Promise<void> } | undefined

const start = (rewrites: Readonly<Record<string, string>>) => {
  mirror = startController(info, registryMirrorApp(), [
    "--registry",
    `oci://${registry.address}/aicr/source`,
    "--operator-namespace",
    ns,
    ...Object.entries(rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
  ])
}
const stop = async () => {
  await mirror?.stop()
  mirror = undefined
}

interface Cond {
  type: string
  status: string
  reason: string
  message: string
  observedGeneration?: number
}
const getRuntime = async () =>
  expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as { status?: { conditions?: Cond[]; mirror?: { inputDigest?: string } } }
const mirrored = async () => (await getRuntime()).status?.conditions?.find((c) => c.type === "Mirrored")

beforeAll(async () => {
  ;[upstream, registry] = await Promise.all([startChartUpstream(), startRegistry({ name: "mirror-source" })])
  ns = await createNamespace(info, "aicr-source")
  await removeRuntime(info)
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster" },
      spec: { intent: "training", platform: "kubeflow", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } },
    },
    { ...contentConfigMap(INPUT_DIGEST, contentData()), metadata: { ...contentConfigMap(INPUT_DIGEST).metadata, namespace: ns } },
  ])
  await resolveAsResolver(info, INPUT_DIGEST)
})

afterAll(async () => {
  await stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await upstream?.stop()
  await registry?.stop()
})

describe("a chart source the mirror cannot copy", () => {
  it("ChartSourceUnsupported: a rewrite to a repository without the chart names the release, both repositories and the fix; the right rewrite clears it", async () => {
    const wrong = upstream.rewrites[PROMETHEUS]!
    expect(upstream.rewrites[JETSTACK]).toBeDefined()
    start({ ...upstream.rewrites, [JETSTACK]: wrong })
    const c = await untilCondition(mirrored, "Mirrored", "False", "ChartSourceUnsupported", { timeoutMs: 90_000, intervalMs: 500 })
    expect(c.message).toBe(
      `Release cert-manager: chart cert-manager version v1.17.2 is not in the Helm repository ${JETSTACK}, read at ${wrong} by an upstream rewrite: ` +
        "add that chart version there, or fix the rewrite (chart registryMirror.upstreamRewrites, --upstream-rewrite)",
    )
    await stop()
    start(upstream.rewrites)
    await untilCondition(mirrored, "Mirrored", "True", "ContentMirrored", { timeoutMs: 90_000, intervalMs: 500 })
    expectCondition(await mirrored(), "Mirrored", "True", "ContentMirrored")
    expect((await getRuntime()).status?.mirror?.inputDigest).toBe(INPUT_DIGEST)
  }, 240_000)
})
