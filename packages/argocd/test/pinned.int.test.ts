// Charts pinned by digest, on real Argo CD v3.4.2 (repo-server with helm v3.19.4) and the real OCI registry: the
// Application exactly as the step-executor writes it (releaseApplication: native OCI source, targetRevision the chart's
// manifest digest) keeps what it deployed when someone re-pushes other content under the same chart tag with helm, as
// ECR allows with mutable tags: the same objects at the same resourceVersions, the same resource list, Synced. A control Application that names the tag instead (the same native OCI source, targetRevision the
// version) moves to the new content on the same refresh, which proves Argo CD saw the re-push.
import { ANNOTATION_CHART_DIGEST, type Application, releaseApplication } from "../src/application"
import { isReadyAt, notReadyAt } from "../src/ready"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  type ArgoCd,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  ociApplication,
  packageDemoChart,
  runtimeOciPrefix,
  startArgoCd,
  waitForApplication,
} from "@aicr/testing/harness"
import { APPS, type Chart, installProject, pushChart } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"

const info: HarnessInfo = inject("harness")
const suffix = Math.random().toString(36).slice(2, 6)
const CHART = `pinned-${suffix}`
const PINNED = `pinned-digest-${suffix}`
const BY_TAG = `pinned-tag-${suffix}`
let argocd: ArgoCd | undefined
let helm: IsolatedHelm
let first: Chart
let nsPinned = ""
let nsTag = ""
let before: Awaited<ReturnType<typeof deployed>> | undefined
let resourcesBefore: unknown

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const deployment = async (ns: string, name: string): Promise<any> =>
  expectOk(await kubeRequest(info, { method: "GET", path: `/apis/apps/v1/namespaces/${ns}/deployments/${name}` }), `GET Deployment ${ns}/${name}`)
const imageOf = async (ns: string, name: string): Promise<string> => (await deployment(ns, name)).spec.template.spec.containers[0].image
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const configMap = async (ns: string, name: string): Promise<any> =>
  expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/configmaps/${name}` }), `GET ConfigMap ${ns}/${name}`)
/** What the release deployed, as the API server holds it: every object's identity, resourceVersion and spec/data. */
const deployed = async (ns: string, name: string) => {
  const [d, cm] = await Promise.all([deployment(ns, name), configMap(ns, `${name}-settings`)])
  return {
    deployment: {
      uid: d.metadata.uid,
      resourceVersion: d.metadata.resourceVersion,
      generation: d.metadata.generation,
      labels: d.metadata.labels,
      spec: d.spec,
    },
    configMap: { uid: cm.metadata.uid, resourceVersion: cm.metadata.resourceVersion, data: cm.data },
  }
}
const app = async (name: string): Promise<Application> =>
  expectOk(await kubeRequest(info, { method: "GET", path: `${APPS}/${name}` }), `GET Application ${name}`)
const hardRefresh = (name: string) =>
  kubeRequest(info, {
    method: "PATCH",
    path: `${APPS}/${name}`,
    contentType: "application/merge-patch+json",
    body: { metadata: { annotations: { "argocd.argoproj.io/refresh": "hard" } } },
  })

beforeAll(async () => {
  ;[nsPinned, nsTag] = await Promise.all([createNamespace(info, "pinned-digest"), createNamespace(info, "pinned-tag")])
  helm = await isolatedHelm("aicr-pinned-")
  const [started, pushed] = await Promise.all([startArgoCd(info), pushChart(info, helm, CHART, "0.1.0", await packageDemoChart(helm, CHART, "0.1.0", "1.0.0"))])
  argocd = started
  first = pushed
  await installProject(info, [nsPinned, nsTag])
}, 300_000)

afterAll(async () => {
  for (const name of [PINNED, BY_TAG]) await kubeRequest(info, { method: "DELETE", path: `${APPS}/${name}` })
  await eventually(
    async () => (await Promise.all([PINNED, BY_TAG].map((n) => kubeRequest(info, { method: "GET", path: `${APPS}/${n}` })))).every((r) => r.status === 404),
    { timeoutMs: 60_000, what: "both Applications pruned and gone" },
  ).catch(() => undefined)
  await argocd?.stop()
  await helm?.cleanup()
})

describe("charts pinned by digest on real Argo CD", () => {
  it("the executor's Application pulls the chart by its manifest digest: Argo CD reports that digest as the synced revision", async () => {
    const written = releaseApplication({
      name: PINNED,
      namespace: ARGOCD_NAMESPACE,
      project: "aicr",
      release: PINNED,
      destinationNamespace: nsPinned,
      chartRef: first.ref,
      chartDigest: first.digest,
      valuesDigest: `sha256:${"0".repeat(64)}`,
      values: { message: "pinned" },
      labels: {},
      planDigest: `sha256:${"1".repeat(64)}`,
      writtenAt: new Date().toISOString(),
      syncRetries: 1,
      record: {
        release: {
          name: PINNED,
          namespace: nsPinned,
          order: 0,
          dependsOn: [],
          chart: { ref: first.ref, digest: first.digest },
          values: { digest: `sha256:${"0".repeat(64)}` },
        },
        plan: [PINNED],
      },
    })
    expect(written.spec.source).toEqual({
      repoURL: `${runtimeOciPrefix(info)}/charts/${CHART}`,
      path: ".",
      targetRevision: first.digest,
      helm: { releaseName: PINNED, valuesObject: { message: "pinned" } },
    })
    expect(written.metadata.annotations[ANNOTATION_CHART_DIGEST]).toBe(first.digest)
    await applyManifests(info, [
      written,
      ociApplication({
        name: BY_TAG,
        repoURL: `${runtimeOciPrefix(info)}/charts/${CHART}`,
        targetRevision: "0.1.0",
        destinationNamespace: nsTag,
        values: { message: "by tag" },
      }),
    ])
    const ready = await eventually(
      async () => {
        const a = await app(PINNED)
        return isReadyAt(a, first.digest) && a
      },
      { timeoutMs: 120_000, intervalMs: 200, what: `${PINNED} ready at ${first.digest}` },
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}: ${notReadyAt(await app(PINNED), first.digest).join("; ")}`)
    })
    expect(ready.status?.sync?.revision).toBe(first.digest)
    // The tag-pinned control resolves the tag to the same manifest for now.
    await waitForApplication(info, BY_TAG, first.digest, { timeoutMs: 120_000 })
    expect(await imageOf(nsPinned, PINNED)).toBe("registry.example/demo:1.0.0")
    expect(await imageOf(nsTag, BY_TAG)).toBe("registry.example/demo:1.0.0")
    before = await deployed(nsPinned, PINNED)
    resourcesBefore = ready.status?.resources
  })

  it("other content re-pushed under the same tag changes nothing the pinned Application deployed; the tag-pinned control follows it", async () => {
    const moved = await pushChart(info, helm, CHART, "0.1.0", await packageDemoChart(helm, CHART, "0.1.0", "9.9.9"))
    expect(moved.ref).toBe(first.ref)
    expect(moved.digest).not.toBe(first.digest)
    expectOk(await hardRefresh(PINNED), "refresh the pinned Application")
    expectOk(await hardRefresh(BY_TAG), "refresh the control")
    // The control moves: Argo CD saw the new manifest under the tag and deployed it.
    await waitForApplication(info, BY_TAG, moved.digest, { timeoutMs: 120_000 })
    await eventually(async () => (await imageOf(nsTag, BY_TAG)) === "registry.example/demo:9.9.9", {
      timeoutMs: 60_000,
      what: "the control's Deployment at the re-pushed content",
    })
    // The pinned one was refreshed too (the hard refresh annotation is consumed), and stays at the digest it was written for.
    await eventually(async () => (await app(PINNED)).metadata.annotations?.["argocd.argoproj.io/refresh"] === undefined, {
      timeoutMs: 60_000,
      what: `${PINNED} refreshed`,
    })
    const a = await app(PINNED)
    expect(notReadyAt(a, first.digest)).toEqual([])
    expect(a.status?.sync?.revision).toBe(first.digest)
    expect(a.spec?.source.targetRevision).toBe(first.digest)
    expect(await imageOf(nsPinned, PINNED)).toBe("registry.example/demo:1.0.0")
    // Nothing it deployed was written again: same objects, same resourceVersions, same content; Argo CD lists the
    // same resources, all Synced.
    expect(before).toBeDefined()
    expect(await deployed(nsPinned, PINNED)).toEqual(before)
    expect(a.status?.resources).toEqual(resourcesBefore)
    expect(a.status?.sync?.status).toBe("Synced")
  })
})
