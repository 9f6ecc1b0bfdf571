// A controller's memory as a user pays for it, for every bench that measures one: the shipped bundle started as the
// image starts it (`node /app/main.mjs <flags>`: no node flags, NODE_ENV=production, metrics and health servers on),
// VmRSS sampled over idle minutes with no forced GC, and then, apart, what a full GC would leave (read by a small
// `--import` probe on SIGUSR2, which turns `gc` on only then: the idle samples are taken without it).
// Not a test and not shipped: bench code only.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

const MiB = 1024 * 1024
export const mib = (bytes: number): number => +(bytes / MiB).toFixed(1)

/** The image's environment for a controller (packages/image: `NODE_ENV=production`, no NODE_OPTIONS). */
export const SHIPPED_ENV: Readonly<Record<string, string>> = { NODE_ENV: "production" }

/** The flags every controller ships with that a bench keeps (metrics and health servers on, on free ports). */
export const SHIPPED_SERVER_FLAGS: ReadonlyArray<string> = ["--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0"]

/**
 * Node flags of a bench run: `BENCH_NODE_FLAGS` if set (e.g. `--enable-source-maps` as `up` runs the controllers, or a
 * bounded heap), else none, as the image runs them. A `NAME=value` among them is an environment variable of the
 * process (e.g. `MALLOC_ARENA_MAX=2`), see `startShipped`.
 */
export const benchNodeFlags = (): string[] => (process.env["BENCH_NODE_FLAGS"] ?? "").split(" ").filter(Boolean)

/** A controller's shipped environment (the chart's, e.g. `memoryEnvOf` in hack/local-operator.ts) as a flag set, unless BENCH_NODE_FLAGS replaces it. */
export const shippedOrBenchFlags = (shipped: Readonly<Record<string, string>>): string[] =>
  process.env["BENCH_NODE_FLAGS"] === undefined ? Object.entries(shipped).map(([k, v]) => `${k}=${v}`) : benchNodeFlags()

/** A flag set as BENCH_NODE_FLAGS spells it: node flags, and `NAME=value` environment variables among them. */
export const splitNodeFlags = (given: ReadonlyArray<string>): { readonly nodeFlags: string[]; readonly env: Record<string, string> } => {
  const isEnv = (f: string) => /^[A-Z_][A-Z0-9_]*=/u.test(f)
  return {
    nodeFlags: given.filter((f) => !isEnv(f)),
    env: Object.fromEntries(given.filter(isEnv).map((f) => [f.slice(0, f.indexOf("=")), f.slice(f.indexOf("=") + 1)])),
  }
}

/**
 * Writes the probe into `dir`: on SIGUSR2 it writes what V8 holds (process.memoryUsage(), heap spaces), then makes a
 * full GC (twice, `gc` exposed at that moment only), waits a second and writes the same again with VmRSS, to `out`.
 */
export const writeProbe = (dir: string): { readonly file: string; readonly out: string } => {
  const file = join(dir, "memory-probe.mjs")
  const out = join(dir, `memory-probe-${process.pid}-${Math.random().toString(36).slice(2, 8)}.json`)
  writeFileSync(
    file,
    [
      'import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"',
      'import { runInNewContext } from "node:vm"',
      'import { readFileSync, writeFileSync } from "node:fs"',
      "const out = process.env.AICR_MEMORY_PROBE_OUT",
      "const rss = () => Number(/VmRSS:\\s+(\\d+) kB/u.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024",
      "const read = () => ({ rss: rss(), memory: process.memoryUsage(), spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }])) })",
      "if (out) process.on('SIGUSR2', () => {",
      "  const before = read()",
      "  setFlagsFromString('--expose-gc')",
      "  const gc = runInNewContext('gc')",
      "  gc(); gc()",
      "  setTimeout(() => writeFileSync(out, JSON.stringify({ before, after: read() })), 1000).unref()",
      "})",
    ].join("\n"),
  )
  return { file, out }
}

export interface Shipped {
  readonly child: ChildProcess
  /** The probe's output file (AICR_MEMORY_PROBE_OUT). */
  readonly probeOut: string
  readonly nodeFlags: ReadonlyArray<string>
}

/**
 * Starts a bundle as the image does (no node flags unless `nodeFlags`, `NODE_ENV=production`), with the probe, its
 * controller flags `args` and `SHIPPED_SERVER_FLAGS` unless `args` names its own bind addresses. A `NAME=value` in
 * `nodeFlags` is set in the environment instead.
 */
export const startShipped = (
  entry: string,
  args: ReadonlyArray<string>,
  o: { readonly workDir: string; readonly nodeFlags?: ReadonlyArray<string>; readonly stdio?: StdioOptions; readonly env?: Record<string, string> },
): Shipped => {
  const probe = writeProbe(o.workDir)
  const given = o.nodeFlags ?? benchNodeFlags()
  const { nodeFlags, env: flagEnv } = splitNodeFlags(given)
  const servers = args.some((a) => a.startsWith("--metrics-bind-address")) ? [] : SHIPPED_SERVER_FLAGS
  const child = spawn(process.execPath, [...nodeFlags, "--import", probe.file, entry, ...args, ...servers], {
    stdio: o.stdio ?? ["ignore", "ignore", "inherit"],
    env: { ...process.env, NODE_OPTIONS: "", ...SHIPPED_ENV, ...o.env, ...flagEnv, AICR_MEMORY_PROBE_OUT: probe.out },
  })
  return { child, probeOut: probe.out, nodeFlags: given }
}

/** A field of /proc/<pid>/status, in bytes. */
export const procStatus = (pid: number, field: "VmRSS" | "VmHWM"): number =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`, "u").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN) * 1024

export interface V8Figures {
  readonly rssMiB: number
  readonly heapUsedMiB: number
  readonly heapTotalMiB: number
  readonly externalMiB: number
  readonly arrayBuffersMiB: number
  /** used/size per V8 heap space. */
  readonly spacesMiB: Readonly<Record<string, string>>
}

export interface IdleFigures {
  readonly minutes: number
  readonly samples: number
  /** VmRSS with no forced GC over the idle minutes. */
  readonly rssMiB: { readonly first: number; readonly median: number; readonly min: number; readonly max: number; readonly last: number }
  /** VmHWM at the end: the process's peak RSS over its whole life. */
  readonly peakMiB: number
  /** At the end of the idle minutes, before and after a full GC (the probe's answer), if it answered. */
  readonly v8Before?: V8Figures
  readonly afterGc?: V8Figures
  /** Where the RSS is at the end of the idle minutes, before the GC (/proc/<pid>/smaps). */
  readonly where?: RssBreakdown
}

/** RSS by kind of mapping (/proc/<pid>/smaps), in MiB. */
export interface RssBreakdown {
  /** The node executable's pages (code and data read from the file; shared with every node process on the host). */
  readonly nodeBinary: number
  /** Other file-backed mappings (shared libraries, ICU data). */
  readonly otherFiles: number
  /** glibc's main heap (`[heap]`, brk). */
  readonly brkHeap: number
  /** Anonymous mappings: V8's heap and code spaces, malloc's other arenas and large blocks, thread stacks. */
  readonly anonymous: number
  /** Of all the RSS, the pages only this process uses (Private_Clean + Private_Dirty). */
  readonly private: number
  /** The largest anonymous mappings, in MiB (sizes of the regions V8 and malloc keep). */
  readonly largestAnonymous: ReadonlyArray<number>
}

/** The RSS of `pid` by kind of mapping, from /proc/<pid>/smaps. */
export const rssBreakdown = (pid: number): RssBreakdown => {
  const kib = { nodeBinary: 0, otherFiles: 0, brkHeap: 0, anonymous: 0, private: 0 }
  const anon: number[] = []
  let name = ""
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/u.exec(line)
    if (header !== null) {
      name = header[1] ?? ""
      continue
    }
    const field = /^(Rss|Private_Clean|Private_Dirty):\s+(\d+) kB/u.exec(line)
    if (field === null) continue
    const n = Number(field[2])
    if (field[1] !== "Rss") {
      kib.private += n
      continue
    }
    if (name === "[heap]") kib.brkHeap += n
    else if (name === "" || name.startsWith("[")) {
      kib.anonymous += n
      if (name === "") anon.push(n)
    } else if (/\/node$/u.test(name)) kib.nodeBinary += n
    else kib.otherFiles += n
  }
  const m = (k: number) => +(k / 1024).toFixed(1)
  return {
    nodeBinary: m(kib.nodeBinary),
    otherFiles: m(kib.otherFiles),
    brkHeap: m(kib.brkHeap),
    anonymous: m(kib.anonymous),
    private: m(kib.private),
    largestAnonymous: anon
      .sort((a, b) => b - a)
      .slice(0, 8)
      .map(m),
  }
}

type ProbeRead = { rss: number; memory: Record<string, number>; spaces: Record<string, { size: number; used: number }> }
const figures = (r: ProbeRead): V8Figures => ({
  rssMiB: mib(r.rss),
  heapUsedMiB: mib(r.memory["heapUsed"]!),
  heapTotalMiB: mib(r.memory["heapTotal"]!),
  externalMiB: mib(r.memory["external"]!),
  arrayBuffersMiB: mib(r.memory["arrayBuffers"]!),
  spacesMiB: Object.fromEntries(Object.entries(r.spaces).map(([k, v]) => [k, `${mib(v.used)}/${mib(v.size)}`])),
})

/**
 * Samples VmRSS of `shipped` every `intervalMs` for `minutes` (no GC), then asks the probe for V8's figures before and
 * after a full GC. The process keeps running (the GC changed it: sample nothing after this).
 */
export const sampleIdle = async (
  shipped: Pick<Shipped, "child" | "probeOut">,
  o: { readonly minutes: number; readonly intervalMs?: number },
): Promise<IdleFigures> => {
  const pid = shipped.child.pid!
  const interval = o.intervalMs ?? 5000
  const samples: number[] = []
  const start = performance.now()
  while (performance.now() - start < o.minutes * 60_000) {
    samples.push(procStatus(pid, "VmRSS"))
    await sleep(interval)
  }
  samples.push(procStatus(pid, "VmRSS"))
  const peak = procStatus(pid, "VmHWM")
  const where = rssBreakdown(pid)
  rmSync(shipped.probeOut, { force: true })
  shipped.child.kill("SIGUSR2")
  let probed: { before: ProbeRead; after: ProbeRead } | undefined
  for (let i = 0; i < 100 && probed === undefined; i++) {
    await sleep(100)
    if (existsSync(shipped.probeOut)) {
      try {
        probed = JSON.parse(readFileSync(shipped.probeOut, "utf8")) as { before: ProbeRead; after: ProbeRead }
      } catch {
        // written in part: read again
      }
    }
  }
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    minutes: +((performance.now() - start) / 60_000).toFixed(1),
    samples: samples.length,
    rssMiB: {
      first: mib(samples[0]!),
      median: mib(sorted[Math.floor(sorted.length / 2)]!),
      min: mib(sorted[0]!),
      max: mib(sorted.at(-1)!),
      last: mib(samples.at(-1)!),
    },
    peakMiB: mib(peak),
    where,
    ...(probed !== undefined ? { v8Before: figures(probed.before), afterGc: figures(probed.after) } : {}),
  }
}
