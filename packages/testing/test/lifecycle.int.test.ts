// Lifecycle of harness processes: none outlives the process that started it (not after SIGKILL: the watchdog; not
// after SIGTERM or an uncaught error: the exit and signal handlers), a later start in a state dir cleans up what a
// dead plane left there, and a component that cannot start fails with its log tail.
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "vitest"
import { eventually, HarnessError, repoRoot, startApiServer, startControlPlane, stopRecorded } from "../src/harness/index"
import { readState } from "../src/harness/plane"
import { pidAlive } from "../src/harness/proc"

const fixture = join(import.meta.dirname, "fixtures", "watchdog-parent.ts")

const watchdogsOf = (childPid: number): number[] =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const argv = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0")
        return argv.includes("aicr-harness-watchdog") && argv.includes(String(childPid))
      } catch {
        return false
      }
    })
    .map(Number)

const startParent = async (mode: string, dir: string) => {
  const parent = spawn(process.execPath, ["--import", "tsx", fixture, mode, dir], { cwd: repoRoot(), stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  parent.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
  const exited = new Promise<void>((resolve) => parent.once("exit", () => resolve()))
  const line = await Promise.race([
    new Promise<string>((resolve) => createInterface({ input: parent.stdout }).once("line", resolve)),
    exited.then(() => {
      throw new Error(`fixture exited early: ${stderr}`)
    }),
  ])
  return { parent, exited, pids: JSON.parse(line) as { etcd: number; registry: number } }
}

describe("harness process cleanup", () => {
  it.each([
    { name: "SIGKILL of the parent (watchdog)", mode: "wait", signal: "SIGKILL" as const },
    { name: "SIGTERM of the parent (signal handler)", mode: "wait", signal: "SIGTERM" as const },
    { name: "an uncaught error in the parent (exit handler)", mode: "throw", signal: undefined },
  ])("stops every child after $name", async ({ mode, signal }) => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-watchdog-"))
    try {
      const { parent, exited, pids } = await startParent(mode, dir)
      const all = [pids.etcd, pids.registry]
      expect(all.every((p) => pidAlive(p))).toBe(true)
      // A watchdog is spawned right after its child; between fork and exec /proc still shows node's argv, so wait
      // until each child has exactly one.
      await eventually(async () => all.every((p) => watchdogsOf(p).length === 1), { timeoutMs: 5_000, what: "one watchdog per child" })
      if (signal) parent.kill(signal)
      await exited
      await eventually(async () => all.every((p) => !pidAlive(p)), { timeoutMs: 20_000, what: "children gone" })
      await eventually(async () => all.every((p) => watchdogsOf(p).length === 0), { timeoutMs: 5_000, what: "watchdogs gone" })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("state dir recovery", () => {
  it("kills the leftovers of a dead detached plane and starts afresh in the same dir, once for concurrent starts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-stale-"))
    try {
      const first = await startControlPlane({ dir, attached: false, kwok: false })
      const old = readState(dir)!.procs
      expect(old.map((p) => p.name).sort()).toEqual(["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "registry", "webhook-stand-in"])
      // Detached processes have no watchdog: they outlive their starter on purpose.
      expect(old.every((p) => watchdogsOf(p.pid).length === 0)).toBe(true)
      process.kill(first.info.pids["kube-apiserver"]!, "SIGKILL")
      await eventually(async () => !pidAlive(first.info.pids["kube-apiserver"]!), { what: "apiserver gone" })

      // Two concurrent starts in one dir: the lock makes one start the plane and the other reuse it.
      const both = await Promise.all([startControlPlane({ dir, kwok: false }), startControlPlane({ dir, kwok: false })])
      expect(both.map((p) => p.reused).sort()).toEqual([false, true])
      expect(both[0].info.server).toBe(both[1].info.server)
      const second = both.find((p) => !p.reused)!
      expect(old.every((p) => !pidAlive(p.pid))).toBe(true)
      expect(second.info.server).not.toBe(first.info.server)
      await second.stop()
      expect(Object.values(second.info.pids).every((pid) => !pidAlive(pid))).toBe(true)
    } finally {
      await stopRecorded(dir)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("start failures", () => {
  it("rejects with the component's log tail and leaves no process behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-fail-"))
    try {
      const err = await startApiServer({ etcd: "http://127.0.0.1:1", dir, extraArgs: ["--no-such-flag=1"] }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(HarnessError)
      expect((err as Error).message).toMatch(/kube-apiserver exited \(1\) before it was ready; last lines of .*kube-apiserver\.log/)
      expect((err as Error).message).toContain("unknown flag: --no-such-flag")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
