// The validation gate on `up`'s local control plane: the gate's RSS idle (before any validation) and after a run, and
// the validation's overhead beyond the validator's own run time, for the sample runtime's first install. Not a test:
// it prints numbers.
// Needs `npx -y node@24 hack/aicr-dev.mjs up --detach` with its rollout awaiting approval (up prints it); `npm run
// bench validation` starts one in a state dir of its own and stops it after.
// Run alone: npx tsx apps/validation-gate/bench/validation.bench.ts [.aicr/local]
//
// Overhead = (Validated=True − the last step's completion) − (the aicr validate Job's completion − its start): the
// fresh snapshot Job, the Jobs' scheduling and the process kubelet's start, reading the report, the evidence push and
// the status writes. The validator's own run time is the validate Job's; the checks' own durations (CTRF) are shown too.
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { eventually, expectOk, kubeRequest, repoRoot, runningPlane } from "@aicr/testing/harness"

const dir = process.argv[2] ?? join(repoRoot(), ".aicr", "local")
const info = await runningPlane(dir)
if (info === undefined) throw new Error(`no healthy control plane in ${dir}: run hack/aicr-dev.mjs up --detach first`)
const MiB = 1024 * 1024
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
// The gate's process: a local process of `up` (operator.json), or the container the process kubelet runs for the
// chart's Deployment (its containerID ends in the pid).
const gatePid = async (): Promise<number> => {
  const file = join(dir, "operator.json")
  if (existsSync(file)) {
    const found = (JSON.parse(readFileSync(file, "utf8")) as Array<{ name: string; pid: number }>).find((p) => p.name === "validation-gate")
    if (found !== undefined) return found.pid
  }
  const pods = expectOk(
    await kubeRequest(info, { method: "GET", path: "/api/v1/pods?labelSelector=app.kubernetes.io%2Fname%3Daicr-validation-gate" }),
    "gate pods",
  ).items as Array<{ status?: { containerStatuses?: Array<{ containerID?: string }> } }>
  const id = pods
    .flatMap((p) => p.status?.containerStatuses ?? [])
    .map((c) => c.containerID ?? "")
    .find((c) => c !== "")
  if (id === undefined) throw new Error("no validation-gate process: neither in operator.json nor a running aicr-validation-gate pod")
  return Number(id.split("/").at(-1))
}
const gate = { pid: await gatePid() }
const status = (field: "VmRSS" | "VmHWM") => Number(new RegExp(`${field}:\\s+(\\d+) kB`, "u").exec(readFileSync(`/proc/${gate.pid}/status`, "utf8"))![1]) * 1024
const mib = (b: number) => `${(b / MiB).toFixed(1)} MiB`

interface Cond {
  type: string
  status: string
  reason: string
  lastTransitionTime: string
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)
const all = (await get(ROLLOUTS)).items as Array<{
  metadata: { name: string; creationTimestamp: string; labels?: Record<string, string> }
  spec: { approval?: unknown }
}>
// The open rollout; else (re-measuring) the newest one.
const open =
  all.find((r) => !r.metadata.labels?.["operator.aicr.run/outcome"]) ??
  [...all].sort((a, b) => (a.metadata.creationTimestamp < b.metadata.creationTimestamp ? 1 : -1))[0]
if (open === undefined) throw new Error("no rollout: up creates one for the sample runtime")
const name = open.metadata.name as string
console.log(
  `validation-gate pid ${gate.pid}: ${open.metadata.labels?.["operator.aicr.run/outcome"] ? "(rollout already ended) " : "idle "}RSS ${mib(status("VmRSS"))} (peak so far ${mib(status("VmHWM"))}), rollout ${name}`,
)

if (open.spec.approval === undefined) {
  execFileSync(
    process.execPath,
    [
      join(repoRoot(), "dist", "apps", "kubectl-aicr", "kubectl-aicr"),
      "approve",
      name,
      "--expires",
      "2h",
      "--reason",
      "validation bench",
      "--context",
      "approver",
      "--kubeconfig",
      info.kubeconfig,
    ],
    { stdio: "inherit" },
  )
}
const done = await eventually(
  async () => {
    const r = await get(`${ROLLOUTS}/${name}`)
    const outcome = r.metadata.labels?.["operator.aicr.run/outcome"]
    return outcome !== undefined && r
  },
  { timeoutMs: 1_800_000, intervalMs: 1000, what: `rollout ${name} to end` },
)
const cond = (type: string): Cond | undefined => done.status?.conditions?.find((c: Cond) => c.type === type)
console.log(`rollout ${name} ended ${done.metadata.labels["operator.aicr.run/outcome"]}: Validated ${cond("Validated")?.status}/${cond("Validated")?.reason}`)
const v = done.status?.validation ?? {}
const job = await get(`/apis/batch/v1/namespaces/aicr-validation/jobs/${v.runID}`)
const snapshots = (
  await get(`/apis/batch/v1/namespaces/aicr-validation/jobs?labelSelector=operator.aicr.run%2Frollout%3D${name},operator.aicr.run%2Faicr-job%3Dsnapshot`)
).items
const t = (s: string | undefined) => (s === undefined ? Number.NaN : Date.parse(s))
// The gate's run starts with its snapshot Job (created on its first pass after StepsCompleted); the last step's start
// bounds it from above (steps record no completion time, and Progressing stays True across StepsCompleted).
const runAt = snapshots.length > 0 ? t(snapshots[0].metadata.creationTimestamp) : Number.NaN
const lastStepAt = Math.max(...(done.status?.steps?.items ?? []).map((i: { startedAt?: string }) => t(i.startedAt)).filter((x: number) => !Number.isNaN(x)))
const validatedAt = t(cond("Validated")?.lastTransitionTime)
const validatorMs = t(job.status?.completionTime) - t(job.status?.startTime)
const snapshotMs = snapshots.length > 0 ? t(snapshots[0].status?.completionTime) - t(snapshots[0].status?.startTime) : Number.NaN
const totalMs = validatedAt - runAt
console.log(
  `the gate's run (snapshot Job created → Validated=True): ${(totalMs / 1000).toFixed(0)} s; aicr validate Job: ${(validatorMs / 1000).toFixed(0)} s; fresh snapshot Job: ${(snapshotMs / 1000).toFixed(0)} s`,
)
console.log(
  `overhead beyond the validator's own run: ${((totalMs - validatorMs) / 1000).toFixed(0)} s (of which the snapshot ${(snapshotMs / 1000).toFixed(0)} s); last step started → Validated: ${((validatedAt - lastStepAt) / 1000).toFixed(0)} s; second-resolution timestamps`,
)
const cm = await get(`/api/v1/namespaces/aicr-validation/configmaps/${v.runID}`)
const report = JSON.parse(cm.data["snapshot.json"])
for (const test of report.results.tests) console.log(`  check ${test.name}: ${test.status} in ${test.duration} ms`)
console.log(`evidence ${v.evidenceRef}`)
await new Promise((r) => setTimeout(r, 10_000))
console.log(`validation-gate RSS 10 s after the run: ${mib(status("VmRSS"))}, peak ${mib(status("VmHWM"))}`)
