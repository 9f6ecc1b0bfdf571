// Every controller's idle RSS as users run it: the shipped bundle (hack/build-apps.ts), started as the image starts it
// (no node flags) or with the given flag sets, no forced GC, informers synced and nothing to do (CRDs installed, no
// ClusterRuntime), VmRSS sampled every second after a warm-up. Also what V8 holds at the end (process.memoryUsage()
// and the heap spaces, read by a small `--import` probe on SIGUSR2, without any GC). Not a test: it prints one JSON
// line per controller and flag set.
// Run: npx tsx packages/runtime/bench/idle-rss.bench.ts [--seconds 20] [--warmup 10] [--flags "<node flags>"]… [app…]
//   (no --flags: the image's default, no flags; `--flags ""` is that too). A fresh local control plane, no nodes.
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { applyManifests, repoRoot, startControlPlane } from "@aicr/testing/harness"
import { buildApp } from "../../../hack/build-apps"
import { benchControllerFlags } from "../../../hack/local-operator"

const argv = process.argv.slice(2)
const opt = (name: string, fallback: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback)
const seconds = opt("--seconds", 20)
const warmup = opt("--warmup", 10)
const flagSets: string[][] = []
const apps: string[] = []
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--flags") flagSets.push(argv[++i]!.split(" ").filter(Boolean))
  else if (argv[i] === "--seconds" || argv[i] === "--warmup") i++
  else apps.push(argv[i]!)
}
if (flagSets.length === 0) flagSets.push([])
const ALL = ["approval-guard", "ecr-credential-refresher", "planner", "registry-mirror", "resolver", "step-executor", "validation-gate"]
const NS = "aicr-system"

const work = mkdtempSync(join(tmpdir(), "idle-rss-"))
const probe = join(work, "probe.mjs")
writeFileSync(
  probe,
  [
    'import { getHeapSpaceStatistics } from "node:v8"',
    "process.on('SIGUSR2', () => {",
    "  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]))",
    "  process.stderr.write(`PROBE ${JSON.stringify({ memory: process.memoryUsage(), spaces })}\\n`)",
    "})",
  ].join("\n"),
)
const MiB = 1024 * 1024
const mib = (n: number) => +(n / MiB).toFixed(1)

const plane = await startControlPlane({ nodes: false, fresh: true })
try {
  const { info } = plane
  await applyManifests(info, join(repoRoot(), "crds"))
  await applyManifests(
    info,
    [NS, "argocd", "aicr-validation", "gpu-operator"].map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
  )
  for (const app of apps.length > 0 ? apps : ALL) {
    const built = await buildApp(app, join(work, "dist", app))
    for (const nodeFlags of flagSets) {
      let probed = ""
      const child = spawn(
        process.execPath,
        [
          ...nodeFlags,
          "--import",
          probe,
          built.entry,
          "--kubeconfig",
          info.kubeconfig,
          "--leader-elect=false",
          "--metrics-bind-address=0",
          "--health-probe-bind-address=0",
          "--log-level=warn",
          ...benchControllerFlags(app, info.registry),
        ],
        {
          stdio: ["ignore", "ignore", "pipe"],
        },
      )
      child.stderr.on("data", (d: Buffer) => {
        const m = /PROBE (.*)/u.exec(d.toString())
        if (m) probed = m[1]!
      })
      const status = (field: string) =>
        Number(new RegExp(`${field}:\\s+(\\d+) kB`, "u").exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? Number.NaN) * 1024
      await sleep(warmup * 1000)
      const samples: number[] = []
      for (let s = 0; s < seconds; s++) {
        samples.push(status("VmRSS"))
        await sleep(1000)
      }
      child.kill("SIGUSR2")
      await sleep(500)
      const peak = status("VmHWM")
      child.kill("SIGKILL")
      const sorted = [...samples].sort((a, b) => a - b)
      const v8 = probed === "" ? undefined : (JSON.parse(probed) as { memory: Record<string, number>; spaces: Record<string, { size: number; used: number }> })
      console.log(
        JSON.stringify({
          app,
          nodeFlags,
          atStartKiB: Math.round(built.atStartBytes / 1024),
          rssMiB: { median: mib(sorted[Math.floor(sorted.length / 2)]!), min: mib(sorted[0]!), max: mib(sorted.at(-1)!) },
          peakMiB: mib(peak),
          ...(v8 !== undefined
            ? {
                memoryMiB: Object.fromEntries(Object.entries(v8.memory).map(([k, v]) => [k, mib(v)])),
                heapSpacesMiB: Object.fromEntries(Object.entries(v8.spaces).map(([k, v]) => [k, `${mib(v.used)}/${mib(v.size)}`])),
              }
            : { probe: "no answer" }),
        }),
      )
    }
  }
} finally {
  await plane.stop()
}
process.exit(0)
