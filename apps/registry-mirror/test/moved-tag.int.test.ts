// A tag moved under the mirror, on the real registry and the real kube-apiserver: the whole controller (runApp) mirrors
// a resolution, then someone re-pushes other content under a recorded chart tag with the real helm (as ECR allows
// with mutable tags). The controller's check of its recorded tags (--verify-interval) turns Mirrored False/Conflict
// naming the release, the tag and both digests, and pushes nothing back; the restore command its message gives,
// run with the real oras CLI, puts the recorded manifest back under the tag and Mirrored returns to True. A recorded
// manifest deleted with the real oras is pushed again, at the same digest.
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { type ChartUpstream, startChartUpstream } from "@aicr/chart-upstream"
import { OciClient } from "@aicr/oras"
import {
  applyManifests,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  packageDemoChart,
  type Registry,
  startRegistry,
  untilCondition,
  expectCondition,
} from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { registryMirrorApp } from "../src/app"
import { contentConfigMap, contentData, INPUT_DIGEST } from "./support/fixtures"
import { resolveAsResolver } from "./support/resolved"

const run = promisify(execFile)
const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
let upstream: ChartUpstream
let registry: Registry
let registryDir: string
let helm: IsolatedHelm
let client: OciClient
let ns: string
let controller: { readonly stop: () => Promise<void> } | undefined

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
interface Mirror {
  inputDigest?: string
  bundle?: string
  charts?: Array<{ release: string; ref: string }>
}
const getRuntime = async () =>
  expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as {
    metadata: { generation: number }
    status?: { conditions?: Cond[]; mirror?: Mirror }
  }
const mirrored = async () => (await getRuntime()).status?.conditions?.find((c) => c.type === "Mirrored")

const resolve = (inputDigest: string) => resolveAsResolver(info, inputDigest)

beforeAll(async () => {
  registryDir = await mkdtemp(join(tmpdir(), "mirror-moved-registry-"))
  ;[upstream, registry, helm] = await Promise.all([
    startChartUpstream(),
    startRegistry({ name: "mirror-moved", dir: registryDir, deletes: true }),
    isolatedHelm("aicr-moved-"),
  ])
  client = new OciClient()
  ns = await createNamespace(info, "aicr-moved")
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
  controller = startController(info, registryMirrorApp(), [
    "--registry",
    `oci://${registry.address}/aicr/moved`,
    "--operator-namespace",
    ns,
    "--verify-interval",
    "1s",
    ...Object.entries(upstream.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
  ])
})

afterAll(async () => {
  await controller?.stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await client?.close()
  await helm?.cleanup()
  await upstream?.stop()
  await registry?.stop()
  await rm(registryDir, { recursive: true, force: true })
})

describe("a tag moved under the registry-mirror, on the real registry", () => {
  let recorded: { reference: string; digest: string }
  let mirror: Mirror

  it("mirrors the resolution; its checks of the recorded tags leave Mirrored True while they are intact", async () => {
    await resolve(INPUT_DIGEST)
    await eventually(async () => (await mirrored())?.status === "True", { timeoutMs: 60_000, what: "Mirrored=True" })
    mirror = (await getRuntime()).status!.mirror!
    const ref = mirror.charts!.find((c) => c.release === "gpu-operator")!.ref
    recorded = { reference: ref.slice(0, ref.indexOf("@")), digest: ref.slice(ref.indexOf("@") + 1) }
    expect(recorded.reference).toBe(`${registry.address}/aicr/moved/charts/gpu-operator:v25.10.1`)
    // Several check intervals pass: still True, the same message.
    await new Promise((r) => setTimeout(r, 3_000))
    expect(await mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
  })

  it("other content pushed under the tag with helm: Mirrored=False/Conflict names the release, the tag and both digests; nothing is pushed back", async () => {
    const tgz = await packageDemoChart(helm, "gpu-operator", "v25.10.1", "9.9.9")
    await helm.helm("push", tgz, `oci://${registry.address}/aicr/moved/charts`, "--plain-http")
    const found = (await client.resolve(recorded.reference)).digest
    expect(found).not.toBe(recorded.digest)

    const c = await untilCondition(mirrored, "Mirrored", "False", "Conflict", { timeoutMs: 30_000 })
    expect(c.message).toContain(`Release gpu-operator: tag ${recorded.reference} now holds ${found}, not ${recorded.digest}`)
    // The mirror leaves the tag as it found it, and its record as it was.
    await new Promise((r) => setTimeout(r, 2_000))
    expect((await client.resolve(recorded.reference)).digest).toBe(found)
    expect((await getRuntime()).status!.mirror).toEqual(mirror)
    expectCondition(await mirrored(), "Mirrored", "False", "Conflict")
  })

  it("the restore command the message gives, run with the real oras, puts the recorded manifest back; Mirrored=True again", async () => {
    const message = (await mirrored())!.message
    const command = /restore it with (oras tag \S+ \S+)$/u.exec(message)?.[1]
    expect(command).toBe(`oras tag ${recorded.reference.slice(0, recorded.reference.lastIndexOf(":"))}@${recorded.digest} v25.10.1`)
    // The local registry speaks plain HTTP: the one flag the command needs here and not on ECR.
    await run(info.bin.oras, [...command!.split(" ").slice(1), "--plain-http"])
    expect((await client.resolve(recorded.reference)).digest).toBe(recorded.digest)
    const ok = await eventually(
      async () => {
        const m = await mirrored()
        return m?.status === "True" ? m : undefined
      },
      { timeoutMs: 30_000, what: "Mirrored=True after the restore" },
    )
    expect(ok.reason).toBe("ContentMirrored")
    expect((await getRuntime()).status!.mirror).toEqual(mirror)
  })

  it("a recorded manifest deleted from the registry (oras manifest delete) is pushed again at the same digest; Mirrored stays True", async () => {
    const repository = recorded.reference.slice(0, recorded.reference.lastIndexOf(":"))
    await run(info.bin.oras, ["manifest", "delete", `${repository}@${recorded.digest}`, "--force", "--plain-http"])
    expect(await client.manifestExists(recorded.reference)).toBeUndefined()
    await eventually(async () => (await client.manifestExists(recorded.reference))?.digest === recorded.digest, {
      timeoutMs: 30_000,
      what: `${recorded.reference} pushed again at ${recorded.digest}`,
    })
    expect(await mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
    expect((await getRuntime()).status!.mirror).toEqual(mirror)
  })
})
