/**
 * `aicr-dev up` in the foreground stops everything it started when its own process gets SIGTERM or SIGINT, as a
 * process manager sends them (to that one process, not to a terminal's process group): the control plane, the
 * operator's pods (the process kubelet's containers) and Argo CD all go, and `up` exits cleanly. Each case starts a whole
 * local control plane of its own (state in a temporary AICR_LOCAL_DIR) and signals it once the chart is installed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventually } from "@aicr/testing/harness"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..")

const stat = (pid: number): { ppid: number; state: string } | undefined => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8")
    const rest = s.slice(s.lastIndexOf(")") + 2).split(" ")
    return { state: rest[0]!, ppid: Number(rest[1]) }
  } catch {
    return undefined
  }
}

const pids = () =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/u.test(d))
    .map(Number)

const alive = (pid: number) => {
  const s = stat(pid)
  return s !== undefined && s.state !== "Z"
}

/** Every live process below `top`, by parent pid. */
const descendants = (top: number): number[] => {
  const children = new Map<number, number[]>()
  for (const pid of pids()) {
    const s = stat(pid)
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid])
  }
  const out: number[] = []
  const queue = [top]
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()!) ?? []) {
      out.push(c)
      queue.push(c)
    }
  }
  return out.filter(alive)
}

/** Live processes whose command line names `dir` (every component of the plane gets its state or log path). */
const naming = (dir: string) =>
  pids().filter((pid) => {
    if (pid === process.pid || !alive(pid)) return false
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir)
    } catch {
      return false
    }
  })

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))))

describe("aicr-dev up and signals", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("%s to up's own process stops every process it started", { timeout: 900_000 }, async (signal) => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-up-signal-"))
    // Its own process group, so the signal reaches only this process, as from a process manager.
    const up = spawn(process.execPath, [join(root, "hack", "aicr-dev.mjs"), "up"], {
      cwd: root,
      env: { ...process.env, AICR_LOCAL_DIR: dir },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    })
    let log = ""
    up.stdout!.on("data", (b: Buffer) => (log += b.toString()))
    up.stderr!.on("data", (b: Buffer) => (log += b.toString()))
    const done = exited(up)
    try {
      await eventually(async () => log.includes("operator installed:") || up.exitCode !== null, {
        timeoutMs: 540_000,
        intervalMs: 1000,
        what: "up to install the operator",
      })
      expect(up.exitCode, log).toBeNull()
      const started = descendants(up.pid!)
      // etcd, kube-apiserver, controller-manager, scheduler, kwok, registry, the process kubelet and the controllers'
      // containers it runs, the chart upstream, Argo CD.
      expect(started.length, log).toBeGreaterThan(10)
      expect(naming(dir).length).toBeGreaterThan(5)

      process.kill(up.pid!, signal)
      const code = await Promise.race([done, new Promise<string>((r) => setTimeout(() => r("still running"), 120_000))])
      // A stop on request exits 0; after SIGINT the tsx runner between aicr-dev and up may report the shell's
      // "interrupted" status (130) instead, which is as clean.
      expect(signal === "SIGINT" ? [0, 130] : [0], log.slice(-3000)).toContain(code)
      expect(log).toContain(`${signal}: stopping the operator and the local control plane`)
      await eventually(async () => started.every((p) => !alive(p)) && naming(dir).length === 0, { timeoutMs: 30_000, what: "every process up started to exit" })
    } finally {
      if (up.exitCode === null) process.kill(-up.pid!, "SIGKILL")
      for (const pid of naming(dir)) process.kill(pid, "SIGKILL")
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
    }
  })
})
