// The local upstream against the real helm v4 CLI: `helm repo add` + `helm pull` from the HTTP repositories,
// `helm pull oci://…` from the OCI side, and `helm template` renders every chart into its workloads.
import { createHash } from "node:crypto"
import { mkdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { isolatedHelm, type IsolatedHelm } from "@aicr/testing/harness"
import { parseAllDocuments } from "yaml"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChartUpstream, FIXTURE_CHARTS, HOLD_PORT, HOLD_SCRIPT, PAUSE_IMAGE, startChartUpstream } from "../src/index"

let upstream: ChartUpstream
let h: IsolatedHelm
let work: string
const helm = (...args: string[]) => h.helm(...args)

beforeAll(async () => {
  upstream = await startChartUpstream()
  h = await isolatedHelm("chart-upstream-")
  work = h.work
})

afterAll(async () => {
  await upstream?.stop()
  await h?.cleanup()
})

describe("local chart upstream", () => {
  it("serves every fixture chart, OCI sources from the registry and the rest over HTTP", () => {
    expect(upstream.charts.map((c) => c.name).sort()).toEqual(FIXTURE_CHARTS.map((c) => c.chart).sort())
    expect(upstream.rewrites["https://charts.jetstack.io"]).toBe(`${upstream.httpUrl}/charts.jetstack.io`)
    expect(upstream.rewrites["oci://ghcr.io/nvidia"]).toBe(`${upstream.ociPrefix}/ghcr.io/nvidia`)
    expect(
      upstream.charts
        .filter((c) => c.ref !== undefined)
        .map((c) => c.name)
        .sort(),
    ).toEqual(["kai-scheduler", "kubeflow-trainer", "nvsentinel"])
  })

  it("lets helm add each HTTP repository and pull each chart, byte for byte", async () => {
    const out = join(work, "pulled-http")
    await mkdir(out)
    const http = upstream.charts.filter((c) => c.ref === undefined)
    const repos = [...new Set(http.map((c) => c.url))]
    for (const [i, url] of repos.entries()) await helm("repo", "add", `r${i}`, url)
    await helm("repo", "update")
    for (const c of http) {
      await helm("pull", `r${repos.indexOf(c.url)}/${c.name}`, "--version", c.version, "--destination", out)
      const bytes = await readFile(join(out, `${c.name}-${c.version}.tgz`))
      expect(`sha256:${createHash("sha256").update(bytes).digest("hex")}`).toBe(c.digest)
    }
  })

  it("lets helm pull the OCI sources with --plain-http", async () => {
    const out = join(work, "pulled-oci")
    await mkdir(out)
    for (const c of upstream.charts.filter((x) => x.ref !== undefined)) {
      await helm("pull", `${c.url}/${c.name}`, "--version", c.version, "--plain-http", "--destination", out)
      expect((await readFile(join(out, `${c.name}-${c.version}.tgz`))).length).toBe(c.size)
    }
  })

  it("renders every chart with helm template into its workloads, tolerating the GPU taint", async () => {
    for (const c of FIXTURE_CHARTS) {
      const served = upstream.charts.find((x) => x.name === c.chart)!
      const ref = served.ref !== undefined ? `${served.url}/${c.chart}` : c.chart
      const args = served.ref !== undefined ? ["--plain-http"] : ["--repo", served.url]
      const text = await helm("template", c.name, ref, "--version", c.version, "--namespace", c.namespace, ...args)
      const docs = parseAllDocuments(text)
        .map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace: string }; spec: { template: { spec: { tolerations: unknown[] } } } })
        .filter((d) => d != null && typeof d === "object" && "kind" in d) // helm v4 prints "Pulled:"/"Digest:" for OCI charts
      // Each ServiceAccount with its ClusterRole and ClusterRoleBinding (kai-scheduler's kai-operator).
      const accounts = (c.serviceAccounts ?? []).flatMap((sa) => ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"].map((k) => `${k}/${sa.name}`))
      expect(docs.map((d) => `${d.kind}/${d.metadata.name}`).sort()).toEqual([...c.workloads.map((w) => `${w.kind}/${w.name}`), ...accounts].sort())
      for (const d of docs.filter((x) => x.kind === "Deployment" || x.kind === "DaemonSet")) {
        expect(d.metadata.namespace).toBe(c.namespace)
        expect(d.spec.template.spec.tolerations).toContainEqual({ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" })
      }
      for (const d of docs.filter((x) => x.kind === "ServiceAccount")) expect(d.metadata.namespace).toBe(c.namespace)
    }
  })

  it("renders a held workload (hold.image) with the hold program and its readiness probe, and the pause container without", async () => {
    const c = FIXTURE_CHARTS.find((x) => x.chart === "prometheus-adapter")!
    const served = upstream.charts.find((x) => x.name === c.chart)!
    const render = async (...set: string[]) =>
      parseAllDocuments(await helm("template", c.name, c.chart, "--version", c.version, "--namespace", c.namespace, "--repo", served.url, ...set))
        .map((d) => d.toJS() as { kind: string; spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } })
        .filter((d) => d?.kind === "Deployment")[0]!.spec.template.spec.containers[0]!
    expect(await render()).toEqual({ name: "main", image: PAUSE_IMAGE })
    expect(await render("--set", "hold.image=127.0.0.1:5000/node@sha256:0123")).toEqual({
      name: "main",
      image: "127.0.0.1:5000/node@sha256:0123",
      command: ["/nodejs/bin/node", "-e", HOLD_SCRIPT],
      env: [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
      readinessProbe: { httpGet: { path: "/ready", port: HOLD_PORT }, periodSeconds: 1 },
    })
  })
})
