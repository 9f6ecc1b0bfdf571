// API requests per idle minute of every controller, from the API server's audit log: each shipped bundle
// (hack/build-apps.ts) started as the image starts it, all at once, with leader election on, under one identity whose
// reads are audited (AUDIT_READS_GROUP) and told apart by user agent (`aicr-<controller>`, its field manager). Idle
// means informers synced, Leases held and nothing to do (CRDs installed, no ClusterRuntime). Over the window: reads
// (get/list), writes, watches started (a watch the server ends after its timeout is started again: that is watching,
// not polling) and Lease requests (renewals), per minute. Target (issue 16): 0 reads and 0 writes beyond the Leases.
// Not a test: it prints one JSON line.
// Run: npx tsx packages/runtime/bench/idle-requests.bench.ts [--minutes 3] [--warmup 30] [app…]
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, openSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { applyManifests, type AuditEvent, componentUser, readAuditEvents, repoRoot, startControlPlane, writeKubeconfig } from "@aicr/testing/harness"
import { buildApp } from "../../../hack/build-apps"
import { benchControllerFlags } from "../../../hack/local-operator"

const argv = process.argv.slice(2)
const opt = (name: string, fallback: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback)
const minutes = opt("--minutes", 3)
const warmup = opt("--warmup", 30)
const apps = argv.filter((a, i) => !a.startsWith("--") && !argv[i - 1]?.startsWith("--"))
const ALL = ["approval-guard", "ecr-credential-refresher", "planner", "registry-mirror", "resolver", "step-executor", "validation-gate"]
const NS = "aicr-system"
const AUDITED = "aicr-audited-controller"
const WRITES = new Set(["create", "update", "patch", "delete", "deletecollection"])

const work = mkdtempSync(join(tmpdir(), "idle-requests-"))
const plane = await startControlPlane({ nodes: false, fresh: true })
const children: ChildProcess[] = []
try {
  const { info } = plane
  await applyManifests(info, join(repoRoot(), "crds"))
  await applyManifests(
    info,
    [NS, "argocd", "aicr-validation", "gpu-operator"].map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
  )
  const kubeconfig = writeKubeconfig(join(work, "audited.kubeconfig"), info.server, info.caFile, [
    { name: AUDITED, token: componentUser(info.dir, AUDITED).token },
  ])
  const wanted = apps.length > 0 ? apps : ALL
  for (const app of wanted) {
    const built = await buildApp(app, join(work, "dist", app))
    const log = openSync(join(work, `${app}.log`), "a")
    children.push(
      spawn(
        process.execPath,
        [
          built.entry,
          "--kubeconfig",
          kubeconfig,
          "--leader-elect=true",
          "--leader-election-namespace",
          NS,
          "--metrics-bind-address=0",
          "--health-probe-bind-address=0",
          "--log-level=info",
          ...benchControllerFlags(app, info.registry),
        ],
        { stdio: ["ignore", log, log] },
      ),
    )
  }
  await sleep(warmup * 1000)
  const t0 = Date.now()
  await sleep(minutes * 60_000)
  const t1 = Date.now()
  const within = (e: AuditEvent) => {
    const t = Date.parse((e as unknown as { stageTimestamp: string }).stageTimestamp)
    return t >= t0 && t < t1
  }
  const events = readAuditEvents(info, { username: `system:${AUDITED}` }).filter(within)
  const agent = (e: AuditEvent) => (e as unknown as { userAgent?: string }).userAgent ?? ""
  const per = (n: number) => +(n / ((t1 - t0) / 60_000)).toFixed(2)
  const byResource = (es: AuditEvent[]) =>
    es.reduce<Record<string, number>>((m, e) => {
      const k = `${e.verb} ${e.objectRef?.resource ?? "?"}${e.objectRef?.subresource !== undefined ? `/${e.objectRef.subresource}` : ""}`
      return { ...m, [k]: (m[k] ?? 0) + 1 }
    }, {})
  const result: Record<string, unknown> = {}
  for (const app of wanted) {
    const mine = events.filter((e) => agent(e).startsWith(`aicr-${app}`))
    const done = mine.filter((e) => e.stage === "ResponseComplete")
    const lease = done.filter((e) => e.objectRef?.resource === "leases")
    const reads = done.filter((e) => e.objectRef?.resource !== "leases" && (e.verb === "get" || e.verb === "list"))
    const writes = done.filter((e) => e.objectRef?.resource !== "leases" && WRITES.has(e.verb))
    const watches = mine.filter((e) => e.verb === "watch" && e.stage === "ResponseStarted")
    result[app] = {
      perMinute: { reads: per(reads.length), writes: per(writes.length), watchesStarted: per(watches.length), leaseRequests: per(lease.length) },
      ...(reads.length + writes.length > 0 ? { readsAndWrites: byResource([...reads, ...writes]) } : {}),
    }
  }
  const unattributed = events.filter((e) => !wanted.some((app) => agent(e).startsWith(`aicr-${app}`))).length
  console.log(
    JSON.stringify({
      what: "API requests per idle minute (audit log), every controller at once, leader election on, no ClusterRuntime",
      minutes: +((t1 - t0) / 60_000).toFixed(1),
      unattributed,
      ...result,
    }),
  )
} finally {
  for (const c of children) c.kill("SIGKILL")
  await plane.stop()
}
process.exit(0)
