/**
 * The EKS guide's command lines, verbatim, on the whole local operator: every controller as its own process (as
 * `aicr-dev up --aws` starts them: ECR tokens from the local AWS, the real AICR Jobs, Argo CD from the e2e tier), the
 * policies of policies/ with the editor stamp, and the people of the guide: a runtime editor who is not cluster-admin
 * (alice) and an approver. Section "Install": the token line prints when the ECR token expires, before any runtime
 * exists (the guide's order) and still once it does. Section "The runtime": `kubectl apply -f clusterruntime.yaml` with the guide's file, `kubectl get clusterruntime cluster -w`
 * until the first rollout waits for approval (no STEP while it waits), `kubectl get runtimerollouts`, `kubectl aicr
 * describe` and `kubectl aicr approve "${ROLLOUT}" --expires 6h --reason "Initial install"`.
 *
 * Not covered yet: the install running to `Ready` after the approval. The guide's file leaves deployment validation
 * at its default, Required, and the validation gate is not built, so the steps wait at AwaitingValidationReady; this
 * file checks that wait is what the runtime shows (and still no STEP).
 */
import { execFile, spawn } from "node:child_process"
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { APPROVER_ROLE, LABEL_OUTCOME, PLAN_READER_ROLE, VIEWER_ROLE } from "@aicr/api"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  deleteApplication,
  eventually,
  expectOk,
  installApprovalPolicies,
  kubeconfigFor,
  kubeRequest,
  removeApprovalPolicies,
  repoRoot,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp, buildCli } from "../hack/build-apps"
import { ENGINE_PROJECT, installEngineProject, OPERATOR_NAMESPACE, startLocalOperator, stopLocalOperator } from "../hack/local-operator"

const info = inject("harness")
const sh = promisify(execFile)
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const BINDINGS = ["guide-runtime-editors", "guide-viewers", "guide-approvers"]
/** The install guide's token line, verbatim. */
const TOKEN_LINE = "kubectl -n argocd get secret aicr-registry \\\n  -o jsonpath='{.metadata.annotations.operator\\.aicr\\.run/token-expires-at}{\"\\n\"}'"
let work = ""
let operatorDir = ""
let env: NodeJS.ProcessEnv = {}
let rollout = ""

/** Runs a bash script in the work dir as `user` (the guide's lines verbatim); returns stdout, stderr and the exit code. */
const bash = async (script: string, user: string) => {
  try {
    const { stdout, stderr } = await sh("bash", ["-c", `set -euo pipefail\n${script}`], {
      cwd: work,
      env: { ...env, KUBECONFIG: await kubeconfigFor(info, user) },
    })
    return { stdout, stderr, code: 0 }
  } catch (e) {
    const x = e as { stdout: string; stderr: string; code: number }
    return { stdout: x.stdout, stderr: x.stderr, code: x.code }
  }
}

const binding = (name: string, kind: "ClusterRole" | "Role", role: string, subject: { kind: "User" | "Group"; name: string }, namespace?: string) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: kind === "Role" ? "RoleBinding" : "ClusterRoleBinding",
  metadata: { name, ...(namespace ? { namespace } : {}) },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: role },
  subjects: [{ apiGroup: "rbac.authorization.k8s.io", ...subject }],
})

const conditionOf = async (type: string) =>
  ((await kubeRequest(info, { method: "GET", path: RUNTIME })).body?.status?.conditions ?? []).find((c: { type: string }) => c.type === type) as
    { status: string; reason: string; message: string } | undefined

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "guide-commands-"))
  operatorDir = join(work, "operator")
  copyFileSync(join(repoRoot(), "e2e", "samples", "clusterruntime.yaml"), join(work, "clusterruntime.yaml"))
  const pluginDir = join(work, "bin")
  const built = await buildCli("kubectl-aicr", pluginDir)
  symlinkSync(built.file, join(pluginDir, "kubectl_complete-aicr"))
  env = { ...process.env, PATH: [pluginDir, dirname(info.bin.kubectl!), dirname(process.execPath), process.env.PATH].join(":") }

  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await installApprovalPolicies(info, { editorStamp: true })
  await applyManifests(info, [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "guide-runtime-editor" },
      rules: [{ apiGroups: ["operator.aicr.run"], resources: ["clusterruntimes"], verbs: ["get", "list", "watch", "create", "patch", "update"] }],
    },
    binding("guide-runtime-editors", "ClusterRole", "guide-runtime-editor", { kind: "User", name: "alice" }),
    binding("guide-viewers", "ClusterRole", VIEWER_ROLE, { kind: "User", name: "alice" }),
    binding("guide-approvers", "ClusterRole", APPROVER_ROLE, { kind: "Group", name: "aicr-approvers" }),
    binding("guide-plan-readers", "Role", PLAN_READER_ROLE, { kind: "Group", name: "aicr-approvers" }, OPERATOR_NAMESPACE),
  ])
  await installEngineProject(info)
  // The controllers as they ship (what `aicr-dev up` builds before it starts them).
  for (const app of ["resolver", "registry-mirror", "approval-guard", "planner", "ecr-credential-refresher", "step-executor", "validation-gate"])
    await buildApp(app)
  // The stand-in charts, not the real ones the chart upstream serves by default: this file checks the guide's commands
  // up to the first step's start, on the e2e tier's shared plane and Argo CD; the real charts' steps would go on
  // installing there (their CRDs stay when Applications are deleted) while the tier's other files run.
  // The acceptance stories (e2e/acceptance*.e2e.test.ts) install the real charts, each on a plane of its own.
  await startLocalOperator(info, { dir: operatorDir, attached: true, aws: true, charts: "stand-in" })
}, 600_000)

afterAll(async () => {
  if (operatorDir) await stopLocalOperator(operatorDir)
  // Leave the tier's Argo CD as found: no Application (the gate let the first step write one), no AppProject and no
  // repo-creds Secret of this file.
  const apps = expectOk(
    await kubeRequest(info, { method: "GET", path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications` }),
    "list Applications",
  )
  for (const app of (apps.items ?? []) as Array<{ metadata: { name: string }; spec?: { project?: string } }>) {
    if (app.spec?.project === ENGINE_PROJECT) await deleteApplication(info, app.metadata.name, { timeoutMs: 120_000 })
  }
  await kubeRequest(info, { method: "DELETE", path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/appprojects/${ENGINE_PROJECT}` })
  await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${ARGOCD_NAMESPACE}/secrets/aicr-registry` })
  await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}?labelSelector=${encodeURIComponent("operator.aicr.run/runtime-uid")}` })
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  for (const n of BINDINGS) await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${n}` })
  await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${OPERATOR_NAMESPACE}/rolebindings/guide-plan-readers` })
  await kubeRequest(info, { method: "DELETE", path: "/apis/rbac.authorization.k8s.io/v1/clusterroles/guide-runtime-editor" })
  await removeApprovalPolicies(info)
  if (work) rmSync(work, { recursive: true, force: true })
}, 120_000)

/** The token line's output, once it prints a line (NotFound or an empty annotation until the Secret is written). */
const tokenLine = () =>
  eventually(
    async () => {
      const r = await bash(TOKEN_LINE, "admin")
      return r.code === 0 && r.stdout.trim() !== "" ? r.stdout : undefined
    },
    { timeoutMs: 60_000, what: "the token line" },
  )

describe("the EKS guide, verbatim", () => {
  it("Install: within a minute of the install, before any ClusterRuntime exists, the token line prints when the ECR token expires", async () => {
    expect((await kubeRequest(info, { method: "GET", path: RUNTIME })).status).toBe(404)
    const out = await tokenLine()
    expect(out).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/)
    expect(Date.parse(out.trim())).toBeGreaterThan(Date.now())
    // Still the guide's order: the runtime is created in the next section.
    expect((await kubeRequest(info, { method: "GET", path: RUNTIME })).status).toBe(404)
  })

  it("The runtime: kubectl apply -f clusterruntime.yaml by an editor, then -w until the first rollout waits for approval, with no STEP", async () => {
    const applied = await bash("kubectl apply -f clusterruntime.yaml", "alice")
    expect(applied, applied.stderr).toMatchObject({ code: 0, stdout: "clusterruntime.operator.aicr.run/cluster created\n" })
    // `kubectl get clusterruntime cluster -w` as the guide runs it, until a row says the rollout waits.
    const watch = spawn(info.bin.kubectl!, ["get", "clusterruntime", "cluster", "-w"], {
      cwd: work,
      env: { ...env, KUBECONFIG: await kubeconfigFor(info, "alice") },
    })
    let out = ""
    watch.stdout.on("data", (d: Buffer) => (out += d.toString()))
    try {
      await eventually(async () => /^cluster\s+False\s+RollingOut\b/m.test(out), {
        timeoutMs: 480_000,
        intervalMs: 1_000,
        what: `a RollingOut row in kubectl get clusterruntime cluster -w:\n${out}`,
      })
    } finally {
      watch.kill("SIGTERM")
    }
    const rows = out.trimEnd().split("\n")
    expect(rows[0]).toMatch(/^NAME\s+READY\s+REASON\s+STEP\s+AGE$/)
    const waiting = rows.filter((r) => /^cluster\s+False\s+RollingOut\b/.test(r))
    // NAME READY REASON AGE: the STEP cell is empty while the rollout only awaits approval.
    for (const r of waiting) expect(r.trim().split(/\s+/), r).toHaveLength(4)
    expect((await conditionOf("Ready"))?.message).toMatch(
      /^rollout cluster-[0-9a-f]{12}-\d+ awaiting approval \(kubectl aicr approve cluster-[0-9a-f]{12}-\d+ --reason "…"\)$/,
    )
    expect((await conditionOf("Resolved"))?.status).toBe("True")
  }, 600_000)

  it("kubectl get runtimerollouts, kubectl aicr describe and approve: the editor may not approve her change; an approver does, with the guide's line", async () => {
    const listed = await bash("kubectl get runtimerollouts", "alice")
    expect(listed.code, listed.stderr).toBe(0)
    const lines = listed.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+APPROVED\s+PROGRESSING\s+STEP\s+OUTCOME\s+AGE$/)
    const row = lines.slice(1).find((l) => /^cluster-[0-9a-f]{12}-\d+\s+Install\s+False\s/.test(l))
    expect(row, listed.stdout).toBeDefined()
    rollout = row!.split(/\s+/)[0]!
    const own = await bash(
      `ROLLOUT="${rollout}"   # the name from the list\nkubectl aicr approve "\${ROLLOUT}" --expires 6h --reason "Initial install"`,
      "alice",
    )
    expect([own.code, own.stderr]).toEqual([1, "Error: you (alice) requested this change: nobody approves their own runtime edit; ask another approver\n"])
    const r = await bash(
      [
        `ROLLOUT="${rollout}"   # the name from the list`,
        'kubectl aicr describe "${ROLLOUT}"',
        'kubectl aicr approve "${ROLLOUT}" --expires 6h --reason "Initial install"',
      ].join("\n"),
      "approver",
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`Name: +${rollout}`))
    expect(r.stdout).toContain("Requested by:  alice")
    expect(r.stdout).toContain("none yet: Waiting for an approval of plan")
    const until = /approved by approver until (\S+)/.exec(r.stdout)
    expect(until, r.stdout).not.toBeNull()
    expect(Math.abs(Date.parse(until![1]!) - (Date.now() + 6 * 3_600_000))).toBeLessThan(120_000)
    const obj = expectOk(await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${rollout}` }), "get rollout")
    expect([obj.spec.requestedBy, obj.spec.approval.approvedBy, obj.spec.approval.reason, obj.metadata.labels?.[LABEL_OUTCOME]]).toEqual([
      "alice",
      "approver",
      "Initial install",
      undefined,
    ])
  })

  it("after the approval, with deployment validation Required and the validation launcher installed, the gate lets the first step start and STEP names it", async () => {
    await eventually(
      async () => {
        const ro = expectOk(await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${rollout}` }), "get rollout")
        const c = (ro.status?.conditions ?? []) as Array<{ type: string; status: string; reason: string; message: string }>
        return c.find((x) => x.type === "Approved")?.status === "True" && c.find((x) => x.type === "ValidationReady")?.status === "True" ? true : undefined
      },
      { timeoutMs: 120_000, what: `${rollout}: Approved=True and ValidationReady=True` },
    )
    // NAME READY REASON STEP AGE: the step in flight, as the guide's `kubectl get clusterruntime` shows it.
    const row = await eventually(
      async () => {
        const got = await bash("kubectl get clusterruntime cluster", "alice")
        const line = got.stdout.trimEnd().split("\n")[1]!
        return /\s\d+\/\d+ \S+ \((Install|Upgrade)\)\s/.test(line) ? line : undefined
      },
      { timeoutMs: 120_000, what: "a STEP in kubectl get clusterruntime" },
    )
    expect(row.trim().split(/\s+/).slice(0, 3), row).toEqual(["cluster", "False", "RollingOut"])
  })

  it("Install: the token line still prints when the ECR token expires once the runtime exists, and the runtime reports the same expiry", async () => {
    const out = await tokenLine()
    expect(out).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/)
    expect(Date.parse(out.trim())).toBeGreaterThan(Date.now())
    const runtime = expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get the runtime")
    expect(Date.parse(runtime.status.credentials.expiresAt)).toBe(Date.parse(out.trim()))
    expect(await conditionOf("RegistryCredentialsReady")).toMatchObject({ status: "True", reason: "TokenRefreshed" })
  })
})
