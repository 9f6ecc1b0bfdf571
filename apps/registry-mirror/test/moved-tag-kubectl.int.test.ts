// A moved tag as a user sees it, on the real kube-apiserver and the real registry: the registry-mirror (the whole
// controller, runApp) and the planner (its shipped bundle, as a process) run; someone moves a mirrored chart tag with the real `oras` CLI (ECR tags are
// mutable under the seed's creation template). `kubectl get clusterruntime -o wide` shows STALLED True, and
// `kubectl get clusterruntime cluster -o jsonpath=…` gives the Stalled reason Conflict with the release, the tag and
// both digests; the restore command from the message, run with the real oras, brings STALLED back to False.
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { type ChartUpstream, startChartUpstream } from "@aicr/chart-upstream"
import { OciClient } from "@aicr/oras"
import {
  applyManifests,
  createNamespace,
  eventually,
  type HarnessInfo,
  kubeRequest,
  type Proc,
  type Registry,
  spawnProc,
  startRegistry,
  expectCondition,
} from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { registryMirrorApp } from "../src/app"
import { contentConfigMap, contentData, INPUT_DIGEST } from "./support/fixtures"
import { resolveAsResolver } from "./support/resolved"

const run = promisify(execFile)
const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
let upstream: ChartUpstream
let registry: Registry
let work: string
let client: OciClient
let ns: string
let mirror: { readonly stop: () => Promise<void> } | undefined
let planner: Proc | undefined

/** The real kubectl, as a user runs it (the admin's kubeconfig). */
const kubectl = async (...args: string[]) =>
  (await run(info.bin.kubectl!, args, { env: { PATH: [dirname(info.bin.kubectl!), "/usr/bin", "/bin"].join(":"), KUBECONFIG: info.kubeconfig, HOME: work } }))
    .stdout
/** `kubectl get clusterruntime -o wide` as a header → value map of its one row. */
const wide = async (): Promise<Record<string, string>> => {
  const [header, row, ...rest] = (await kubectl("get", "clusterruntime", "-o", "wide")).trimEnd().split("\n")
  expect(rest).toEqual([])
  const starts = [...header!.matchAll(/\S+(?: \S+)*/gu)].map((m) => ({ name: m[0], at: m.index }))
  return Object.fromEntries(starts.map((c, i) => [c.name, row!.slice(c.at, starts[i + 1]?.at).trim()]))
}
const STALLED = "Stalled"
/** The Stalled condition's reason and message, as `kubectl get clusterruntime cluster -o jsonpath=…` prints them. */
const stalled = async () => ({
  reason: await kubectl("get", "clusterruntime", "cluster", "-o", `jsonpath={.status.conditions[?(@.type=="${STALLED}")].reason}`),
  message: await kubectl("get", "clusterruntime", "cluster", "-o", `jsonpath={.status.conditions[?(@.type=="${STALLED}")].message}`),
})

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "mirror-moved-kubectl-"))
  ;[upstream, registry] = await Promise.all([startChartUpstream(), startRegistry({ name: "mirror-moved-kubectl", dir: join(work, "registry") })])
  client = new OciClient()
  ns = await createNamespace(info, "aicr-moved-k")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster" },
      spec: { intent: "training", platform: "kubeflow", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } },
    },
    { ...contentConfigMap(INPUT_DIGEST, contentData()), metadata: { ...contentConfigMap(INPUT_DIGEST).metadata, namespace: ns } },
  ])
  const common = [
    "--kubeconfig",
    info.kubeconfig,
    "--leader-elect=false",
    "--metrics-bind-address=0",
    "--health-probe-bind-address=0",
    "--log-level=warn",
    "--operator-namespace",
    ns,
  ]
  mirror = startController(info, registryMirrorApp(), [
    "--operator-namespace",
    ns,
    "--registry",
    `oci://${registry.address}/aicr/moved`,
    "--verify-interval",
    "1s",
    ...Object.entries(upstream.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
  ])
  const bundle = await buildApp("planner", join(work, "planner"))
  planner = await spawnProc({
    name: "planner",
    bin: process.execPath,
    args: [bundle.entry, ...common, "--stabilization-window", "10m"],
    logDir: join(info.dir, "logs", "moved-tag-kubectl"),
  })
}, 120_000)

afterAll(async () => {
  await mirror?.stop()
  await planner?.stop()
  // The planner's cleanup finalizer would hold the runtime: drop it with the runtime.
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } }, contentType: "application/merge-patch+json" })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await client?.close()
  await upstream?.stop()
  await registry?.stop()
  await rm(work, { recursive: true, force: true })
})

describe("a moved tag in kubectl get clusterruntime", () => {
  let recorded: { repository: string; tag: string; digest: string }

  it("mirrored: STALLED False in -o wide; the default columns stay the guide's", async () => {
    await resolveAsResolver(info, INPUT_DIGEST)
    const ref = await eventually(
      async () => {
        const r = (await kubeRequest(info, { method: "GET", path: RUNTIME })).body as {
          status?: { conditions?: Array<{ type: string; status: string }>; mirror?: { charts?: Array<{ release: string; ref: string }> } }
        }
        return r.status?.conditions?.find((c) => c.type === "Mirrored")?.status === "True"
          ? r.status.mirror?.charts?.find((c) => c.release === "gpu-operator")?.ref
          : undefined
      },
      { timeoutMs: 60_000, what: "Mirrored=True" },
    )
    const at = ref.indexOf("@")
    recorded = { repository: ref.slice(0, ref.lastIndexOf(":", at)), tag: ref.slice(ref.lastIndexOf(":", at) + 1, at), digest: ref.slice(at + 1) }
    await eventually(async () => ((await wide()).STALLED === "False" ? true : undefined), { timeoutMs: 30_000, what: "STALLED False" })
    expect((await kubectl("get", "clusterruntime")).split("\n")[0]).toMatch(/^NAME\s+READY\s+REASON\s+STEP\s+AGE$/u)
  }, 120_000)

  it("a tag moved with oras push: STALLED True, and the Stalled reason is Conflict naming the release, the tag and both digests", async () => {
    const other = join(work, "other.txt")
    await writeFile(other, "not the chart the mirror recorded\n")
    await run(
      info.bin.oras,
      ["push", `${recorded.repository}:${recorded.tag}`, "--artifact-type", "application/vnd.example.moved", "other.txt", "--plain-http"],
      { cwd: work },
    )
    const found = (await client.resolve(`${recorded.repository}:${recorded.tag}`)).digest
    expect(found).not.toBe(recorded.digest)

    const row = await eventually(
      async () => {
        const r = await wide()
        return r.STALLED === "True" ? r : undefined
      },
      { timeoutMs: 60_000, what: "STALLED True" },
    )
    expect(row.NAME).toBe("cluster")
    const s = expectCondition({ status: row.STALLED, ...(await stalled()) }, "Stalled", "True", "Conflict")
    expect(s.message).toContain(`Release gpu-operator: tag ${recorded.repository}:${recorded.tag} now holds ${found}, not ${recorded.digest}`)
  }, 120_000)

  it("the restore command from the message, run with oras: STALLED False again", async () => {
    const { message } = await stalled()
    const command = /restore it with (oras tag \S+ \S+)$/u.exec(message)?.[1]
    expect(command).toBe(`oras tag ${recorded.repository}@${recorded.digest} ${recorded.tag}`)
    await run(info.bin.oras, [...command!.split(" ").slice(1), "--plain-http"])
    await eventually(async () => ((await wide()).STALLED === "False" ? true : undefined), { timeoutMs: 60_000, what: "STALLED False after the restore" })
    expect((await stalled()).reason).not.toBe("Conflict")
  }, 120_000)
})
