// `kubectl apply -f clusterruntime.yaml` of the EKS guide, unchanged, by a runtime editor who is not cluster-admin,
// on the real kube-apiserver with the policies of policies/ and the editor stamp (a MutatingAdmissionPolicy): the
// API server records the editor itself, and "nobody approves their own change" still holds. Without the stamp (a
// cluster that does not serve MutatingAdmissionPolicy), the same command is refused with the command to run, and
// that command, run as printed, is admitted. ADR 20261203-runtime-editor-stamp.
import { execFile } from "node:child_process"
import { copyFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { ANNOTATION_EDITED_BY, APPROVER_ROLE } from "@aicr/api"
import {
  applyManifests,
  createServiceAccountToken,
  eventually,
  expectOk,
  type HarnessInfo,
  installApprovalPolicies,
  kubeconfigFor,
  kubeRequest,
  type KubeResponse,
  type KubeTarget,
  removeApprovalPolicies,
  removeEditorStamp,
  repoRoot,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { approval, clusterRoleBinding, deleteRuntime, plannedRollout, ROLLOUTS, RUNTIME } from "./support/rollouts"

const info: HarnessInfo = inject("harness")
const SAMPLE = join(repoRoot(), "e2e", "samples", "clusterruntime.yaml")
const planner = "system:serviceaccount:aicr-system:aicr-planner"
const sh = promisify(execFile)
let work = ""
let target: KubeTarget
let seq = 0

/** Runs a bash script in the work dir as `user` with the harness's kubectl first on PATH. */
const bash = async (script: string, user: string) => {
  const env = { ...process.env, PATH: [dirname(info.bin.kubectl!), process.env.PATH].join(":"), KUBECONFIG: await kubeconfigFor(info, user) }
  try {
    const { stdout, stderr } = await sh("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: work, env })
    return { stdout, stderr, code: 0 }
  } catch (e) {
    const x = e as { stdout: string; stderr: string; code: number }
    return { stdout: x.stdout, stderr: x.stderr, code: x.code }
  }
}

const runtime = async () =>
  expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as {
    metadata: { uid: string; annotations?: Record<string, string> }
    spec: { intent: string }
  }
const editorOf = async () => (await runtime()).metadata.annotations?.[ANNOTATION_EDITED_BY]
const ok = (res: KubeResponse) => expect(res.status, JSON.stringify(res.body?.message)).toBe(200)

/** A rollout as the planner creates it for the runtime's recorded editor (retried while the policy's parameter cache catches up). */
const rolloutFor = async (requestedBy: string) => {
  const uid = (await runtime()).metadata.uid
  const name = `stamp-${++seq}`
  await eventually(
    async () => (await kubeRequest(info, { method: "POST", path: ROLLOUTS, body: plannedRollout({ name, runtimeUID: uid, requestedBy }) })).status === 201,
    {
      what: `rollout ${name} requested by ${requestedBy}`,
    },
  )
  return name
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "editor-stamp-"))
  copyFileSync(SAMPLE, join(work, "clusterruntime.yaml"))
  await deleteRuntime(info)
  await installApprovalPolicies(info, { editorStamp: true })
  await applyManifests(info, [
    // Runtime editors (what a platform team grants; not cluster-admin): alice and carol. Approvers: alice and the group.
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "test-stamp-runtime-editor" },
      rules: [{ apiGroups: ["operator.aicr.run"], resources: ["clusterruntimes"], verbs: ["get", "list", "watch", "create", "patch", "update"] }],
    },
    clusterRoleBinding("test-stamp-runtime-editors", "test-stamp-runtime-editor", [
      { kind: "User", name: "alice" },
      { kind: "User", name: "carol" },
    ]),
    clusterRoleBinding("test-stamp-approvers", APPROVER_ROLE, [
      { kind: "User", name: "alice" },
      { kind: "Group", name: "aicr-approvers" },
    ]),
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "test-stamp-operator-runtime" },
      rules: [{ apiGroups: ["operator.aicr.run"], resources: ["clusterruntimes"], verbs: ["get", "patch", "update"] }],
    },
    clusterRoleBinding("test-stamp-operator-runtime", "test-stamp-operator-runtime", [
      { kind: "ServiceAccount", name: "aicr-planner", namespace: "aicr-system" },
    ]),
  ])
  target = {
    ...info,
    users: { ...info.users, planner: { token: await createServiceAccountToken(info, "aicr-system", "aicr-planner"), user: planner, groups: [] } },
  }
  // The fresh bindings reach the authorizer's cache a moment later.
  await eventually(async () => (await bash("kubectl auth can-i create clusterruntimes.operator.aicr.run", "alice")).stdout.trim() === "yes", {
    what: "alice's editor binding",
  })
})

afterAll(async () => {
  await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}?labelSelector=${encodeURIComponent("operator.aicr.run/plan")}` })
  await deleteRuntime(info)
  for (const n of ["test-stamp-runtime-editors", "test-stamp-approvers", "test-stamp-operator-runtime"])
    await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${n}` })
  for (const n of ["test-stamp-runtime-editor", "test-stamp-operator-runtime"])
    await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${n}` })
  await removeApprovalPolicies(info)
  if (work) rmSync(work, { recursive: true, force: true })
})

describe("with the editor stamp (MutatingAdmissionPolicy served)", () => {
  it("admits the guide's file applied unchanged with kubectl by an editor who is not cluster-admin, and records the API server's name for her", async () => {
    expect((await bash("kubectl auth can-i '*' '*'", "alice")).stdout.trim()).toBe("no")
    const applied = await bash("kubectl apply -f clusterruntime.yaml", "alice")
    expect(applied, applied.stderr).toMatchObject({ code: 0, stdout: "clusterruntime.operator.aicr.run/cluster created\n" })
    expect(await editorOf()).toBe("alice")
    // Applying the same file again changes no spec: the record stays as it is.
    expect((await bash("kubectl apply -f clusterruntime.yaml", "carol")).stdout).toBe("clusterruntime.operator.aicr.run/cluster unchanged\n")
    expect(await editorOf()).toBe("alice")
  })

  it("keeps nobody approving their own change: alice's edit produces a rollout she may not approve; another approver may", async () => {
    const forged = await kubeRequest(info, {
      method: "POST",
      path: ROLLOUTS,
      body: plannedRollout({ name: "stamp-forged", runtimeUID: (await runtime()).metadata.uid, requestedBy: "mallory" }),
    })
    expect(forged.status).toBe(403)
    const name = await rolloutFor("alice")
    const mine = await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, user: "alice", body: { spec: { approval: approval("alice") } } })
    expect(mine.status).toBe(403)
    expect(mine.body.message).toContain(
      `alice made the runtime edit that produced rollout ${name} (spec.requestedBy): nobody approves their own change, ask another approver`,
    )
    ok(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, user: "approver", body: { spec: { approval: approval("approver") } } }))
  })

  it("overwrites an editor annotation naming someone else with the requester's own name", async () => {
    const edited = await bash(
      `sed -e 's|intent: training|intent: inference|' -e 's|^  name: cluster$|  name: cluster\\n  annotations: {${ANNOTATION_EDITED_BY}: alice}|' clusterruntime.yaml > carol.yaml\nkubectl apply -f carol.yaml`,
      "carol",
    )
    expect(edited, edited.stderr).toMatchObject({ code: 0, stdout: "clusterruntime.operator.aicr.run/cluster configured\n" })
    expect((await runtime()).spec.intent).toBe("inference")
    expect(await editorOf()).toBe("carol")
    // Shifting the annotation alone is a change of the record: it names whoever made it.
    ok(await kubeRequest(info, { method: "PATCH", path: RUNTIME, user: "alice", body: { metadata: { annotations: { [ANNOTATION_EDITED_BY]: "bob" } } } }))
    expect(await editorOf()).toBe("alice")
    const name = await rolloutFor("alice")
    expect(
      (await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, user: "alice", body: { spec: { approval: approval("alice") } } })).status,
    ).toBe(403)
  })

  it("does not stamp the operator's identities: they still may change only their cleanup finalizer", async () => {
    expect((await runtime()).spec.intent).toBe("inference")
    const res = await kubeRequest(target, { method: "PATCH", path: RUNTIME, user: "planner", body: { spec: { intent: "training" } } })
    expect(res.status).toBe(403)
    expect(res.body.message).toContain(
      `the operator's identity ${planner} may change only its finalizer operator.aicr.run/cleanup of ClusterRuntime cluster (and its status)`,
    )
  })
})

describe("without the editor stamp (an API server that does not serve MutatingAdmissionPolicy)", () => {
  beforeAll(async () => {
    await removeEditorStamp(info)
    await deleteRuntime(info)
  })

  it("refuses the guide's apply with the exact command to run, and that command, run as printed, is admitted", async () => {
    const refused = await bash("kubectl apply -f clusterruntime.yaml", "alice")
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("this cluster does not record it for you (MutatingAdmissionPolicy aicr-runtime-editor-stamp is not installed)")
    const command = /Run: (.*) \(with your file in place of clusterruntime\.yaml\)/.exec(refused.stderr)?.[1]
    expect(command).toBe(`kubectl annotate --local --overwrite -o yaml -f clusterruntime.yaml ${ANNOTATION_EDITED_BY}=alice | kubectl apply -f -`)
    const applied = await bash(command!, "alice")
    expect(applied, applied.stderr).toMatchObject({ code: 0, stdout: "clusterruntime.operator.aicr.run/cluster created\n" })
    expect(await editorOf()).toBe("alice")
  })

  it("refuses another editor's spec change with the command that names her, after which her change is admitted", async () => {
    const change = 'kubectl patch clusterruntime cluster --type merge -p \'{"spec":{"intent":"inference"}}\''
    const refused = await bash(change, "carol")
    expect(refused.code).not.toBe(0)
    const command = /Run: (.*) and then your command again/.exec(refused.stderr)?.[1]
    expect(command).toBe(`kubectl annotate --overwrite clusterruntime cluster ${ANNOTATION_EDITED_BY}=carol`)
    expect((await bash(`${command!}\n${change}`, "carol")).code).toBe(0)
    expect([(await runtime()).spec.intent, await editorOf()]).toEqual(["inference", "carol"])
  })
})
