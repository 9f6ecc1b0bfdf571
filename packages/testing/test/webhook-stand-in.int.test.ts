// The plane's webhook stand-in (egress/egress.ts) against the real kube-apiserver: the API server calls an admission
// webhook whose Service has no real server (as on kwok nodes) through the egress selector, and the stand-in admits;
// it writes its CA into the webhook's caBundle as cert-manager's cainjector would; an aggregated API it stands in for
// turns Available. The control: a webhook naming a Service that does not exist is still refused, so the admission
// path is real and nothing is admitted by default. The status stand-in writes Available on a Prometheus (the real
// kube-prometheus-stack CRD, read from the real package at run time), as the Prometheus operator would.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parse } from "yaml"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { applyManifests, createNamespace, eventually, expectOk, type HarnessInfo, kubeRequest, repoRoot } from "../src/harness"

const info: HarnessInfo = inject("harness")
const suffix = Math.random().toString(36).slice(2, 7)
const HOOK = `standin-${suffix}`
const GROUP = `standin-${suffix}.test.aicr.run`
let ns: string
let refusedNs: string
const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
const APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"

const webhook = (name: string, namespace: string, service: string) => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingWebhookConfiguration",
  metadata: { name },
  webhooks: [
    {
      name: `configmaps.${name}.test.aicr.run`,
      clientConfig: { service: { namespace, name: service, path: "/validate", port: 443 } },
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
      failurePolicy: "Fail",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      timeoutSeconds: 5,
    },
  ],
})
const configMap = (namespace: string, name: string) =>
  ({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/configmaps`,
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "b" } },
  }) as const
/** The real charts folder (as @aicr/chart-upstream's realChartsDir finds it; that package depends on this one). */
const chartsDir = process.env.AICR_CHARTS_DIR ?? join(process.env.AICR_THIRD_PARTY_DIR ?? join(repoRoot(), "..", "shared", "third-party"), "charts")
const standInLog = () => readFileSync(info.logs["webhook-stand-in"]!, "utf8")

beforeAll(async () => {
  ns = await createNamespace(info, "standin")
  refusedNs = await createNamespace(info, "standin-missing")
  // The webhook's Service and its Deployment as a chart renders them: kwok marks the pod Running and Ready (so the
  // Service has an endpoint), but nothing listens behind it.
  await applyManifests(info, [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "hook", namespace: ns },
      spec: {
        selector: { matchLabels: { app: "hook" } },
        template: {
          metadata: { labels: { app: "hook" } },
          spec: {
            nodeSelector: { "eks.amazonaws.com/nodegroup": "system" },
            containers: [{ name: "hook", image: "registry.example/hook:1", ports: [{ containerPort: 9443 }] }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "hook", namespace: ns },
      spec: { selector: { app: "hook" }, ports: [{ port: 443, targetPort: 9443 }] },
    },
    webhook(HOOK, ns, "hook"),
    webhook(`${HOOK}-missing`, refusedNs, "no-such-service"),
  ])
})

afterAll(async () => {
  for (const name of [HOOK, `${HOOK}-missing`]) await kubeRequest(info, { method: "DELETE", path: `${VWC}/${name}` })
  await kubeRequest(info, { method: "DELETE", path: `${APISERVICES}/v1.${GROUP}` })
  await kubeRequest(info, { method: "DELETE", path: `/apis/monitoring.coreos.com/v1/namespaces/${ns}/prometheuses/standin` })
})

describe("the webhook stand-in", () => {
  it("writes its CA into the caBundle of a webhook that names a Service", async () => {
    const ca = Buffer.from(readFileSync(join(info.dir, "egress", "pki", "ca.crt"))).toString("base64")
    await eventually(
      async () => expectOk(await kubeRequest(info, { method: "GET", path: `${VWC}/${HOOK}` }), "get webhook").webhooks[0].clientConfig.caBundle === ca,
      {
        timeoutMs: 20_000,
        what: `caBundle of ${HOOK}`,
      },
    )
  })

  it("admits an object the webhook intercepts, answering in place of the pods kwok does not run", async () => {
    const res = await eventually(
      async () => {
        const r = await kubeRequest(info, configMap(ns, "admitted"))
        return r.status === 201 && r
      },
      { timeoutMs: 20_000, what: "ConfigMap admitted through the stand-in" },
    )
    expect(res.status).toBe(201)
    const line = standInLog()
      .split("\n")
      .find((l) => l.includes('"Admitted"') && l.includes(`"namespace":"${ns}"`) && l.includes('"name":"admitted"'))
    expect(line, "the stand-in logged the AdmissionReview it answered").toBeDefined()
    expect(JSON.parse(line!)).toMatchObject({ service: `${ns}/hook`, path: "/validate", operation: "CREATE", kind: "ConfigMap" })
  })

  it("leaves a webhook whose Service does not exist failing: the API server refuses what it intercepts", async () => {
    const res = await kubeRequest(info, configMap(refusedNs, "refused"))
    expect(res.status).toBe(500)
    expect((res.body as { message: string }).message).toContain(`failed calling webhook "configmaps.${HOOK}-missing.test.aicr.run"`)
  })

  it("serves the discovery of an aggregated API, so its APIService turns Available", async () => {
    await applyManifests(info, [
      {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: `v1.${GROUP}` },
        spec: {
          group: GROUP,
          version: "v1",
          service: { namespace: ns, name: "hook", port: 443 },
          insecureSkipTLSVerify: true,
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      },
    ])
    const available = await eventually(
      async () => {
        const a = expectOk(await kubeRequest(info, { method: "GET", path: `${APISERVICES}/v1.${GROUP}` }), "get APIService")
        const c = (a.status?.conditions ?? []).find((x: { type: string }) => x.type === "Available")
        return c?.status === "True" && c
      },
      { timeoutMs: 60_000, what: `APIService v1.${GROUP} Available` },
    )
    expect(available.status).toBe("True")
    expect(standInLog()).toContain(`"path":"/apis/${GROUP}/v1"`)
  })

  it("writes Available on a Prometheus, as the Prometheus operator kwok does not run would", async () => {
    const work = mkdtempSync(join(tmpdir(), "standin-crd-"))
    const file = "kube-prometheus-stack/charts/crds/crds/crd-prometheuses.yaml"
    execFileSync("tar", ["-xzf", join(chartsDir, "kube-prometheus-stack-82.8.0.tgz"), "-C", work, file])
    const crd = parse(readFileSync(join(work, file), "utf8"))
    // Server-side, like Argo CD: the CRD is far over the client-side apply annotation limit.
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/prometheuses.monitoring.coreos.com?fieldManager=standin-test&force=true",
        body: JSON.stringify(crd),
        contentType: "application/apply-patch+yaml",
      }),
      "apply the Prometheus CRD",
    )
    await eventually(
      async () => {
        const r = await kubeRequest(info, {
          method: "POST",
          path: `/apis/monitoring.coreos.com/v1/namespaces/${ns}/prometheuses`,
          body: { apiVersion: "monitoring.coreos.com/v1", kind: "Prometheus", metadata: { name: "standin" }, spec: {} },
        })
        return r.status === 201 || r.status === 409
      },
      { timeoutMs: 30_000, what: "Prometheus created once its CRD is served" },
    )
    const available = await eventually(
      async () => {
        const p = expectOk(
          await kubeRequest(info, { method: "GET", path: `/apis/monitoring.coreos.com/v1/namespaces/${ns}/prometheuses/standin` }),
          "get Prometheus",
        )
        return (p.status?.conditions ?? []).find((c: { type: string; status: string }) => c.type === "Available" && c.status === "True")
      },
      { timeoutMs: 20_000, what: "Prometheus Available" },
    )
    expect(available).toMatchObject({ reason: "StandIn" })
    await eventually(async () => standInLog().includes(`"object":"prometheuses.monitoring.coreos.com/${ns}/standin"`), {
      timeoutMs: 5_000,
      what: "the stand-in's log line for the status it wrote",
    })
  })
})
