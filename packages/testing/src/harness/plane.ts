// The whole local control plane: etcd + registry, then kube-apiserver, then kube-controller-manager, kube-scheduler
// and kwok, then the default fake nodes. <dir>/state.json records every process as soon as it is spawned, so a later
// start in the same dir either reuses a healthy plane or kills the leftovers of a dead one before starting afresh.
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { type ApiServer, type Etcd, startApiServer, startEtcd } from "./apiserver"
import { writeKubeconfig } from "./auth"
import { startControllerManager, startKwok, startProcessKubelet, startScheduler, startWebhookStandInProc } from "./components"
import { eventually, kubeRequest } from "./kube"
import { addNodes, DEFAULT_NODES } from "./nodes"
import { adoptProc, ensureDir, freePort, HarnessError, pidAlive, type Proc, procError } from "./proc"
import { pushAicrImages } from "./kubelet/aicr-images"
import { type Registry, startRegistry } from "./registry"
import { readVersions, resolveTools, type ToolName } from "./tools"
import type { HarnessInfo } from "./types"

export interface ControlPlaneOptions {
  /** State dir (default: a new temp dir). */
  readonly dir?: string
  /** Run the kwok controller (default true). */
  readonly kwok?: boolean
  /** Run the process kubelet, which runs AICR's images for real on the kwok nodes (default: with kwok). */
  readonly kubelet?: boolean
  /**
   * Build AICR's images from the local AICR builds and push them to the registry, so the kubelet runs AICR's Jobs
   * from their image. Default false (the local binaries on the build machine's root) until the resolver's int tests
   * pass with it; true is what a tools cache under /tmp needs.
   */
  readonly aicrImages?: boolean
  /** Create the default fake nodes (default true; needs kwok). */
  readonly nodes?: boolean
  /** Never reuse a running plane recorded in dir: kill it and start afresh (default false). */
  readonly fresh?: boolean
  /** false: the processes outlive this one (CLI `up --detach`); stop them with stopRecorded(dir). Default true. */
  readonly attached?: boolean
}

export interface ControlPlane {
  readonly info: HarnessInfo
  /** True when a healthy plane recorded in the dir was reused instead of started. */
  readonly reused: boolean
  readonly startMs: number
  /** Milliseconds since the start at which each phase was done (etcd+registry, apiserver, components, nodes, ready). */
  readonly timings: Record<string, number>
  stop(): Promise<void>
}

export interface ProcRecord {
  readonly name: string
  readonly pid: number
  readonly bin: string
  readonly log: string
}

interface StateFile {
  readonly ownerPid: number
  readonly attached: boolean
  readonly procs: ProcRecord[]
  info?: HarnessInfo
}

const TOOLS: readonly ToolName[] = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubectl",
  "kwok",
  "helm",
  "oras",
  "docker-registry",
  "htpasswd",
]
// Everything a plane writes into its dir; a fresh start removes exactly these (never anything else).
const OWNED = [
  "state.json",
  "etcd",
  "pki",
  "logs",
  "registry",
  "kubeconfigs",
  "kwok-home",
  "kubelet",
  "auth.json",
  "tokens.csv",
  "audit-policy.yaml",
  "audit.log",
  "kubeconfig",
  "argocd",
  "egress",
  "egress.sock",
  "egress-selector.yaml",
]

const registryVersion = (bin: string): string => {
  const out = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim()
  return `distribution ${out.split(/\s+/).at(-1)}`
}

const stateFile = (dir: string) => join(dir, "state.json")

export const readState = (dir: string): StateFile | undefined => {
  try {
    return JSON.parse(readFileSync(stateFile(dir), "utf8")) as StateFile
  } catch {
    return undefined
  }
}

const writeState = (dir: string, s: StateFile) => writeFileSync(stateFile(dir), JSON.stringify(s, null, 2))

/**
 * Adds processes started after the plane (Argo CD) to dir/state.json, so `down`, the plane's own stop() and the next
 * start in dir stop them too.
 */
export const recordExtraProcs = (dir: string, procs: readonly Proc[]): void => {
  const s = readState(dir)
  if (!s) throw new HarnessError(`harness: no running plane recorded in ${dir}`)
  s.procs.push(...procs.map(({ name, pid, bin, log }) => ({ name, pid, bin, log })))
  writeState(dir, s)
}

/** Removes the given pids from dir/state.json (after their processes were stopped). */
export const forgetProcs = (dir: string, pids: readonly number[]): void => {
  const s = readState(dir)
  if (!s) return
  writeState(dir, { ...s, procs: s.procs.filter((p) => !pids.includes(p.pid)) })
}

/** The processes recorded in dir/state.json whose name passes keep (live or not). */
export const recordedProcs = (dir: string, keep: (name: string) => boolean): readonly ProcRecord[] => (readState(dir)?.procs ?? []).filter((p) => keep(p.name))

/** Stops the recorded processes that still run their recorded binary, last started first; returns how many ran. */
export const stopProcRecords = async (records: readonly ProcRecord[]): Promise<number> => {
  const alive = records.filter((p) => pidAlive(p.pid, p.bin)).reverse()
  for (const p of alive) await adoptProc(p.name, p.pid, p.bin, p.log).stop()
  return alive.length
}

/** Stops every process recorded in dir/state.json (checking each pid still runs the recorded binary). */
export const stopRecorded = async (dir: string): Promise<number> => {
  const s = readState(dir)
  if (!s) return 0
  const stopped = await stopProcRecords(s.procs)
  rmSync(stateFile(dir), { force: true })
  return stopped
}

const ok = async (fn: () => Promise<boolean>): Promise<boolean> => {
  try {
    return await fn()
  } catch {
    return false
  }
}

/** True when every recorded process runs and etcd, the apiserver and the registry answer. */
export const isHealthy = async (s: StateFile | undefined): Promise<boolean> => {
  const info = s?.info
  if (!s || !info || !s.procs.every((p) => pidAlive(p.pid, p.bin))) return false
  return (
    (await ok(async () => (await fetch(`${info.etcd}/health`, { signal: AbortSignal.timeout(2_000) })).ok)) &&
    (await ok(async () => (await kubeRequest(info, { method: "GET", path: "/readyz", timeoutMs: 3_000 })).status === 200)) &&
    (await ok(async () => (await fetch(`http://${info.registry}/v2/`, { signal: AbortSignal.timeout(2_000) })).status === 200))
  )
}

const adopt = (s: StateFile, startMs: number): ControlPlane => {
  const dir = s.info!.dir
  return { info: s.info!, reused: true, startMs, timings: {}, stop: async () => void (await stopRecorded(dir)) }
}

/** Like Promise.all, but waits for every start to settle first, so nothing finishes starting after a cleanup. */
const allStarted = async (starts: readonly Promise<unknown>[]): Promise<void> => {
  const failed = (await Promise.allSettled(starts)).find((r): r is PromiseRejectedResult => r.status === "rejected")
  if (failed) throw failed.reason
}

/** Serialises starts in one dir across processes: <dir>/.lock holds the pid of the process starting there. */
const withDirLock = async <A>(dir: string, fn: () => Promise<A>): Promise<A> => {
  const lock = join(dir, ".lock")
  const deadline = Date.now() + 300_000
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: "wx" })
      break
    } catch {
      const holder = Number(readFileSync(lock, "utf8").trim() || "0")
      if (!holder || !pidAlive(holder)) rmSync(lock, { force: true })
      else if (Date.now() > deadline) throw new HarnessError(`harness: ${dir} stays locked by pid ${holder}`)
      else await sleep(200)
    }
  }
  try {
    return await fn()
  } finally {
    rmSync(lock, { force: true })
  }
}

/** Runs fn; a failure carries the tail of the named component's log. */
const withTail = async <A>(procs: ReadonlyMap<string, Proc>, name: string, fn: () => Promise<A>): Promise<A> => {
  try {
    return await fn()
  } catch (e) {
    const p = procs.get(name)
    if (!p) throw e
    throw procError(p, `check failed (${e instanceof Error ? e.message : String(e)})`)
  }
}

export const startControlPlane = async (opts: ControlPlaneOptions = {}): Promise<ControlPlane> => {
  const dir = ensureDir(opts.dir ?? mkdtempSync(join(tmpdir(), "aicr-harness-")))
  return withDirLock(dir, () => startLocked(dir, opts))
}

const startLocked = async (dir: string, opts: ControlPlaneOptions): Promise<ControlPlane> => {
  const t0 = Date.now()
  const timings: Record<string, number> = {}
  const mark = (phase: string) => void (timings[phase] = Date.now() - t0)
  const previous = readState(dir)
  if (previous && !opts.fresh && (await isHealthy(previous))) return adopt(previous, Date.now() - t0)
  await stopRecorded(dir)
  for (const f of OWNED) rmSync(join(dir, f), { recursive: true, force: true })

  const versions = readVersions()
  const withKwok = opts.kwok ?? true
  const bin = resolveTools(
    TOOLS.filter((t) => withKwok || t !== "kwok"),
    versions,
  )
  const attached = opts.attached ?? true
  const state: StateFile = { ownerPid: process.pid, attached, procs: [] }
  const started: { stop(): Promise<void> }[] = []
  const record = <A extends { proc: Proc }>(a: A): A => {
    state.procs.push({ name: a.proc.name, pid: a.proc.pid, bin: a.proc.bin, log: a.proc.log })
    writeState(dir, state)
    started.push({ stop: () => a.proc.stop() })
    return a
  }
  const stopAll = async () => {
    // Whatever was recorded after the plane (Argo CD) goes first.
    const own = new Set(state.procs.map((p) => p.pid))
    await stopProcRecords((readState(dir)?.procs ?? []).filter((p) => !own.has(p.pid))).catch(() => undefined)
    for (const s of [...started].reverse()) await s.stop().catch(() => undefined)
    rmSync(stateFile(dir), { force: true })
  }
  try {
    writeState(dir, state)
    const starting = [startEtcd({ dir, attached }).then(record<Etcd>), startRegistry({ dir, attached }).then(record<Registry>)] as const
    await allStarted(starting)
    const [etcd, registry] = [await starting[0], await starting[1]]
    mark("etcd+registry")
    const egressSocket = join(dir, "egress.sock")
    const withKubelet = withKwok && (opts.kubelet ?? true)
    const aicrImages =
      withKubelet && (opts.aicrImages ?? false)
        ? pushAicrImages(registry.address, [versions.aicr, versions.aicrPrevious], join(dir, "kubelet", "aicr-images"))
        : undefined
    aicrImages?.catch(() => undefined)
    const api = record<ApiServer>(await startApiServer({ etcd: etcd.url, dir, attached, egressSocket }))
    mark("kube-apiserver")
    const aicrMirror = aicrImages ? (await aicrImages).mirror : undefined
    mark("aicr-images")
    const kubeconfig = writeKubeconfig(
      join(dir, "kubeconfig"),
      api.url,
      api.caFile,
      Object.entries(api.users).map(([name, u]) => ({ name, token: u.token })),
    )
    const ctx = (name: string) => ({ dir, server: api.url, caFile: api.caFile, saKey: api.auth.saKey, token: api.auth.components[name]!.token, attached })
    const procs = new Map<string, Proc>()
    const wrap = (proc: Proc) => (procs.set(proc.name, proc), record({ proc }))
    const kubeletPort = withKubelet ? await freePort() : undefined
    await allStarted([
      startWebhookStandInProc({ ...ctx("webhook-stand-in"), socket: egressSocket }).then(wrap),
      startControllerManager(ctx("kube-controller-manager")).then(wrap),
      startScheduler(ctx("kube-scheduler")).then(wrap),
      ...(withKwok ? [startKwok({ ...ctx("kwok"), kubeletPort }).then(wrap)] : []),
      ...(withKubelet
        ? [startProcessKubelet({ ...ctx("kubelet"), apiPort: api.port, kubeletPort: kubeletPort!, ...(aicrMirror ? { aicrMirror } : {}) }).then(wrap)]
        : []),
    ])
    const info: HarnessInfo = {
      dir,
      kubeconfig,
      server: api.url,
      caFile: api.caFile,
      users: api.users,
      etcd: etcd.url,
      registry: registry.address,
      auditLog: api.auditLog,
      bin,
      pids: Object.fromEntries(state.procs.map((p) => [p.name, p.pid])),
      versions: { ...versions, registry: registryVersion(bin["docker-registry"]!) },
      logs: Object.fromEntries(state.procs.map((p) => [p.name, p.log])),
      startedAt: new Date().toISOString(),
    }
    mark("controllers")
    if (withKwok && (opts.nodes ?? true)) await withTail(procs, "kwok", () => addNodes(info, DEFAULT_NODES))
    mark("nodes")
    // The serviceaccount controller has run once the "default" ServiceAccount exists; pods can be created then.
    await withTail(procs, "kube-controller-manager", () =>
      eventually(async () => (await kubeRequest(info, { method: "GET", path: "/api/v1/namespaces/default/serviceaccounts/default" })).status === 200, {
        timeoutMs: 60_000,
        what: "ServiceAccount default/default",
      }),
    )
    state.info = info
    writeState(dir, state)
    mark("ready")
    return { info, reused: false, startMs: Date.now() - t0, timings, stop: stopAll }
  } catch (e) {
    await stopAll()
    if (e instanceof HarnessError) throw e
    throw new HarnessError(`harness: control plane in ${dir} failed to start: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
  }
}

/** The HarnessInfo of a healthy plane recorded in dir, if any. */
export const runningPlane = async (dir: string): Promise<HarnessInfo | undefined> => {
  const s = readState(dir)
  return (await isHealthy(s)) ? s!.info : undefined
}

export const hasState = (dir: string): boolean => existsSync(stateFile(dir))
