// The real nvidia-dra-driver-gpu 25.12.0 chart with AICR's own values for it (from the real `aicr bundle`; the same
// values in v0.10.16 and v0.11.1), on a real Argo CD v3.4.2 against the real kube-apiserver v1.35.4.
//
// The chart renders its DeviceClass gpu.nvidia.com at resource.k8s.io/v1 with `spec.extendedResourceName:
// nvidia.com/gpu`. That field belongs to the DRAExtendedResource feature, alpha and off by default in Kubernetes 1.35
// (as on EKS, which enables no alpha feature), and an API server without it drops the field from what it stores.
// Without the operator's comparison exceptions a comparison after the successful sync finds the DeviceClass different
// (the release is OutOfSync and self-heal syncs it again and again); with them (the operator's Application) it is
// ready at its digest, later comparisons find nothing, and no further sync runs.
//
// Stand-ins this depends on (docs/local-control-plane.md, "What kwok cannot run"): kwok runs the chart's controller
// Deployment's pod as Ready without running it (its DaemonSet selects no kwok node); the chart has no webhook or hook
// enabled with AICR's values.
import { join } from "node:path"
import { realChartsDir } from "@aicr/chart-upstream"
import {
  applyManifests,
  type ArgoCd,
  expectOk,
  getApplication,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  readVersions,
  startArgoCd,
} from "@aicr/testing/harness"
import { type Chart, pushChart } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type Application, COMPARISON_EXCEPTIONS } from "../src/index"
import { aicrBundle, bundleValues, chartApplication, firstSyncFinished, outOfSyncAfterSync, stillSynced, withApplication } from "./comparison"

const info: HarnessInfo = inject("harness")
const suffix = Math.random().toString(36).slice(2, 6)
const DEVICE_CLASS = "/apis/resource.k8s.io/v1/deviceclasses/gpu.nvidia.com"
let argocd: ArgoCd | undefined
let helm: IsolatedHelm
let dra: Chart
/** AICR's values for nvidia-dra-driver-gpu, from the real bundle of each pinned AICR. */
const values: Record<string, Record<string, unknown>> = {}

beforeAll(async () => {
  ;[argocd, helm] = await Promise.all([startArgoCd(info), isolatedHelm("argocd-dra-")])
  // Argo CD creates no namespace (SYNC_OPTIONS): the release's namespace exists first, as the chart's install makes it.
  await applyManifests(info, [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: `dra-${suffix}`, labels: { "pod-security.kubernetes.io/enforce": "privileged" } } },
  ])
  dra = await pushChart(info, helm, "nvidia-dra-driver-gpu", "25.12.0", join(realChartsDir()!, "nvidia-dra-driver-gpu-25.12.0.tgz"))
  const { aicr, aicrPrevious } = readVersions()
  for (const v of [aicrPrevious, aicr]) values[v] = bundleValues(aicrBundle(v, helm.work), "nvidia-dra-driver-gpu")
})

afterAll(async () => {
  await argocd?.stop()
  await helm?.cleanup()
})

describe("the real nvidia-dra-driver-gpu's DeviceClass on an API server without DRA extended resources", () => {
  it("AICR's values for the chart are the same in both pinned releases and enable the GPU DeviceClass; the API server runs without DRAExtendedResource", async () => {
    const { aicr, aicrPrevious } = readVersions()
    expect(values[aicr]).toEqual(values[aicrPrevious])
    expect(values[aicr]).toMatchObject({ resources: { gpus: { enabled: true } } })
    const metrics = await kubeRequest(info, { method: "GET", path: "/metrics" })
    expect(String(metrics.body)).toMatch(/^kubernetes_feature_enabled\{name="DRAExtendedResource",stage="ALPHA"\} 0$/mu)
  })

  it("without the comparison exceptions, the release is OutOfSync on its DeviceClass after a successful sync, the field dropped by the API server", async () => {
    const app = chartApplication(`drc-${suffix}`, `dra-${suffix}`, dra, values[readVersions().aicr])
    const { ignoreDifferences: _, ...spec } = app.spec
    await withApplication(info, { ...app, spec }, async () => {
      await outOfSyncAfterSync(info, app.metadata.name, dra, ["DeviceClass/gpu.nvidia.com"])
      const stored = expectOk(await kubeRequest(info, { method: "GET", path: DEVICE_CLASS }), "get DeviceClass")
      expect(stored.spec.selectors).toHaveLength(1)
      expect(stored.spec).not.toHaveProperty("extendedResourceName")
    })
  }, 1_800_000)

  it("with them (the operator's Application), the release is synced and ready at its digest, stays synced, and is not synced again", async () => {
    expect(COMPARISON_EXCEPTIONS).toContainEqual({ group: "resource.k8s.io", kind: "DeviceClass", jqPathExpressions: [".spec.extendedResourceName"] })
    const app = chartApplication(`drs-${suffix}`, `dra-${suffix}`, dra, values[readVersions().aicr])
    await withApplication(info, app, async () => {
      const finished = await firstSyncFinished(info, app.metadata.name, dra)
      await stillSynced(info, app.metadata.name, dra)
      expect(((await getApplication(info, app.metadata.name)) as unknown as Application).status?.operationState?.finishedAt).toBe(finished)
    })
  }, 1_800_000)
})
