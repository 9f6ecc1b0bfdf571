// What the real charts need from the operator's Applications, each shown on a real Argo CD v3.4.2 against the real
// kube-apiserver, with and without it.
//
// Server-side apply: the real kubeflow-trainer 2.1.0 package ships a 913 KB CRD (ClusterTrainingRuntime). The test
// packs that CRD, read from the real package at run time, into a chart of its own, pushes it with the real helm into
// the runtime registry and lets Argo CD sync it: with client-side apply (sync options without ServerSideApply=true)
// the sync fails on the API server's 262,144-byte annotation limit; with the operator's sync options it installs.
//
// Deleting the Application (resources finalizer) deletes what it installed except CRDs: Argo CD keeps CRDs on cascade
// deletion, so the 913 KB CRD is still there, not being deleted, once the Application is gone.
//
// Comparison exceptions: the real gpu-operator v25.10.1 chart renders its ClusterPolicy with
// `spec.migManager.config.name` null, which the CRD defaults. Without the operator's comparison exceptions a
// comparison after the successful sync finds the ClusterPolicy different (the release is OutOfSync and self-heal syncs
// it again); with them (the operator's Application) it is ready at its digest and later comparisons find nothing.
// The same for the real kube-prometheus-stack 82.8.0 with AICR's own values for it (from the real `aicr bundle` of the
// pinned previous AICR, run here): AICR's EKS overlay sets `storageSpec.emptyDir: null`, the chart renders the
// Prometheus with `spec.storage.emptyDir: null`, server-side apply stores no emptyDir, and without the exception a
// comparison after the successful sync finds the Prometheus different.
//
// Stand-ins these depend on (docs/local-control-plane.md, "What kwok cannot run"): the webhook stand-in answers the
// Prometheus operator's admission webhooks and writes their caBundles; the status stand-in writes the Prometheus's
// Available condition that Argo CD's health check waits for; kwok completes the chart's admission hook Jobs without
// running them.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { realChartsDir } from "@aicr/chart-upstream"
import {
  applyManifests,
  type ArgoCd,
  deleteApplication,
  eventually,
  expectOk,
  getApplication,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  readVersions,
  startArgoCd,
  waitForApplication,
} from "@aicr/testing/harness"
import { type Chart, pushChart } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { COMPARISON_EXCEPTIONS, SYNC_OPTIONS } from "../src/index"
import { APPS, aicrBundle, bundleValues, chartApplication, outOfSyncAfterSync, stillSynced, withApplication } from "./comparison"

const info: HarnessInfo = inject("harness")
const suffix = Math.random().toString(36).slice(2, 6)
const CRD = "clustertrainingruntimes.trainer.kubeflow.org"
let argocd: ArgoCd | undefined
let helm: IsolatedHelm
let chart: Chart
let gpuOperator: Chart
let prometheusStack: Chart
/** AICR's values for kube-prometheus-stack, from the real bundle. */
let prometheusValues: Record<string, unknown>

/** The Application the step executor writes for `chart` (project default here), with its sync options replaced when asked. */
const application = (name: string, syncOptions?: string[], of: () => Chart = () => chart, values: Record<string, unknown> = {}) => {
  const app = chartApplication(name, `sync-${suffix}`, of(), values)
  return syncOptions === undefined ? app : { ...app, spec: { ...app.spec, syncPolicy: { ...app.spec.syncPolicy, syncOptions } } }
}

beforeAll(async () => {
  ;[argocd, helm] = await Promise.all([startArgoCd(info), isolatedHelm("argocd-sync-options-")])
  // The release namespace, as the chart's install creates a component namespace (Argo CD does not create it).
  await applyManifests(info, [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: `sync-${suffix}`, labels: { "pod-security.kubernetes.io/enforce": "privileged" } } },
  ])
  // A chart holding only the real package's largest CRD, taken from the package at run time (nothing is copied into
  // this repository).
  const src = join(helm.work, "real-crd")
  mkdirSync(join(src, "templates"), { recursive: true })
  execFileSync("tar", [
    "-xzf",
    join(realChartsDir()!, "kubeflow-trainer-2.1.0.tgz"),
    "-C",
    helm.work,
    "kubeflow-trainer/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml",
  ])
  execFileSync("cp", [join(helm.work, "kubeflow-trainer", "crds", "trainer.kubeflow.org_clustertrainingruntimes.yaml"), join(src, "templates", "crd.yaml")])
  writeFileSync(join(src, "Chart.yaml"), `apiVersion: v2\nname: real-crd-${suffix}\nversion: 2.1.0\ntype: application\n`)
  await helm.helm("package", src, "-d", join(helm.work, "pkgs"))
  chart = await pushChart(info, helm, `real-crd-${suffix}`, "2.1.0", join(helm.work, "pkgs", `real-crd-${suffix}-2.1.0.tgz`))
  gpuOperator = await pushChart(info, helm, "gpu-operator", "v25.10.1", join(realChartsDir()!, "gpu-operator-v25.10.1.tgz"))
  prometheusStack = await pushChart(info, helm, "kube-prometheus-stack", "82.8.0", join(realChartsDir()!, "kube-prometheus-stack-82.8.0.tgz"))
  // AICR's values for the release, as its bundle writes them for the reference recipe (EKS, H100, Ubuntu, training, Kubeflow).
  prometheusValues = bundleValues(aicrBundle(readVersions().aicrPrevious, helm.work), "kube-prometheus-stack")
})

afterAll(async () => {
  for (const name of [`csa-${suffix}`, `ssa-${suffix}`, `csd-${suffix}`, `ssd-${suffix}`, `kpc-${suffix}`, `kps-${suffix}`])
    await deleteApplication(info, name, { timeoutMs: 120_000 }).catch(() => undefined)
  await argocd?.stop()
  await helm?.cleanup()
})

describe("the operator's sync options on the real charts", () => {
  it("syncs with server-side apply and creates no namespace (the chart's install does, with its Pod Security labels)", () => {
    expect(SYNC_OPTIONS).toEqual(["ServerSideApply=true"])
  })

  it("without server-side apply, the sync of the real 913 KB CRD fails on the annotation limit", async () => {
    const name = `csa-${suffix}`
    expectOk(await kubeRequest(info, { method: "POST", path: APPS, body: application(name, []) }), `create ${name}`)
    const failed = await eventually(
      async () => {
        const op = (await getApplication(info, name)).status?.operationState
        return op?.phase === "Failed" || op?.phase === "Error" ? op : undefined
      },
      { timeoutMs: 180_000, intervalMs: 500, what: `Application ${name}: sync failed` },
    )
    expect(failed.message).toMatch(/Too long: (must have at most|may not be more than) 262144 bytes/u)
    expect((await kubeRequest(info, { method: "GET", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}` })).status).toBe(404)
    await deleteApplication(info, name, { timeoutMs: 120_000 })
  }, 600_000)

  it("with the operator's sync options it installs the CRD and is ready at the chart's digest", async () => {
    const name = `ssa-${suffix}`
    expectOk(await kubeRequest(info, { method: "POST", path: APPS, body: application(name) }), `create ${name}`)
    await waitForApplication(info, name, chart.digest, { timeoutMs: 180_000 })
    const crd = expectOk(await kubeRequest(info, { method: "GET", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}` }), "get CRD")
    expect(crd.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"]).toBeUndefined()
    expect(JSON.stringify(crd).length).toBeGreaterThan(262_144)
    await deleteApplication(info, name, { timeoutMs: 120_000 })
    // Argo CD removes the resources finalizer only once everything it deletes on cascade is gone, and it never deletes
    // a CRD on cascade (v3.4.2 `shouldBeDeleted`: `!kube.IsCRD(obj)`), so the CRD outlives its Application.
    const kept = expectOk(
      await kubeRequest(info, { method: "GET", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}` }),
      "get CRD after the Application's deletion",
    )
    expect(kept.metadata.deletionTimestamp).toBeUndefined()
    expectOk(
      await kubeRequest(info, { method: "DELETE", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}` }),
      "delete the CRD left behind",
    )
  }, 600_000)

  it("without the comparison exceptions, the real gpu-operator is OutOfSync on a field the CRD defaults after a successful sync", async () => {
    const app = application(`csd-${suffix}`, undefined, () => gpuOperator)
    const { ignoreDifferences: _, ...spec } = app.spec
    await withApplication(info, { ...app, spec }, async () => {
      // After the sync succeeded at the chart's digest (the operator pins charts by digest), a comparison finds the ClusterPolicy different.
      await outOfSyncAfterSync(info, app.metadata.name, gpuOperator, ["ClusterPolicy/cluster-policy"])
    })
  }, 1_800_000)

  it("with them (the operator's Application), the real gpu-operator is synced and ready at its digest, and stays synced", async () => {
    expect(application("x").spec.ignoreDifferences).toEqual(COMPARISON_EXCEPTIONS)
    const app = application(`ssd-${suffix}`, undefined, () => gpuOperator)
    await withApplication(info, app, () => stillSynced(info, app.metadata.name, gpuOperator))
  }, 1_800_000)

  it("without the comparison exceptions, the real kube-prometheus-stack with AICR's values is OutOfSync on its Prometheus's null emptyDir after a successful sync", async () => {
    const storage = (prometheusValues["prometheus"] as Record<string, Record<string, unknown>>)["prometheusSpec"]!["storageSpec"] as Record<string, unknown>
    expect(storage).toHaveProperty("emptyDir", null)
    expect(storage).toHaveProperty("volumeClaimTemplate")
    const app = application(`kpc-${suffix}`, undefined, () => prometheusStack, prometheusValues)
    const { ignoreDifferences: _, ...spec } = app.spec
    await withApplication(info, { ...app, spec }, async () => {
      await outOfSyncAfterSync(info, app.metadata.name, prometheusStack, ["Prometheus/kube-prometheus-prometheus"])
    })
  }, 2_400_000)

  it("with them (the operator's Application), the real kube-prometheus-stack is synced and ready at its digest and stays synced, its Prometheus stored without emptyDir", async () => {
    const app = application(`kps-${suffix}`, undefined, () => prometheusStack, prometheusValues)
    await withApplication(info, app, async () => {
      await stillSynced(info, app.metadata.name, prometheusStack)
      const prometheus = expectOk(
        await kubeRequest(info, { method: "GET", path: `/apis/monitoring.coreos.com/v1/namespaces/sync-${suffix}/prometheuses/kube-prometheus-prometheus` }),
        "get Prometheus",
      )
      expect(prometheus.spec.storage).not.toHaveProperty("emptyDir")
      expect(prometheus.spec.storage.volumeClaimTemplate.spec.storageClassName).toBe("gp2")
    })
  }, 2_400_000)
})
