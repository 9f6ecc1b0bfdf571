// Idle RSS of the bundled approval-guard with 18 rollouts to watch (architecture.md §7: budget ≤ 80 MiB per idle
// controller). Not a test: it prints numbers.
// Needs a running local control plane: npx tsx packages/testing/src/harness/cli.ts up --detach --dir DIR
// Run: npx tsx apps/approval-guard/bench/rss.bench.ts DIR
import { spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { applyManifests, eventually, expectOk, kubeRequest, repoRoot, runningPlane } from "@aicr/testing/harness"
import { buildApp, summary } from "../../../hack/build-apps"
import { plannedRollout, ROLLOUTS } from "../test/support/rollouts"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: rss.bench.ts <harness dir>")
const info = await runningPlane(dir)
if (info === undefined) throw new Error(`no healthy control plane in ${dir}`)
const MiB = 1024 * 1024
const work = await mkdtemp(join(tmpdir(), "guard-rss-"))
const built = await buildApp("approval-guard", join(work, "dist"))
console.log(summary(built).join("\n"))
const probe = join(work, "rss-probe.mjs")
writeFileSync(probe, "process.on('SIGUSR2', () => { globalThis.gc(); const m = process.memoryUsage(); process.stderr.write(`RSS ${m.rss}\\n`) })\n")
await applyManifests(info, join(repoRoot(), "crds"))
const names = Array.from({ length: 18 }, (_, i) => `rss-guard-${i + 1}`)
for (const name of names)
  await kubeRequest(info, {
    method: "POST",
    path: ROLLOUTS,
    body: plannedRollout({ name, runtimeUID: "0b6f3d0e-7c1a-4d59-9a43-5c1f1f6a2e10", requestedBy: "alice" }),
  })
const child = spawn(
  process.execPath,
  [
    "--expose-gc",
    "--import",
    probe,
    built.entry,
    "--kubeconfig",
    info.kubeconfig,
    "--leader-elect=false",
    "--metrics-bind-address=0",
    "--health-probe-bind-address=0",
    "--log-level=warn",
  ],
  { stdio: ["ignore", "inherit", "pipe"] },
)
let reported = 0
child.stderr.on("data", (d: Buffer) => {
  const m = /RSS (\d+)/u.exec(d.toString())
  if (m) reported = Number(m[1])
  else process.stderr.write(d)
})
const rssAfterGc = async () => {
  reported = 0
  child.kill("SIGUSR2")
  return eventually(async () => reported || undefined, { timeoutMs: 5_000, what: "RSS report" })
}
const hwm = () => Number(/VmHWM:\s+(\d+) kB/u.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) * 1024
try {
  const t0 = Date.now()
  await eventually(
    async () => {
      const list = expectOk(await kubeRequest(info, { method: "GET", path: ROLLOUTS }), "list") as {
        items: Array<{ metadata: { name: string }; status?: { conditions?: Array<{ type: string }> } }>
      }
      return names.every((n) => list.items.find((r) => r.metadata.name === n)?.status?.conditions?.some((c) => c.type === "Approved"))
    },
    { timeoutMs: 60_000, what: "Approved on every rollout" },
  )
  console.log(`Approved on all ${names.length} rollouts ${((Date.now() - t0) / 1000).toFixed(1)} s after start`)
  await new Promise((r) => setTimeout(r, 10_000))
  console.log(`idle 10 s later: RSS after GC ${((await rssAfterGc()) / MiB).toFixed(1)} MiB (peak ${(hwm() / MiB).toFixed(1)} MiB)`)
} finally {
  child.kill("SIGTERM")
  for (const name of names) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${name}` })
  await rm(work, { recursive: true, force: true })
}
