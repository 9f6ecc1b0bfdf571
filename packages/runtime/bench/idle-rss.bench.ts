// Every controller's idle RSS as users run it: the shipped bundle (hack/build-apps.ts), started as the image starts it
// (no node flags, NODE_ENV=production, metrics and health servers on; `./idle.ts`) or with the given flag sets, all
// seven at once on one control plane, informers synced and nothing to do (CRDs installed, no ClusterRuntime). VmRSS
// sampled every 5 s over the idle minutes after a warm-up, no forced GC; then, apart, what V8 holds and what a full GC
// leaves (the probe of `./idle.ts`). Every flag set runs at the same time as the others. Not a test: it prints one JSON
// line per controller and flag set.
// Run: npx tsx packages/runtime/bench/idle-rss.bench.ts [--minutes 5] [--warmup 10] [--flags "<node flags>"]… [app…]
//   (no --flags: the image's default, no flags; `--flags ""` is that too; `NAME=value` in a flag set is an
//   environment variable, e.g. `--flags "MALLOC_ARENA_MAX=2"`). A fresh local control plane, no nodes.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { applyManifests, repoRoot, startControlPlane } from "@aicr/testing/harness"
import { buildApp } from "../../../hack/build-apps"
import { benchControllerFlags } from "../../../hack/local-operator"
import { sampleIdle, startShipped } from "./idle"

const argv = process.argv.slice(2)
const opt = (name: string, fallback: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback)
const minutes = opt("--minutes", 5)
const warmup = opt("--warmup", 10)
const flagSets: string[][] = []
const apps: string[] = []
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--flags") flagSets.push(argv[++i]!.split(" ").filter(Boolean))
  else if (argv[i] === "--minutes" || argv[i] === "--warmup") i++
  else apps.push(argv[i]!)
}
if (flagSets.length === 0) flagSets.push([])
const ALL = ["approval-guard", "ecr-credential-refresher", "planner", "registry-mirror", "resolver", "step-executor", "validation-gate"]
const NS = "aicr-system"

const work = mkdtempSync(join(tmpdir(), "idle-rss-"))
const plane = await startControlPlane({ nodes: false, fresh: true })
try {
  const { info } = plane
  await applyManifests(info, join(repoRoot(), "crds"))
  await applyManifests(
    info,
    [NS, "argocd", "aicr-validation", "gpu-operator"].map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
  )
  const names = apps.length > 0 ? apps : ALL
  const built = await Promise.all(names.map((app) => buildApp(app, join(work, "dist", app))))
  // Every controller with every flag set at once: the same minutes, side by side.
  const running = flagSets.flatMap((set) =>
    names.map((app, i) => {
      return {
        app,
        nodeFlags: set,
        atStartKiB: Math.round(built[i]!.atStartBytes / 1024),
        shipped: startShipped(
          built[i]!.entry,
          ["--kubeconfig", info.kubeconfig, "--leader-elect=false", "--log-level=warn", ...benchControllerFlags(app, info.registry)],
          { workDir: work, nodeFlags: set },
        ),
      }
    }),
  )
  try {
    await sleep(warmup * 1000)
    const idle = await Promise.all(running.map((r) => sampleIdle(r.shipped, { minutes })))
    running.forEach((r, i) => console.log(JSON.stringify({ app: r.app, nodeFlags: r.nodeFlags, atStartKiB: r.atStartKiB, idle: idle[i] })))
  } finally {
    for (const r of running) r.shipped.child.kill("SIGKILL")
  }
} finally {
  await plane.stop()
}
process.exit(0)
