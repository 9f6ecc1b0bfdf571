/**
 * The README's first command exactly as a user runs it (`hack/aicr-dev.mjs up`, detached so the test can go on),
 * in its own state directory: it must bring up the control plane, install the API, start the operator's processes,
 * start Argo CD, apply the sample runtime, show what the controllers report (resolved for real and mirrored), and
 * `down` must leave no process behind.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { pidAlive, repoRoot } from "@aicr/testing/harness"
import { afterAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const root = repoRoot()
const dir = mkdtempSync(join(tmpdir(), "aicr-readme-up-"))
const env = { ...process.env, AICR_LOCAL_DIR: dir }
const devScript = join(root, "hack", "aicr-dev.mjs")

const recordedPlane = (): Array<{ name: string; pid: number }> => (JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { procs: Array<{ name: string; pid: number }> }).procs
const planePids = (): number[] => recordedPlane().map((p) => p.pid)
/** The control plane's own processes (Argo CD's are restarted by every up). */
const corePids = (): number[] => recordedPlane().filter((p) => !/argocd|redis/.test(p.name)).map((p) => p.pid)
const recordedPids = (): number[] => {
  const operator = JSON.parse(readFileSync(join(dir, "operator.json"), "utf8")) as Array<{ pid: number }>
  return [...planePids(), ...operator.map((p) => p.pid)]
}

describe("aicr-dev up --detach and down", () => {
  let pids: number[] = []

  afterAll(async () => {
    await run(process.execPath, [devScript, "down"], { cwd: root, env }).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  })

  it("starts the control plane and the operator, and shows the runtime with the controllers' conditions", async () => {
    const { stdout } = await run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 16 << 20 })
    expect(stdout).toMatch(/^cluster\s/m)
    // The resolver runs the real AICR (snapshot, recipe, bundle Jobs) and the mirror mirrors what it resolved.
    expect(stdout).toContain("Discovered=True NodeGroupsDiscovered")
    // The local AICR is 0.x: up runs the resolver with the development allowance, and the message says so.
    expect(stdout).toMatch(/^Resolved=True InputsResolved: Resolved input [0-9a-f]{12} with AICR v\S+ into 13 releases; AICR \S+ is outside the supported range >=1\.0\.0,<2\.0\.0, allowed for development only \(aicr\.allowUnsupportedVersion\)$/m)
    expect(stdout).toMatch(/^Mirrored=True ContentMirrored: /m)
    expect(stdout).toContain("RegistryCredentialsReady=True CredentialsPresent")
    expect(stdout).toContain("EngineAvailable=True EngineReady")
    expect(stdout).toContain(`export KUBECONFIG=${join(dir, "kubeconfig")}`)
    expect(stdout).toContain("kubectl -n argocd get applications")
    pids = recordedPids()
    // etcd, registry, apiserver, webhook stand-in, KCM, scheduler, kwok, process kubelet, Argo CD's redis, repo-server, controller
    // + upstream, mirror, approval-guard, planner, ecr-credential-refresher, resolver, step-executor, validation-gate
    expect(pids.length).toBeGreaterThanOrEqual(19)
    expect(pids.every((pid) => pidAlive(pid))).toBe(true)
  })

  it("reuses the running control plane on a second up", async () => {
    const plane = corePids()
    const { stderr } = await run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 16 << 20 })
    expect(stderr).toMatch(/control plane ready in \d+\.\ds/)
    // Reused, not restarted: the control plane's processes are the ones the first up started (timings belong in
    // benchmarks); Argo CD's and the operator's processes are restarted.
    expect(corePids()).toEqual(plane)
    expect(plane.every((pid) => pidAlive(pid))).toBe(true)
  })

  it("stops every process it started on down", async () => {
    const all = recordedPids()
    const { stderr } = await run(process.execPath, [devScript, "down"], { cwd: root, env })
    expect(stderr).toMatch(/stopped 8 operator processes, 3 Argo CD processes and 8 control-plane processes/)
    expect(all.filter((pid) => pidAlive(pid))).toEqual([])
  })
})
