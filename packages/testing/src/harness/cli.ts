// Local control plane from the command line (state dir: --dir, else $AICR_HARNESS_DIR, else <repo>/.aicr/harness):
//   npx tsx packages/testing/src/harness/cli.ts up [--detach] [--fresh] [--no-nodes]   start (or reuse) it
//   npx tsx packages/testing/src/harness/cli.ts down                                    stop a recorded instance
//   npx tsx packages/testing/src/harness/cli.ts status                                  exit 0 when healthy
//   npx tsx packages/testing/src/harness/cli.ts env                                     print export lines
import { join } from "node:path"
import { parseArgs } from "node:util"
import { isHealthy, readState, runningPlane, startControlPlane, stopRecorded } from "./plane"
import { pidAlive } from "./proc"
import { repoRoot } from "./tools"
import type { HarnessInfo } from "./types"

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    dir: { type: "string" },
    detach: { type: "boolean", default: false },
    fresh: { type: "boolean", default: false },
    "no-nodes": { type: "boolean", default: false },
  },
})
const dir = values.dir ?? process.env.AICR_HARNESS_DIR ?? join(repoRoot(), ".aicr", "harness")
const say = (s: string) => process.stderr.write(`${s}\n`)
const envLines = (info: HarnessInfo) => `export KUBECONFIG=${info.kubeconfig}\nexport AICR_REGISTRY=${info.registry}\n`

const summary = (info: HarnessInfo): string =>
  [
    `apiserver  ${info.server}   (kube ${info.versions.k8s})`,
    `etcd       ${info.etcd}`,
    `registry   ${info.registry}   (plain HTTP, no auth)`,
    `kubeconfig ${info.kubeconfig}   (contexts: ${Object.keys(info.users).join(", ")})`,
    `audit log  ${info.auditLog}`,
    `logs       ${join(info.dir, "logs")}`,
  ].join("\n")

const up = async (): Promise<number> => {
  const plane = await startControlPlane({ dir, attached: !values.detach, fresh: values.fresh, nodes: !values["no-nodes"] })
  say(`${plane.reused ? "reusing the running" : "started a"} control plane in ${dir} (${(plane.startMs / 1000).toFixed(1)}s)`)
  say(summary(plane.info))
  process.stdout.write(envLines(plane.info))
  if (values.detach || plane.reused) {
    if (plane.reused) say("it keeps running; stop it with `cli.ts down`")
    return 0
  }
  say("running in the foreground; Ctrl-C stops it")
  await new Promise<void>((resolve) => {
    const onSignal = () => resolve()
    process.once("SIGINT", onSignal)
    process.once("SIGTERM", onSignal)
  })
  say("stopping…")
  await plane.stop()
  return 0
}

const status = async (): Promise<number> => {
  const s = readState(dir)
  if (!s) {
    say(`no control plane recorded in ${dir}`)
    return 1
  }
  const healthy = await isHealthy(s)
  say(`${healthy ? "healthy" : "NOT healthy"}: ${dir} (owner pid ${s.ownerPid}, ${s.attached ? "attached" : "detached"})`)
  for (const p of s.procs) say(`  ${p.name.padEnd(24)} pid ${String(p.pid).padEnd(8)} ${pidAlive(p.pid, p.bin) ? "running" : "gone"}`)
  if (s.info) say(summary(s.info))
  return healthy ? 0 : 1
}

const main = async (): Promise<number> => {
  switch (positionals[0]) {
    case "up":
      return up()
    case "down": {
      const n = await stopRecorded(dir)
      say(n ? `stopped ${n} processes of ${dir}` : `nothing running in ${dir}`)
      return 0
    }
    case "status":
      return status()
    case "env": {
      const info = await runningPlane(dir)
      if (!info) {
        say(`no healthy control plane in ${dir}: run 'cli.ts up --detach'`)
        return 1
      }
      process.stdout.write(envLines(info))
      return 0
    }
    default:
      say("usage: cli.ts up [--detach] [--fresh] [--no-nodes] | down | status | env   [--dir DIR]")
      return 2
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    say(e instanceof Error ? (e.stack ?? e.message) : String(e))
    process.exit(1)
  },
)
