// What the real charts need from the operator's Applications, each shown on a real Argo CD v3.4.2 against the real
// kube-apiserver, with and without it.
//
// Server-side apply: the real kubeflow-trainer 2.1.0 package ships a 913 KB CRD (ClusterTrainingRuntime). The test
// packs that CRD, read from the real package at run time, into a chart of its own, pushes it with the real helm into
// the runtime registry and lets Argo CD sync it: with client-side apply (sync options without ServerSideApply=true)
// the sync fails on the API server's 262,144-byte annotation limit; with the operator's sync options it installs.
//
// Comparison exceptions: the real gpu-operator v25.10.1 chart renders its ClusterPolicy with
// `spec.migManager.config.name` null, which the CRD defaults. Without the operator's comparison exceptions the release
// stays OutOfSync after every successful sync; with them (the operator's Application) it is synced and ready.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { realChartsDir } from "@aicr/chart-upstream"
import { type ArgoCd, ARGOCD_NAMESPACE, deleteApplication, eventually, expectOk, getApplication, type HarnessInfo, type IsolatedHelm, isolatedHelm, kubeRequest, startArgoCd, waitForApplication } from "@aicr/testing/harness"
import { type Chart, pushChart } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { COMPARISON_EXCEPTIONS, releaseApplication, SYNC_OPTIONS } from "../src/index"

const info: HarnessInfo = inject("harness")
const suffix = Math.random().toString(36).slice(2, 6)
const CRD = "clustertrainingruntimes.trainer.kubeflow.org"
const APPS = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications`
let argocd: ArgoCd | undefined
let helm: IsolatedHelm
let chart: Chart
let gpuOperator: Chart

/** The Application the step executor writes for `chart` (project default here), with its sync options replaced when asked. */
const application = (name: string, syncOptions?: string[], of: () => Chart = () => chart) => {
  const chart = of()
  const app = releaseApplication({
    name, namespace: ARGOCD_NAMESPACE, project: "default", release: name, destinationNamespace: `sync-${suffix}`,
    chartRef: chart.ref, chartDigest: chart.digest, valuesDigest: "sha256:0", values: {}, labels: {}, planDigest: "sha256:0",
    writtenAt: new Date().toISOString(), syncRetries: 0,
    record: { release: { name, namespace: `sync-${suffix}`, order: 0, dependsOn: [], chart: { ref: chart.ref, digest: chart.digest }, values: { digest: "sha256:0" } }, plan: [name] },
  })
  return syncOptions === undefined ? app : { ...app, spec: { ...app.spec, syncPolicy: { ...app.spec.syncPolicy, syncOptions } } }
}

beforeAll(async () => {
  ;[argocd, helm] = await Promise.all([startArgoCd(info), isolatedHelm("argocd-sync-options-")])
  // A chart holding only the real package's largest CRD, taken from the package at run time (nothing is copied into
  // this repository).
  const src = join(helm.work, "real-crd")
  mkdirSync(join(src, "templates"), { recursive: true })
  execFileSync("tar", ["-xzf", join(realChartsDir()!, "kubeflow-trainer-2.1.0.tgz"), "-C", helm.work, "kubeflow-trainer/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"])
  execFileSync("cp", [join(helm.work, "kubeflow-trainer", "crds", "trainer.kubeflow.org_clustertrainingruntimes.yaml"), join(src, "templates", "crd.yaml")])
  writeFileSync(join(src, "Chart.yaml"), `apiVersion: v2\nname: real-crd-${suffix}\nversion: 2.1.0\ntype: application\n`)
  await helm.helm("package", src, "-d", join(helm.work, "pkgs"))
  chart = await pushChart(info, helm, `real-crd-${suffix}`, "2.1.0", join(helm.work, "pkgs", `real-crd-${suffix}-2.1.0.tgz`))
  gpuOperator = await pushChart(info, helm, "gpu-operator", "v25.10.1", join(realChartsDir()!, "gpu-operator-v25.10.1.tgz"))
})

afterAll(async () => {
  for (const name of [`csa-${suffix}`, `ssa-${suffix}`, `csd-${suffix}`, `ssd-${suffix}`]) await deleteApplication(info, name, { timeoutMs: 120_000 }).catch(() => undefined)
  await argocd?.stop()
  await helm?.cleanup()
})

describe("the operator's sync options on the real charts", () => {
  it("syncs with server-side apply and creates the namespace", () => {
    expect(SYNC_OPTIONS).toEqual(["CreateNamespace=true", "ServerSideApply=true"])
  })

  it("without server-side apply, the sync of the real 913 KB CRD fails on the annotation limit", async () => {
    const name = `csa-${suffix}`
    expectOk(await kubeRequest(info, { method: "POST", path: APPS, body: application(name, ["CreateNamespace=true"]) }), `create ${name}`)
    const failed = await eventually(async () => {
      const op = (await getApplication(info, name)).status?.operationState
      return op?.phase === "Failed" || op?.phase === "Error" ? op : undefined
    }, { timeoutMs: 180_000, intervalMs: 500, what: `Application ${name}: sync failed` })
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
  }, 600_000)

  it("without the comparison exceptions, the real gpu-operator stays OutOfSync on a field the CRD defaults after a successful sync", async () => {
    const name = `csd-${suffix}`
    const app = application(name, undefined, () => gpuOperator)
    const { ignoreDifferences: _, ...spec } = app.spec
    expectOk(await kubeRequest(info, { method: "POST", path: APPS, body: { ...app, spec } }), `create ${name}`)
    // The sync succeeded at the chart's digest (the operator pins charts by digest), and two comparisons after it still find the ClusterPolicy different.
    const synced = await eventually(async () => {
      const a = await getApplication(info, name)
      const op = a.status?.operationState
      return op?.phase === "Succeeded" && op.syncResult?.revision === gpuOperator.digest && a
    }, { timeoutMs: 300_000, intervalMs: 1_000, what: `Application ${name}: sync succeeded` })
    const after = (synced.status as { reconciledAt?: string }).reconciledAt ?? ""
    let comparisons = 0
    let last = ""
    const outOfSync = await eventually(async () => {
      const a = await getApplication(info, name)
      const at = (a.status as { reconciledAt?: string }).reconciledAt ?? ""
      if (at > after && at !== last) {
        comparisons++
        last = at
      }
      return comparisons >= 2 && a
    }, { timeoutMs: 180_000, intervalMs: 1_000, what: `Application ${name}: two comparisons after the sync` })
    expect(outOfSync.status?.sync?.status).toBe("OutOfSync")
    const resources = (outOfSync.status as { resources?: Array<{ kind: string; name: string; status?: string }> }).resources ?? []
    expect(resources.filter((r) => r.status !== "Synced").map((r) => `${r.kind}/${r.name}`)).toEqual(["ClusterPolicy/cluster-policy"])
    await deleteApplication(info, name, { timeoutMs: 180_000 })
  }, 600_000)

  it("with them (the operator's Application), the real gpu-operator is synced and ready at its digest", async () => {
    expect(application("x").spec.ignoreDifferences).toEqual(COMPARISON_EXCEPTIONS)
    const name = `ssd-${suffix}`
    expectOk(await kubeRequest(info, { method: "POST", path: APPS, body: application(name, undefined, () => gpuOperator) }), `create ${name}`)
    await waitForApplication(info, name, gpuOperator.digest, { timeoutMs: 300_000 })
    await deleteApplication(info, name, { timeoutMs: 180_000 })
  }, 600_000)
})
