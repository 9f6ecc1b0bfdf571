// The condition metrics of a running controller, scraped the way Prometheus scrapes them: approval-guard runs as the
// bundle that ships, on the real kube-apiserver with the admission policies installed, and its `/metrics` follows
// the Approved condition of a rollout from AwaitingApproval to ApprovedByUser (status, reason, lastTransitionTime)
// and the approval's end (status.approval.validUntil), as the API server holds them. Scrapes make no API request.
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { APPROVER_ROLE } from "@aicr/api"
import { applyManifests, eventually, expectOk, type HarnessInfo, installApprovalPolicies, kubeRequest, removeApprovalPolicies } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { approval, clusterRoleBinding, createRuntime, deleteRuntime, isoIn, plannedRollout, ROLLOUTS } from "./support/rollouts"

const info: HarnessInfo = inject("harness")
const BINDING = "metrics-approvers"
let uid = ""
let out = ""
let port = 0
let child: ReturnType<typeof spawn> | undefined
let stderr = ""

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
  })

interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}
/** One scrape of the controller's `/metrics`, parsed from the Prometheus text format. */
const scrape = async (): Promise<Sample[]> => {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`)
  expect(res.status).toBe(200)
  return (await res.text()).split("\n").flatMap((line) => {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) return []
    return [{ name: m[1]!, labels: Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!])), value: Number(m[3]) }]
  })
}
const of = (samples: Sample[], metric: string, name: string) => samples.filter((s) => s.name === metric && s.labels.name === name)

interface Cond {
  type: string
  status: string
  reason: string
  lastTransitionTime: string
}
const get = async (name: string) => expectOk(await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${name}` }), `get ${name}`)
const approvedOf = async (name: string): Promise<Cond | undefined> => (await get(name)).status?.conditions?.find((c: Cond) => c.type === "Approved")

beforeAll(async () => {
  await deleteRuntime(info)
  await installApprovalPolicies(info)
  await applyManifests(info, [clusterRoleBinding(BINDING, APPROVER_ROLE, [{ kind: "Group", name: "aicr-approvers" }])])
  uid = await createRuntime(info)
  out = await mkdtemp(join(tmpdir(), "guard-metrics-"))
  const built = await buildApp("approval-guard", out)
  port = await freePort()
  child = spawn(
    process.execPath,
    [
      built.entry,
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      `--metrics-bind-address=127.0.0.1:${port}`,
      "--health-probe-bind-address=0",
      "--log-level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  )
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  await eventually(
    async () =>
      (await fetch(`http://127.0.0.1:${port}/metrics`).then(
        (r) => r.ok,
        () => false,
      )) || undefined,
    { timeoutMs: 60_000, what: "the approval-guard's /metrics" },
  )
})

afterAll(async () => {
  if (child !== undefined) {
    child.kill("SIGTERM")
    if (child.exitCode === null) await once(child, "exit")
  }
  if (out) await rm(out, { recursive: true, force: true })
  await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${BINDING}` })
  await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}?labelSelector=${encodeURIComponent(`operator.aicr.run/runtime-uid=${uid}`)}` })
  await deleteRuntime(info)
  await removeApprovalPolicies(info)
})

describe("condition metrics of approval-guard, scraped from its /metrics", () => {
  it("follows a rollout's Approved condition and the approval's end as they change", async () => {
    const name = "metrics-1"
    expectOk(
      await kubeRequest(info, {
        method: "POST",
        path: ROLLOUTS,
        body: plannedRollout({ name, runtimeUID: uid, requestedBy: "admin", deadline: isoIn(3 * 3_600_000) }),
      }),
      `create ${name}`,
    )

    // Waiting: one Approved series, False/AwaitingApproval, at the condition's lastTransitionTime; no approval yet.
    const waiting = await eventually(
      async () => {
        const s = await scrape()
        return of(s, "aicr_status_condition", name).length > 0 ? s : undefined
      },
      { timeoutMs: 60_000, what: `${name}: an aicr_status_condition series` },
    )
    const before = await approvedOf(name)
    expect(before).toMatchObject({ status: "False", reason: "AwaitingApproval" })
    expect(of(waiting, "aicr_status_condition", name)).toEqual([
      { name: "aicr_status_condition", labels: { kind: "RuntimeRollout", name, type: "Approved", status: "False", reason: "AwaitingApproval" }, value: 1 },
    ])
    expect(of(waiting, "aicr_status_condition_last_transition_time_seconds", name).map((s) => s.value)).toEqual([Date.parse(before!.lastTransitionTime) / 1000])
    expect(of(waiting, "aicr_runtimerollout_approval_valid_until_seconds", name)).toEqual([])

    // Approved: the series changes to True/ApprovedByUser (the False one is gone), and the approval's end appears.
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `${ROLLOUTS}/${name}`,
        user: "approver",
        body: { spec: { approval: approval("approver", { groups: ["aicr-approvers", "system:authenticated"], expiresInMs: 2 * 3_600_000 }) } },
      }),
      `approve ${name}`,
    )
    const approved = await eventually(
      async () => {
        const s = await scrape()
        return of(s, "aicr_status_condition", name).some((x) => x.labels.reason === "ApprovedByUser") ? s : undefined
      },
      { timeoutMs: 60_000, what: `${name}: the ApprovedByUser series` },
    )
    const after = (await get(name)) as { spec: { approval: { expiresAt: string } }; status: { conditions: Cond[]; approval: { validUntil: string } } }
    const cond = after.status.conditions.find((c) => c.type === "Approved")!
    expect(of(approved, "aicr_status_condition", name).map((s) => s.labels)).toEqual([
      { kind: "RuntimeRollout", name, type: "Approved", status: "True", reason: "ApprovedByUser" },
    ])
    expect(of(approved, "aicr_status_condition_last_transition_time_seconds", name).map((s) => s.value)).toEqual([Date.parse(cond.lastTransitionTime) / 1000])
    expect(after.status.approval.validUntil).toBe(after.spec.approval.expiresAt)
    expect(of(approved, "aicr_runtimerollout_approval_valid_until_seconds", name).map((s) => s.value)).toEqual([
      Date.parse(after.spec.approval.expiresAt) / 1000,
    ])
    // Only what approval-guard owns: the series of the other controllers' conditions come from their processes.
    expect(approved.filter((s) => s.name === "aicr_status_condition").every((s) => s.labels.type === "Approved")).toBe(true)
  })

  it("answers scrapes from its caches: ten scrapes make no request to the API server", async () => {
    const requests = (s: Sample[]) => s.filter((x) => x.name === "rest_client_requests_total").reduce((n, x) => n + x.value, 0)
    const first = requests(await scrape())
    for (let i = 0; i < 10; i++) await scrape()
    expect(requests(await scrape())).toBe(first)
    expect(child?.exitCode).toBeNull()
    expect(stderr).not.toMatch(/error/i)
  })
})
