// The whole controller (runApp: informer, work queue, driver, SSA, SubjectAccessReviews) on the real kube-apiserver
// of the local control plane, with the admission policies of policies/ installed and approvals written by the
// harness users as `kubectl aicr` writes them: waiting (with and without approvers, and as bindings change), approval, expiry at the
// approval's expiresAt and at the deadline, revocation, acknowledgements; then the bundle as it ships.
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { APPROVER_ROLE } from "@aicr/api"
import {
  applyManifests,
  eventually,
  expectOk,
  type HarnessInfo,
  installApprovalPolicies,
  kubeRequest,
  readAuditEvents,
  removeApprovalPolicies,
  untilCondition,
} from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { approvalGuardApp } from "../src/app"
import { approval, clusterRoleBinding, createRuntime, deleteRuntime, isoIn, plannedRollout, ROLLOUTS } from "./support/rollouts"

const info: HarnessInfo = inject("harness")
let guard: { readonly stop: () => Promise<void> } | undefined
let uid = ""
let seq = 0

interface Cond {
  type: string
  status: string
  reason: string
  message: string
  lastTransitionTime: string
  observedGeneration?: number
}
const get = async (name: string) => expectOk(await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${name}` }), `get ${name}`)
const approved = async (name: string): Promise<Cond | undefined> => (await get(name)).status?.conditions?.find((c: Cond) => c.type === "Approved")
const create = async (o: { deadlineInMs?: number } = {}) => {
  const name = `guard-${++seq}`
  const body = plannedRollout({ name, runtimeUID: uid, requestedBy: "admin", ...(o.deadlineInMs !== undefined ? { deadline: isoIn(o.deadlineInMs) } : {}) })
  expectOk(await kubeRequest(info, { method: "POST", path: ROLLOUTS, body }), `create ${name}`)
  return name
}
const approveAs = async (name: string, o: Parameters<typeof approval>[1] = {}) =>
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: `${ROLLOUTS}/${name}`,
      user: "approver",
      body: { spec: { approval: approval("approver", { groups: ["aicr-approvers", "system:authenticated"], ...o }) } },
    }),
    `approve ${name}`,
  )

const start = () => {
  guard = startController(info, approvalGuardApp, [])
}
const stop = async () => {
  await guard?.stop()
  guard = undefined
}
const bindApprovers = () => applyManifests(info, [clusterRoleBinding("guard-approvers", APPROVER_ROLE, [{ kind: "Group", name: "aicr-approvers" }])])

beforeAll(async () => {
  await deleteRuntime(info)
  await installApprovalPolicies(info)
  await bindApprovers()
  uid = await createRuntime(info)
  start()
})

afterAll(async () => {
  await stop()
  await kubeRequest(info, { method: "DELETE", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/guard-approvers" })
  await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}?labelSelector=${encodeURIComponent(`operator.aicr.run/runtime-uid=${uid}`)}` })
  await deleteRuntime(info)
  await removeApprovalPolicies(info)
})

describe("approval-guard on the local control plane", () => {
  it("waits for an approval, naming who may approve and that the requester may not", async () => {
    const name = await create()
    const c = await untilCondition(() => approved(name), "Approved", "False", "AwaitingApproval", { timeoutMs: 30_000 })
    expect(c).toMatchObject({ status: "False", observedGeneration: 1 })
    expect(c.message).toContain(`May approve: groups aicr-approvers (ClusterRole ${APPROVER_ROLE}). admin requested this change and may not approve it.`)
    expect(c.message).toContain(`kubectl aicr approve ${name} --reason`)
  })

  it("counts an approval the authorizer confirms, and records it in status.approval", async () => {
    const name = await create()
    await untilCondition(() => approved(name), "Approved", "False", "AwaitingApproval", { timeoutMs: 30_000 })
    await approveAs(name)
    const c = await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
    expect(c).toMatchObject({ status: "True", observedGeneration: 2 })
    const r = await get(name)
    expect(r.status.approval).toEqual({ approvedBy: "approver", validUntil: r.spec.approval.expiresAt })
  })

  it("writes nothing more while nothing changes", async () => {
    const name = await create()
    await approveAs(name)
    await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
    const ours = () =>
      readAuditEvents(info, { resource: "runtimerollouts", name }).filter((e) => e.requestURI.includes("fieldManager=aicr-approval-guard")).length
    const before = ours()
    await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, body: { metadata: { annotations: { "test/touch": "1" } } } })
    await new Promise((r) => setTimeout(r, 2_000))
    expect(ours()).toBe(before)
  })

  it("ends RolloutExpired at the approval's expiresAt, not before, without polling", async () => {
    const name = await create()
    await approveAs(name, { expiresInMs: 5_000 })
    const expiresAt = (await get(name)).spec.approval.expiresAt as string
    await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
    expect(Date.now()).toBeLessThan(Date.parse(expiresAt)) // still valid, and shown so
    const c = await untilCondition(() => approved(name), "Approved", "False", "RolloutExpired", { timeoutMs: 20_000 })
    const seenAt = Date.now()
    expect(c).toMatchObject({
      status: "False",
      message: `The approval expired at ${expiresAt}: the step in flight finishes and nothing new starts. A retry is a new rollout with a new approval`,
    })
    expect(Date.parse(c.lastTransitionTime)).toBeGreaterThanOrEqual(Date.parse(expiresAt))
    process.stderr.write(`[approval-guard] approval expiry seen ${seenAt - Date.parse(expiresAt)} ms after expiresAt\n`)
  })

  it("ends an unapproved rollout RolloutExpired at its deadline", async () => {
    const name = await create({ deadlineInMs: 4_000 })
    await untilCondition(() => approved(name), "Approved", "False", "AwaitingApproval", { timeoutMs: 30_000 })
    const c = await untilCondition(() => approved(name), "Approved", "False", "RolloutExpired", { timeoutMs: 20_000 })
    const seenAt = Date.now()
    const r = await get(name)
    expect(seenAt).toBeGreaterThanOrEqual(Date.parse(r.spec.deadline)) // not before the deadline
    process.stderr.write(`[approval-guard] deadline expiry seen ${seenAt - Date.parse(r.spec.deadline)} ms after the deadline\n`)
    expect(c.message).toBe(
      `The deadline ${r.spec.deadline} passed without a valid approval; nothing starts. A retry is a new rollout (annotation operator.aicr.run/retry=${name} on the runtime)`,
    )
  })

  it("turns Approved False/RolloutRevoked when an approver revokes mid-rollout", async () => {
    const name = await create()
    await approveAs(name)
    await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `${ROLLOUTS}/${name}`,
        user: "approver",
        body: { spec: { revocation: { revokedBy: "approver", reason: "GPU incident", revokedAt: isoIn(0) } } },
      }),
      "revoke",
    )
    const c = await untilCondition(() => approved(name), "Approved", "False", "RolloutRevoked", { timeoutMs: 30_000 })
    expect(c.message).toContain("Revoked by approver: GPU incident")
  })

  it("holds a step waiting for acknowledgement until it is acknowledged", async () => {
    const name = await create()
    await approveAs(name)
    await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
    // The step-executor's room, as it writes it after applying a manual step with post-apply actions.
    const steps = {
      total: 2,
      done: 1,
      current: "2/2 gpu-operator (Upgrade)",
      items: [{ index: 2, release: "gpu-operator", namespace: "gpu-operator", action: "Upgrade", verdict: "manual", state: "AwaitingAcknowledgement" }],
    }
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `${ROLLOUTS}/${name}/status?fieldManager=aicr-step-executor`,
        contentType: "application/apply-patch+yaml",
        body: {
          apiVersion: "operator.aicr.run/v1alpha1",
          kind: "RuntimeRollout",
          metadata: { name },
          status: {
            conditions: [{ type: "Progressing", status: "False", reason: "AwaitingAcknowledgement", message: "", lastTransitionTime: isoIn(0) }],
            steps,
          },
        },
      }),
      "step-executor status",
    )
    const held = await untilCondition(() => approved(name), "Approved", "False", "AwaitingAcknowledgement", { timeoutMs: 30_000 })
    expect(held.message).toContain(`kubectl aicr acknowledge ${name} --step gpu-operator`)
    expect((await get(name)).status.approval.pendingAcknowledgements).toEqual(["gpu-operator"])
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `${ROLLOUTS}/${name}`,
        user: "approver",
        contentType: "application/json-patch+json",
        body: [{ op: "add", path: "/spec/acknowledgements", value: [{ step: "gpu-operator", acknowledgedBy: "approver", at: isoIn(0) }] }],
      }),
      "acknowledge",
    )
    await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
    expect((await get(name)).status.approval.pendingAcknowledgements).toBeUndefined()
  })

  it("says how to configure approvers when none is bound", async () => {
    await kubeRequest(info, { method: "DELETE", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/guard-approvers" })
    try {
      const name = await create()
      // The guard's binding cache may see the delete after the rollout: its first message may still name the approvers.
      const c = await untilCondition(() => approved(name), "Approved", "False", "AwaitingApproval", {
        timeoutMs: 30_000,
        message: /^No approver is configured/u,
      })
      expect(c.message).toMatch(
        new RegExp(`^No approver is configured: bind the ClusterRole ${APPROVER_ROLE} to users or groups \\(chart values approvers.users, approvers.groups\\)`),
      )
    } finally {
      await bindApprovers()
    }
  })

  it("follows the bindings as they change: a rollout created with no approver names the approvers once a binding appears, and refuses the approval once it goes", async () => {
    await kubeRequest(info, { method: "DELETE", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/guard-approvers" })
    let name = ""
    try {
      name = await create()
      await untilCondition(() => approved(name), "Approved", "False", "AwaitingApproval", { timeoutMs: 30_000, message: /^No approver is configured/u })
    } finally {
      await bindApprovers()
    }
    // Nothing touches the rollout: only the binding's watch event can change the message (no polling; the next
    // scheduled pass is the deadline, an hour away).
    const named = await eventually(
      async () => {
        const c = await approved(name)
        return c?.message.includes("May approve: groups aicr-approvers") ? c : undefined
      },
      { timeoutMs: 60_000, what: `${name}: the approvers named after the binding appeared` },
    )
    expect(named).toMatchObject({ status: "False", reason: "AwaitingApproval" })
    expect(named.message).not.toContain("No approver is configured")
    // An approval counts while the binding holds, and stops counting when it is removed (the authorizer's answer).
    await approveAs(name)
    await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
    await kubeRequest(info, { method: "DELETE", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/guard-approvers" })
    try {
      const refused = await untilCondition(() => approved(name), "Approved", "False", "ApprovalRefused", { timeoutMs: 60_000 })
      expect(refused.status).toBe("False")
    } finally {
      await bindApprovers()
    }
  })

  // Its own hang guard: the esbuild build of the bundle runs inside the test (a minute and more on a loaded machine).
  it("runs as the bundle that ships and reports on a rollout", { timeout: 300_000 }, async () => {
    await stop()
    const out = await mkdtemp(join(tmpdir(), "guard-bundle-"))
    const built = await buildApp("approval-guard", out)
    const child = spawn(
      process.execPath,
      [built.entry, "--kubeconfig", info.kubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=warn"],
      { stdio: ["ignore", "ignore", "pipe"] },
    )
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    try {
      const name = await create()
      await untilCondition(() => approved(name), "Approved", "False", "AwaitingApproval", { timeoutMs: 60_000 })
      await approveAs(name)
      await untilCondition(() => approved(name), "Approved", "True", "ApprovedByUser", { timeoutMs: 30_000 })
      expect(child.exitCode).toBeNull()
    } finally {
      child.kill("SIGTERM")
      if (child.exitCode === null) await once(child, "exit")
      await rm(out, { recursive: true, force: true })
    }
    expect(stderr).not.toMatch(/error/i)
  })
})
