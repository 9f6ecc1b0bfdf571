// The whole controller (runApp: informers, work queue, driver, SSA) against the real kube-apiserver of the local
// control plane, a real registry and the local chart upstream: Mirrored=True with every ref, no write on an idle
// pass, and a registry outage shown as Mirroring (transient) that clears on recovery; then the bundle as it ships.
// As shipped, every mirror and tag check runs in the bundle's mirror process (a child process per call): the
// controller here runs with it too, behind a wrapper that records each start.
import { spawn } from "node:child_process"
import { once } from "node:events"
import { join } from "node:path"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { type ChartUpstream, startChartUpstream } from "@aicr/chart-upstream"
import { OciClient } from "@aicr/oras"
import {
  applyManifests,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  readAuditEvents,
  recordedProcess,
  type Registry,
  startRegistry,
} from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { registryMirrorApp } from "../src/app"
import { contentConfigMap, contentData, INPUT_DIGEST, OTHER_INPUT_DIGEST } from "./support/fixtures"
import { expectOrasPullsFixtureBundle } from "./support/oras-pull"
import { resolveAsResolver } from "./support/resolved"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
let upstream: ChartUpstream
let registry: Registry
let registryDir: string
let ns: string
let mirror: { readonly stop: () => Promise<void> }
let bundleDir: string
let built: Awaited<ReturnType<typeof buildApp>>
let mirrorProcess: ReturnType<typeof recordedProcess>

const start = (registryAddress: string, extra: string[] = []) => {
  mirror = startController(info, registryMirrorApp({ mirrorProcess: mirrorProcess.entry }), [
    "--registry",
    `oci://${registryAddress}/aicr/it`,
    "--operator-namespace",
    ns,
    ...Object.entries(upstream.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
    ...extra,
  ])
}

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
    status?: { conditions?: Cond[]; mirror?: { inputDigest?: string; bundle?: string; charts?: Array<{ release: string; ref: string }> } }
  }
const mirrored = async () => (await getRuntime()).status?.conditions?.find((c) => c.type === "Mirrored")
const touch = async (value: string) =>
  expectOk(await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { annotations: { "test/touch": value } } } }), "touch")

const resolve = (inputDigest: string) => resolveAsResolver(info, inputDigest)

beforeAll(async () => {
  registryDir = await mkdtemp(join(tmpdir(), "mirror-ctl-registry-"))
  // The bundle as it ships; its mirror process behind a wrapper that records each call's start, to show where they ran.
  bundleDir = await mkdtemp(join(tmpdir(), "mirror-bundle-"))
  built = await buildApp("registry-mirror", bundleDir)
  mirrorProcess = recordedProcess(bundleDir, join(built.outdir, "mirror-process.mjs"))
  ;[upstream, registry] = await Promise.all([startChartUpstream(), startRegistry({ name: "mirror-ctl", dir: registryDir })])
  ns = await createNamespace(info, "aicr-mirror")
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
    { ...contentConfigMap(OTHER_INPUT_DIGEST, contentData()), metadata: { ...contentConfigMap(OTHER_INPUT_DIGEST).metadata, namespace: ns } },
  ])
  start(registry.address)
})

afterAll(async () => {
  if (mirror) await mirror.stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await upstream?.stop()
  await registry?.stop()
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true })
})

describe("registry-mirror controller on the local control plane", () => {
  it("waits for Resolved, then mirrors the resolution and records every artifact", async () => {
    await eventually(async () => (await mirrored())?.reason === "AwaitingResolution", { what: "Mirrored=False/AwaitingResolution" })
    await resolve(INPUT_DIGEST)
    const c = await eventually(
      async () => {
        const m = await mirrored()
        return m?.status === "True" ? m : undefined
      },
      { timeoutMs: 60_000, what: "Mirrored=True" },
    )
    expect(c).toMatchObject({ reason: "ContentMirrored", observedGeneration: 1, message: expect.stringContaining(INPUT_DIGEST.slice(7, 19)) })
    const mirror = (await getRuntime()).status!.mirror!
    expect(mirror.inputDigest).toBe(INPUT_DIGEST)
    expect(mirror.charts).toHaveLength(16)
    const client = new OciClient()
    try {
      for (const r of [...mirror.charts!.map((x) => x.ref), mirror.bundle!]) {
        expect(r.startsWith(`${registry.address}/aicr/it/`)).toBe(true)
        expect((await client.resolve(r)).digest).toBe(r.slice(r.indexOf("@") + 1))
      }
    } finally {
      await client.close()
    }
    // The mirror ran in child processes started from the bundle's mirror-process.mjs, none of them this one.
    const pids = mirrorProcess.pids()
    expect(pids.length).toBeGreaterThanOrEqual(1)
    expect(pids).not.toContain(process.pid)
    // The real oras CLI pulls the bundle mirrored through the process: every file, byte for byte, 0644 or 0755.
    await expectOrasPullsFixtureBundle(mirror.bundle!)
  })

  it("writes nothing more while nothing changes, even when the runtime is touched", async () => {
    const ours = () =>
      readAuditEvents(info, { resource: "clusterruntimes", name: "cluster" }).filter((e) => e.requestURI.includes("fieldManager=aicr-registry-mirror")).length
    const before = ours()
    expect(before).toBeGreaterThanOrEqual(2) // AwaitingResolution, then ContentMirrored
    await touch("1")
    await new Promise((r) => setTimeout(r, 2_000))
    expect(ours()).toBe(before)
  })

  it("shows a registry outage as Mirroring (retrying after a transient failure) and clears it on recovery", async () => {
    const port = Number(registry.address.split(":")[1])
    await registry.stop()
    await resolve(OTHER_INPUT_DIGEST)
    const down = await eventually(
      async () => {
        const m = await mirrored()
        return m?.reason === "Mirroring" ? m : undefined
      },
      { timeoutMs: 60_000, what: "Mirrored=False/Mirroring" },
    )
    expect(down).toMatchObject({ status: "False", message: expect.stringContaining("retrying after a transient failure") })
    expect(down.message).toContain(registry.address)
    registry = await startRegistry({ name: "mirror-ctl", dir: registryDir, port })
    const up = await eventually(
      async () => {
        const m = await mirrored()
        return m?.status === "True" ? m : undefined
      },
      { timeoutMs: 90_000, what: "Mirrored=True after recovery" },
    )
    expect(up.message).toContain(OTHER_INPUT_DIGEST.slice(7, 19))
    expect((await getRuntime()).status!.mirror!.inputDigest).toBe(OTHER_INPUT_DIGEST)
  })

  it("reports refused credentials as Unauthorized, and re-reads the docker config without a restart", async () => {
    await mirror.stop()
    const secured = await startRegistry({ name: "mirror-ctl-secured", htpasswd: { user: "mirror", password: "right" } })
    const dockerConfig = join(registryDir, "docker-config.json")
    const auth = (password: string) => JSON.stringify({ auths: { [secured.address]: { auth: Buffer.from(`mirror:${password}`).toString("base64") } } })
    try {
      await writeFile(dockerConfig, auth("wrong"))
      start(secured.address, ["--docker-config", dockerConfig])
      const refused = await eventually(
        async () => {
          const m = await mirrored()
          return m?.reason === "Unauthorized" ? m : undefined
        },
        { timeoutMs: 60_000, what: "Mirrored=False/Unauthorized" },
      )
      expect(refused).toMatchObject({ status: "False", message: expect.stringContaining(secured.address) })
      await writeFile(dockerConfig, auth("right"))
      await touch("2") // any event: the credentials file is read again at the next handshake
      const ok = await eventually(
        async () => {
          const m = await mirrored()
          return m?.status === "True" ? m : undefined
        },
        { timeoutMs: 60_000, what: "Mirrored=True with fixed credentials" },
      )
      expect(ok.reason).toBe("ContentMirrored")
      expect((await getRuntime()).status!.mirror!.bundle).toContain(`${secured.address}/aicr/it/bundles/cluster:`)
    } finally {
      await mirror.stop()
      await secured.stop()
    }
  })

  it("runs as the bundle that ships (esbuild --splitting): starts on the YAML kubeconfig and mirrors through its mirror process", async () => {
    const child = spawn(
      process.execPath,
      [
        built.entry,
        "--kubeconfig",
        info.kubeconfig,
        "--leader-elect=false",
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
        "--log-level=warn",
        "--registry",
        `oci://${registry.address}/aicr/bundle`,
        "--operator-namespace",
        ns,
        ...Object.entries(upstream.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    )
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    try {
      await resolve(INPUT_DIGEST) // the status holds OTHER_INPUT_DIGEST: a new mirror, into a new prefix
      const ok = await eventually(
        async () => {
          const m = await mirrored()
          return m?.status === "True" && m.message.includes(INPUT_DIGEST.slice(7, 19)) ? m : undefined
        },
        { timeoutMs: 60_000, what: `Mirrored=True from the bundle (stderr: ${stderr})` },
      )
      expect(ok.reason).toBe("ContentMirrored")
      expect((await getRuntime()).status!.mirror!.bundle).toContain(`${registry.address}/aicr/bundle/bundles/cluster:`)
      expect(child.exitCode).toBeNull()
    } finally {
      child.kill("SIGTERM")
      if (child.exitCode === null) await once(child, "exit")
    }
    expect(stderr).not.toMatch(/error/i)
  })
})
