// Child processes of the harness. Every component runs in its own process group with stdout/stderr appended to
// <dir>/logs/<name>.log, so it never depends on pipes to its parent. Three guards make sure none is left behind:
//   1. stop() / stopAll() on teardown, and a synchronous SIGTERM of every live group on the parent's exit, SIGINT,
//      SIGTERM or SIGHUP (installed once per process);
//   2. a watchdog per attached component: a tiny detached `sh` loop that SIGTERMs (then SIGKILLs) the component's
//      group as soon as the parent PID is gone, e.g. after a SIGKILL that no handler sees;
//   3. a pid file in the state dir (see plane.ts) whose leftovers the next start in that dir kills.
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

export class HarnessError extends Error {
  override readonly name = "HarnessError"
}

export interface Proc {
  readonly name: string
  readonly pid: number
  readonly bin: string
  readonly log: string
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string | null>
  /** Exit code and signal, once the process has exited (both null for a process this one did not start). */
  readonly exitStatus: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  isAlive(): boolean
  kill(signal?: NodeJS.Signals): void
  /** SIGTERM the group, wait up to timeoutMs, then SIGKILL it. */
  stop(timeoutMs?: number): Promise<void>
  tail(lines?: number): string
}

export interface SpawnOptions {
  readonly name: string
  readonly bin: string
  readonly args: readonly string[]
  readonly logDir: string
  readonly env?: Record<string, string | undefined>
  /** false: the child gets only `env`, nothing of this process's environment (default true). */
  readonly inheritEnv?: boolean
  readonly cwd?: string
  /** true (default): a watchdog kills it when this process dies. false: it outlives us (CLI `up --detach`). */
  readonly attached?: boolean
}

const live = new Set<Proc>()
let handlersInstalled = false

/** Synchronously SIGTERMs every live process group that this process started. */
export const terminateAllSync = (): void => {
  for (const p of live) p.kill("SIGTERM")
}

const installHandlers = (): void => {
  if (handlersInstalled) return
  handlersInstalled = true
  process.on("exit", terminateAllSync)
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = (): void => {
      terminateAllSync()
      // Keep the default behaviour (exit) unless someone else handles the signal too.
      if (process.listenerCount(sig) === 1) {
        process.off(sig, onSignal)
        process.kill(process.pid, sig)
      }
    }
    process.on(sig, onSignal)
  }
}

/**
 * The pids on this machine whose environment names this pod (`POD_NAME`): the container processes the process kubelet
 * runs for a pod whose containers set `POD_NAME` from the downward API, as the chart's controllers do (kwok's pods
 * have no process).
 */
export const processesOfPod = (pod: string): number[] =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/u.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`POD_NAME=${pod}`)
      } catch {
        return false
      }
    })

/** True when pid is a live, non-zombie process (and, given bin, runs that executable). */
export const pidAlive = (pid: number, bin?: string): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    if (state === "Z" || state === "X") return false
    if (bin === undefined) return true
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] === bin
  } catch {
    return false
  }
}

/**
 * True while a process of the group still runs. Zombies do not count: a detached component whose starter is gone
 * is reparented, and if nothing reaps it, it stays a zombie that signal 0 still reaches.
 */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true
    } catch {
      // gone meanwhile
    }
  }
  return false
}

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal)
  } catch {
    try {
      process.kill(pid, signal)
    } catch {
      // already gone
    }
  }
}

export const tailFile = (path: string, lines = 40): string => {
  try {
    const all = readFileSync(path, "utf8").trimEnd().split("\n")
    return all.slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}

// The watchdog: $1 = parent pid, $2 = child pid (= its process group id). Exits quietly when the child is gone.
const WATCHDOG = `P=$1; C=$2
while :; do
  read -r s 2>/dev/null < /proc/$P/stat || break
  s=\${s##*)}
  case "$s" in " Z"*|" X"*) break;; esac
  kill -0 "$C" 2>/dev/null || exit 0
  sleep 1
done
kill -TERM -"$C" 2>/dev/null || exit 0
i=0; while kill -0 -"$C" 2>/dev/null && [ $i -lt 10 ]; do sleep 0.5; i=$((i+1)); done
kill -KILL -"$C" 2>/dev/null; exit 0`

const startWatchdog = (childPid: number): void => {
  const w = spawn("/bin/sh", ["-c", WATCHDOG, "aicr-harness-watchdog", String(process.pid), String(childPid)], {
    detached: true,
    stdio: "ignore",
  })
  w.on("error", () => undefined)
  w.unref()
}

/** Handle for a process this process did not start (e.g. recorded in a state file by a detached `up`). */
export const adoptProc = (name: string, pid: number, bin: string, log: string): Proc => {
  const exited = (async () => {
    while (pidAlive(pid, bin)) await sleep(200)
    return null
  })()
  const proc: Proc = {
    name,
    pid,
    bin,
    log,
    exited,
    exitStatus: exited.then(() => ({ code: null, signal: null })),
    isAlive: () => pidAlive(pid, bin),
    kill: (signal = "SIGTERM") => {
      if (pidAlive(pid, bin)) signalGroup(pid, signal)
    },
    stop: (timeoutMs) => stopProc(proc, timeoutMs),
    tail: (lines) => tailFile(log, lines),
  }
  return proc
}

const stopProc = async (p: Proc, timeoutMs = 15_000): Promise<void> => {
  p.kill("SIGTERM")
  const timer = new AbortController()
  const done = await Promise.race([p.exited.then(() => true), sleep(timeoutMs, false, { signal: timer.signal }).catch(() => false)])
  timer.abort()
  if (!done) p.kill("SIGKILL")
  await p.exited
  // Any stragglers in the group (none of our components fork, but be thorough).
  for (let i = 0; i < 20 && groupAlive(p.pid); i++) {
    signalGroup(p.pid, i < 10 ? "SIGTERM" : "SIGKILL")
    await sleep(100)
  }
  live.delete(p)
}

export const spawnProc = async (o: SpawnOptions): Promise<Proc> => {
  installHandlers()
  mkdirSync(o.logDir, { recursive: true })
  const log = join(o.logDir, `${o.name}.log`)
  const fd = openSync(log, "a")
  let child: ChildProcess
  try {
    child = spawn(o.bin, [...o.args], {
      detached: true,
      stdio: ["ignore", fd, fd],
      cwd: o.cwd,
      env: Object.fromEntries(Object.entries({ ...(o.inheritEnv === false ? {} : process.env), ...o.env }).filter(([, v]) => v !== undefined)),
    })
  } finally {
    closeSync(fd)
  }
  const pid = await new Promise<number>((resolve, reject) => {
    child.once("spawn", () => resolve(child.pid!))
    child.once("error", (e) => reject(new HarnessError(`harness: cannot start ${o.name} (${o.bin}): ${e.message}`)))
  })
  let exitInfo: number | string | null | undefined
  const exitStatus = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      exitInfo = code ?? signal
      resolve({ code, signal })
    })
  })
  const exited = exitStatus.then(() => exitInfo ?? null)
  const attached = o.attached ?? true
  if (attached) startWatchdog(pid)
  else child.unref()
  const proc: Proc = {
    name: o.name,
    pid,
    bin: o.bin,
    log,
    exited,
    exitStatus,
    isAlive: () => exitInfo === undefined,
    kill: (signal = "SIGTERM") => {
      if (exitInfo === undefined) signalGroup(pid, signal)
    },
    stop: (timeoutMs) => stopProc(proc, timeoutMs),
    tail: (lines) => tailFile(log, lines),
  }
  if (attached) live.add(proc)
  void exited.then(() => live.delete(proc))
  return proc
}

/** Error carrying the last lines of a component's log. */
export const procError = (p: Proc, what: string): HarnessError => new HarnessError(`harness: ${p.name} ${what}; last lines of ${p.log}:\n${p.tail(40)}`)

/**
 * Polls check() until it returns true. Fails with the component's log tail (and stops the component) when the
 * process exits first or the timeout passes.
 */
export const waitReady = async (p: Proc, check: () => Promise<boolean>, timeoutMs = 60_000, intervalMs = 100): Promise<void> => {
  try {
    await poll(p, check, timeoutMs, intervalMs)
  } catch (e) {
    // A component that never became ready is nobody's to stop later.
    await p.stop(5_000)
    throw e
  }
}

const poll = async (p: Proc, check: () => Promise<boolean>, timeoutMs: number, intervalMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  let lastError = ""
  for (;;) {
    if (!p.isAlive()) {
      const code = await p.exited
      throw procError(p, `exited (${String(code)}) before it was ready`)
    }
    try {
      if (await check()) return
    } catch (e) {
      lastError = e instanceof Error ? `${e.message}${e.cause instanceof Error ? `: ${e.cause.message}` : ""}` : String(e)
    }
    if (Date.now() > deadline) throw procError(p, `not ready after ${timeoutMs} ms${lastError ? ` (last error: ${lastError})` : ""}`)
    await sleep(intervalMs)
  }
}

const handedOut = new Set<number>()

/** A currently free TCP port on 127.0.0.1 (never the same one twice in this process). */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer()
      srv.once("error", reject)
      srv.listen(0, "127.0.0.1", () => {
        const a = srv.address()
        srv.close(() => resolve(typeof a === "object" && a ? a.port : 0))
      })
    })
    if (port && !handedOut.has(port)) {
      handedOut.add(port)
      return port
    }
  }
}

export const ensureDir = (dir: string): string => {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true })
  return dir
}

/**
 * Runs a start function that picks its own free ports, again (up to 3 times) when a port was taken by someone else
 * between freePort() and the component's bind. With an explicit port there is nothing to retry.
 */
export const retryPortClash = async <A>(explicitPort: boolean, start: () => Promise<A>): Promise<A> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start()
    } catch (e) {
      if (explicitPort || attempt >= 3 || !(e instanceof Error) || !/address already in use/i.test(e.message)) throw e
    }
  }
}
