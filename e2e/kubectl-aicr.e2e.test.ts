/**
 * The approver's story with the `kubectl aicr` plugin, through kubectl's own plugin mechanism (the one-file
 * executable on PATH) against the real API server, with the admission policies installed and the approval-guard
 * running from its shipped bundle. A rollout is created as the planner would create it; the seed's command lines run
 * verbatim in bash: list, describe, approve with --expires 2h, then acknowledge, revoke and reproduce. The approval
 * lines run once more with the standalone linux-amd64 binary (a Node single executable application) on a PATH
 * that has no node.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  ANNOTATION_EDITED_BY,
  APPROVER_ROLE,
  encodePlan,
  LABEL_OUTCOME,
  LABEL_PLAN,
  LABEL_ROLE,
  LABEL_RUNTIME_UID,
  PLAN_READER_ROLE,
  planConfigMapName,
  planKey,
  ROLE_CONTENT,
  ROLE_PLAN,
} from "@aicr/api"
import { samplePlan } from "@aicr/api/samples"
import { applyManifests, eventually, expectOk, installApprovalPolicies, kubeconfigFor, kubeRequest, removeApprovalPolicies } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp, buildCli } from "../hack/build-apps"
import { buildPlugin } from "../hack/build-plugin"

const info = inject("harness")
const sh = promisify(execFile)
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const NS = "aicr-system"
const plan = samplePlan()
const CONTENT = plan.content[0]!.configMap
let work = ""
let guard: ChildProcess | undefined
let env: NodeJS.ProcessEnv = {}
/** PATH with the standalone binary as the plugin and no node anywhere on it. */
let nodelessPath = ""
let uid = ""
let seq = 0

const iso = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d+Z$/, "Z")

/** Runs a bash script in the work dir as `user`; returns stdout, stderr and the exit code. */
const bash = async (script: string, user = "approver", extra: Record<string, string> = {}) => {
  const kubeconfig = await kubeconfigFor(info, user)
  try {
    const { stdout, stderr } = await sh("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: work, env: { ...env, KUBECONFIG: kubeconfig, ...extra } })
    return { stdout, stderr, code: 0 }
  } catch (e) {
    const x = e as { stdout: string; stderr: string; code: number }
    return { stdout: x.stdout, stderr: x.stderr, code: x.code }
  }
}

/** A rollout as the planner creates it, towards the sample plan. */
const createRollout = async (o: { deadlineInMs?: number } = {}) => {
  const name = `cluster-${plan.desiredStateDigest.slice(7, 19)}-${++seq}`
  expectOk(
    await kubeRequest(info, {
      method: "POST",
      path: ROLLOUTS,
      body: {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "RuntimeRollout",
        metadata: { name, labels: { [LABEL_RUNTIME_UID]: uid, [LABEL_PLAN]: planKey(plan.desiredStateDigest) } },
        spec: {
          runtimeUID: uid,
          kind: "Upgrade",
          fromDigest: `sha256:${"1".repeat(64)}`,
          toDigest: plan.desiredStateDigest,
          deadline: iso(o.deadlineInMs ?? 6 * 3_600_000),
          requiresApproval: true,
          requestedBy: "admin",
        },
      },
    }),
    `create ${name}`,
  )
  // The planner's and the step-executor's rooms, as they would report them.
  const status = (manager: string, s: Record<string, unknown>) =>
    kubeRequest(info, {
      method: "PATCH",
      path: `${ROLLOUTS}/${name}/status?fieldManager=${manager}`,
      contentType: "application/apply-patch+yaml",
      body: { apiVersion: "operator.aicr.run/v1alpha1", kind: "RuntimeRollout", metadata: { name }, status: s },
    })
  expectOk(
    await status("aicr-planner", { assessment: { configMap: CONTENT, verdicts: { safe: 1, manual: 1, blocked: 0, unknown: 0, unversioned: 0 } } }),
    "planner status",
  )
  expectOk(
    await status("aicr-step-executor", {
      steps: {
        total: 2,
        done: 0,
        items: [
          { index: 1, release: "cert-manager", namespace: "cert-manager", action: "Upgrade", verdict: "safe", state: "Pending" },
          { index: 2, release: "gpu-operator", namespace: "gpu-operator", action: "Upgrade", verdict: "manual", state: "Pending" },
        ],
      },
    }),
    "step-executor status",
  )
  return name
}

/**
 * Ends a rollout as the planner does (the durable outcome label), in the planner's identity: the admission policies
 * let only the operator set it. The group stands in for the planner's RBAC, which this file does not install.
 */
const closeAsPlanner = async (name: string, outcome: string) =>
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: `${ROLLOUTS}/${name}`,
      body: { metadata: { labels: { [LABEL_OUTCOME]: outcome } } },
      impersonate: { user: `system:serviceaccount:${NS}:aicr-planner`, groups: ["system:masters", "system:authenticated"] },
    }),
    `close ${name} as the planner`,
  )

const approvedReason = async (name: string) =>
  (expectOk(await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${name}` }), "get").status?.conditions ?? []).find(
    (c: { type: string }) => c.type === "Approved",
  )?.reason

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "kubectl-aicr-e2e-"))
  const pluginDir = join(work, "bin")
  const built = await buildCli("kubectl-aicr", pluginDir)
  symlinkSync(built.file, join(pluginDir, "kubectl_complete-aicr"))
  // kubectl finds plugins on PATH; the plugin's shebang finds this Node (24).
  env = { ...process.env, PATH: [pluginDir, dirname(info.bin.kubectl!), dirname(process.execPath), process.env.PATH].join(":") }

  // The standalone binary, and a PATH of the system's tools without node, nodejs, npm, npx or corepack.
  const sea = await buildPlugin(join(work, "sea"), { targets: ["linux-amd64"] })
  const seaDir = join(work, "sea-bin")
  const tools = join(work, "tools-without-node")
  mkdirSync(seaDir)
  mkdirSync(tools)
  symlinkSync(sea.files[0]!.binary, join(seaDir, "kubectl-aicr"))
  symlinkSync(sea.files[0]!.binary, join(seaDir, "kubectl_complete-aicr"))
  const noNode = new Set(["node", "nodejs", "npm", "npx", "corepack"])
  for (const d of ["/usr/bin", "/bin"])
    for (const f of readdirSync(d)) if (!noNode.has(f) && !existsSync(join(tools, f))) symlinkSync(join(d, f), join(tools, f))
  nodelessPath = [seaDir, dirname(info.bin.kubectl!), tools].join(":")

  await installApprovalPolicies(info)
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  const rt = expectOk(
    await kubeRequest(info, {
      method: "POST",
      path: "/apis/operator.aicr.run/v1alpha1/clusterruntimes",
      body: {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "ClusterRuntime",
        metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "admin" } },
        spec: { intent: "training", platform: "kubeflow", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } },
      },
    }),
    "create runtime",
  )
  uid = rt.metadata.uid
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: `${RUNTIME}/status?fieldManager=aicr-planner`,
      contentType: "application/apply-patch+yaml",
      body: {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "ClusterRuntime",
        metadata: { name: "cluster" },
        status: { plans: { active: plan.desiredStateDigest } },
      },
    }),
    "active plan",
  )
  const assessment = {
    components: [
      { name: "cert-manager", from: "v1.17.2", to: "v1.17.4", verdict: "safe" },
      {
        name: "gpu-operator",
        from: "v25.3.0",
        to: "v25.10.1",
        verdict: "manual",
        steps: { argocd: [{ id: "post-1", description: "Restart the device plugin pods", reason: "new runtime class" }] },
      },
    ],
  }
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: planConfigMapName(plan.desiredStateDigest),
        namespace: NS,
        labels: { [LABEL_ROLE]: ROLE_PLAN },
        annotations: { [ANNOTATION_DESIRED_STATE_DIGEST]: plan.desiredStateDigest },
      },
      immutable: true,
      data: { "plan.json": encodePlan(plan) },
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: CONTENT, namespace: NS, labels: { [LABEL_ROLE]: ROLE_CONTENT } },
      data: {
        "recipe.json": JSON.stringify({ kind: "RecipeResult", apiVersion: "aicr.run/v1alpha1", components: ["cert-manager", "gpu-operator"] }),
        "assessment.json": JSON.stringify(assessment),
      },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "e2e-approvers" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: APPROVER_ROLE },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "aicr-approvers" }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "e2e-plan-readers", namespace: NS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: PLAN_READER_ROLE },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "aicr-approvers" }],
    },
  ])
  const bundle = await buildApp("approval-guard", join(work, "guard"))
  guard = spawn(
    process.execPath,
    [bundle.entry, "--kubeconfig", info.kubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=warn"],
    { stdio: "ignore" },
  )
})

afterAll(async () => {
  guard?.kill("SIGTERM")
  if (guard && guard.exitCode === null) await once(guard, "exit")
  await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}?labelSelector=${encodeURIComponent(`${LABEL_RUNTIME_UID}=${uid}`)}` })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await kubeRequest(info, { method: "DELETE", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/e2e-approvers" })
  await removeApprovalPolicies(info)
  if (work) rmSync(work, { recursive: true, force: true })
})

describe("kubectl aicr, as the approver uses it", () => {
  it("runs the seed's approval lines verbatim: list, describe, approve --expires 2h", async () => {
    const name = await createRollout()
    await eventually(async () => (await approvedReason(name)) === "AwaitingApproval", { what: "the guard's AwaitingApproval" })
    const r = await bash(
      [
        "kubectl get clusterruntime cluster",
        "kubectl get runtimerollouts",
        `ROLLOUT="${name}"   # the name from the list`,
        'kubectl aicr describe "${ROLLOUT}"',
        'kubectl aicr approve "${ROLLOUT}" --expires 2h --reason "Maintenance window"',
      ].join("\n"),
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(name)
    expect(r.stdout).toMatch(new RegExp(`Name: +${name}`))
    expect(r.stdout).toContain("Requested by:  admin")
    expect(r.stdout).toContain("none yet: Waiting for an approval of plan")
    expect(r.stdout).toMatch(/2 +gpu-operator +gpu-operator +Upgrade +manual +Pending/)
    expect(r.stdout).toMatch(/gpu-operator +v25\.3\.0 +v25\.10\.1 +minor +manual/)
    expect(r.stdout).toContain("gpu-operator: Restart the device plugin pods")
    const line = /approved by approver until (\S+)/.exec(r.stdout)
    expect(line, r.stdout).not.toBeNull()
    const until = Date.parse(line![1]!)
    expect(Math.abs(until - (Date.now() + 2 * 3_600_000))).toBeLessThan(60_000)
    const obj = expectOk(await kubeRequest(info, { method: "GET", path: `${ROLLOUTS}/${name}` }), "get")
    expect(obj.spec.approval).toMatchObject({
      approvedBy: "approver",
      reason: "Maintenance window",
      groups: ["aicr-approvers", "system:authenticated"],
      toDigest: plan.desiredStateDigest,
    })
    await eventually(async () => (await approvedReason(name)) === "ApprovedByUser", { what: "the guard's ApprovedByUser" })
    const again = await bash(`kubectl aicr describe "${name}" -o json`)
    expect(JSON.parse(again.stdout).rollout.status.conditions.find((c: { type: string }) => c.type === "Approved").reason).toBe("ApprovedByUser")
    const twice = await bash(`kubectl aicr approve "${name}" --reason "again"`)
    expect([twice.code, twice.stderr]).toEqual([1, `Error: rollout ${name} is already approved by approver (approvals are set once)\n`])
  })

  it("the standalone linux-amd64 binary runs the same lines on a PATH without node", async () => {
    const name = await createRollout()
    await eventually(async () => (await approvedReason(name)) === "AwaitingApproval", { what: "the guard's AwaitingApproval" })
    const r = await bash(
      [
        "! command -v node",
        'kubectl plugin list 2>/dev/null | grep -x "$(command -v kubectl-aicr)"',
        `ROLLOUT="${name}"`,
        'kubectl aicr describe "${ROLLOUT}"',
        'kubectl aicr approve "${ROLLOUT}" --expires 2h --reason "Maintenance window"',
      ].join("\n"),
      "approver",
      { PATH: nodelessPath },
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`Name: +${name}`))
    expect(r.stdout).toMatch(/approved by approver until \S+/)
    await eventually(async () => (await approvedReason(name)) === "ApprovedByUser", { what: "the guard's ApprovedByUser after the binary's approval" })
    // kubectl's plugin completion through the kubectl_complete-aicr link to the same binary.
    const cmds = await bash('kubectl __complete aicr ""', "approver", { PATH: nodelessPath })
    expect(cmds.stdout.split("\n")).toEqual(expect.arrayContaining(["describe", "approve", "revoke", "acknowledge", "reproduce"]))
  })

  it("acknowledges the step waiting for it, then revokes", async () => {
    const name = await createRollout()
    expect((await bash(`kubectl aicr approve ${name} --reason "Maintenance window"`)).code).toBe(0)
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
            steps: {
              total: 2,
              done: 1,
              items: [
                { index: 1, release: "cert-manager", namespace: "cert-manager", action: "Upgrade", verdict: "safe", state: "Ready" },
                { index: 2, release: "gpu-operator", namespace: "gpu-operator", action: "Upgrade", verdict: "manual", state: "AwaitingAcknowledgement" },
              ],
            },
          },
        },
      }),
      "step waits",
    )
    await eventually(async () => (await approvedReason(name)) === "AwaitingAcknowledgement", { what: "AwaitingAcknowledgement" })
    const ack = await bash(`kubectl aicr acknowledge ${name}`)
    expect([ack.code, ack.stdout]).toEqual([0, `runtimerollout.operator.aicr.run/${name} acknowledged gpu-operator by approver\n`])
    await eventually(async () => (await approvedReason(name)) === "ApprovedByUser", { what: "released" })
    const rev = await bash(`kubectl aicr revoke ${name} --reason "GPU incident" -o yaml`)
    expect(rev.code, rev.stderr).toBe(0)
    expect(rev.stdout).toContain("revokedBy: approver")
    await eventually(async () => (await approvedReason(name)) === "RolloutRevoked", { what: "RolloutRevoked" })
  })

  it("reproduces the active plan: writes aicr-reproduce/recipe.json and prints the image, flags and bundle", async () => {
    const r = await bash("kubectl aicr reproduce")
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(readFileSync(join(work, "aicr-reproduce", "recipe.json"), "utf8")).components).toEqual(["cert-manager", "gpu-operator"])
    expect(r.stdout).toContain(`Plan:       ${plan.desiredStateDigest} (active)`)
    expect(r.stdout).toContain(`AICR image: ${plan.aicr!.image}`)
    expect(r.stdout).toContain("Plan flags: --deployer helm")
    expect(r.stdout).toContain(`Bundle:     ${plan.bundle!.ref}`)
    // The guide's lines as they are (the plan's bundle went to a TLS registry: no --plain-http).
    expect(r.stdout).toContain('  oras pull "${BUNDLE}" -o aicr-reproduce/operator-bundle\n')
    expect(r.stdout).toContain('diff -r aicr-reproduce/operator-bundle aicr-reproduce/cli-bundle && echo "zero diff"')
    const byPrefix = await bash(`kubectl aicr reproduce --plan ${plan.desiredStateDigest.slice(7, 19)} --dir other -o json`)
    expect(JSON.parse(byPrefix.stdout)).toEqual({
      plan: plan.desiredStateDigest,
      active: false,
      aicrImage: plan.aicr!.image,
      planFlags: ["--deployer", "helm"],
      bundle: plan.bundle!.ref,
      recipe: "other/recipe.json",
    })
    expect(existsSync(join(work, "other", "recipe.json"))).toBe(true)
  })

  it("gives clear errors: not found, forbidden with the missing permission, own change, expired, usage", async () => {
    const name = await createRollout()
    const missing = await bash("kubectl aicr describe nope")
    expect([missing.code, missing.stderr]).toEqual([1, 'Error: runtimerollout "nope" not found (kubectl get runtimerollouts lists them)\n'])
    const carol = await bash(`kubectl aicr approve ${name} --reason x`, "carol")
    expect(carol.code).toBe(1)
    expect(carol.stderr).toMatch(/^Error: forbidden: .*User "carol" cannot get resource "runtimerollouts" in API group "operator.aicr.run"/)
    const own = await bash(`kubectl aicr approve ${name} --reason "mine"`, "admin")
    expect([own.code, own.stderr]).toEqual([1, "Error: you (admin) requested this change: nobody approves their own runtime edit; ask another approver\n"])
    const expired = await createRollout({ deadlineInMs: 1_000 })
    await new Promise((r) => setTimeout(r, 1_500))
    const late = await bash(`kubectl aicr approve ${expired} --reason "late"`)
    expect(late.stderr).toMatch(new RegExp(`^Error: rollout ${expired} expired at its deadline`))
    const negative = await bash(`kubectl aicr approve ${name} --expires -1h --reason x`)
    expect([negative.code, negative.stderr]).toEqual([1, "Error: --expires must not be negative or zero, got -1h\n"])
    const usage = await bash(`kubectl aicr approve ${name}`)
    expect([usage.code, usage.stderr]).toEqual([2, 'Error: approve needs --reason "…" (why you approve)\n'])
    // The server's own refusal comes through as it is: a bob with no role at all.
    const bob = await bash(`kubectl aicr revoke ${name} --reason x`, "bob")
    expect(bob.stderr).toMatch(/cannot get resource "runtimerollouts"/)
  })

  it("watch follows a rollout live in a real terminal (tmux): progress bar, the step in flight against its deadline, finished steps' durations; exits with the outcome", async () => {
    const name = await createRollout()
    const at = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d+Z$/u, "Z")
    // The step-executor's room as it reports each edge.
    const steps = async (done: number, items: Array<Record<string, unknown>>) =>
      expectOk(
        await kubeRequest(info, {
          method: "PATCH",
          path: `${ROLLOUTS}/${name}/status?fieldManager=aicr-step-executor`,
          contentType: "application/apply-patch+yaml",
          body: { apiVersion: "operator.aicr.run/v1alpha1", kind: "RuntimeRollout", metadata: { name }, status: { steps: { total: 2, done, items } } },
        }),
        "step-executor status",
      )
    const tmux = (...args: string[]) => sh("tmux", ["-L", `aicr-e2e-${process.pid}`, ...args], { env })
    const pane = async () => (await tmux("capture-pane", "-p", "-t", "watch")).stdout
    const shows = (what: RegExp) =>
      eventually(
        async () => {
          const p = await pane()
          return what.test(p) && p
        },
        { timeoutMs: 30_000, intervalMs: 250, what: `the pane to show ${what}` },
      )
    await tmux(
      "new-session",
      "-d",
      "-s",
      "watch",
      "-x",
      "110",
      "-y",
      "30",
      "-e",
      `PATH=${env.PATH}`,
      "-e",
      `KUBECONFIG=${await kubeconfigFor(info, "approver")}`,
      "bash --norc",
    )
    try {
      await tmux("send-keys", "-t", "watch", `kubectl aicr watch ${name}; echo "EXIT=$?"`, "Enter")
      await shows(/\[-{40}\] 0\/2/u)
      expect(await pane()).toMatch(/·\s+1 cert-manager\s+Upgrade/u)
      await steps(0, [
        {
          index: 1,
          release: "cert-manager",
          namespace: "cert-manager",
          action: "Upgrade",
          verdict: "safe",
          state: "WaitingForReady",
          startedAt: at(-5_000),
          deadline: at(-5_000 + 600_000),
        },
        { index: 2, release: "gpu-operator", namespace: "gpu-operator", action: "Upgrade", verdict: "manual", state: "Pending" },
      ])
      // The step in flight counts up each second against its 10 minutes.
      const first = await shows(/▶\s+1 cert-manager\s+Upgrade (\d+)s of 10m00s \(deadline /u)
      const elapsed = Number(/Upgrade (\d+)s of 10m00s/u.exec(first)![1])
      await shows(new RegExp(`▶\\s+1 cert-manager\\s+Upgrade (?!${elapsed}s)\\d+s of 10m00s`, "u"))
      // Whole seconds from one instant, so the finished step took exactly 17 s.
      const second0 = Math.floor(Date.now() / 1000) * 1000
      const stamp = (ms: number) => new Date(second0 + ms).toISOString().replace(/\.\d+Z$/u, "Z")
      await steps(1, [
        { index: 1, release: "cert-manager", namespace: "cert-manager", action: "Upgrade", verdict: "safe", state: "Ready", startedAt: stamp(-20_000) },
        {
          index: 2,
          release: "gpu-operator",
          namespace: "gpu-operator",
          action: "Upgrade",
          verdict: "manual",
          state: "WaitingForReady",
          startedAt: stamp(-3_000),
          deadline: stamp(1_797_000),
        },
      ])
      const second = await shows(/▶\s+2 gpu-operator\s+Upgrade \d+s of 30m00s/u)
      expect(second).toMatch(/\[#{20}-{20}\] 1\/2/u)
      expect(second).toMatch(/✓\s+1 cert-manager\s+Upgrade 17s/u)
      await closeAsPlanner(name, "Succeeded")
      const end = await shows(/EXIT=\d+/u)
      expect(end).toContain(`${name}  Upgrade  awaiting approval  ended Succeeded`)
      expect(end).toMatch(/^EXIT=0$/mu)
    } finally {
      await tmux("kill-server").catch(() => undefined)
    }
    // Piped (no terminal): one line per change, and a revoked rollout's exit code.
    const revoked = await createRollout()
    const piped = spawn("bash", ["-c", `kubectl aicr watch ${revoked} | cat; exit "\${PIPESTATUS[0]}"`], {
      cwd: work,
      env: { ...env, KUBECONFIG: await kubeconfigFor(info, "approver") },
    })
    let out = ""
    piped.stdout!.on("data", (d: Buffer) => (out += d.toString()))
    await eventually(async () => out.includes(`${revoked} 0/2 ready`), { timeoutMs: 30_000, what: `the first line of the piped watch:\n${out}` })
    await closeAsPlanner(revoked, "Revoked")
    const [code] = (await once(piped, "exit")) as [number]
    expect(code).toBe(4)
    expect(out.trimEnd().split("\n")).toEqual([`${revoked} 0/2 ready`, `${revoked} ended Revoked: 0/2 steps ready`])
  })

  it("answers --help on every command and completes through kubectl's plugin completion", async () => {
    for (const c of ["describe", "watch", "approve", "revoke", "acknowledge", "reproduce"]) {
      const r = await bash(`kubectl aicr ${c} --help`)
      expect(r.code).toBe(0)
      expect(r.stdout).toContain(`kubectl aicr ${c}`)
      expect(r.stdout).toContain("--kubeconfig PATH")
    }
    const cmds = await bash('kubectl __complete aicr ""')
    expect(cmds.stdout.split("\n")).toEqual(expect.arrayContaining(["describe", "approve", "revoke", "acknowledge", "reproduce"]))
    const names = await bash('kubectl __complete aicr describe ""')
    expect(names.stdout).toMatch(/cluster-[a-f0-9]{12}-1/)
    const script = await bash("kubectl aicr completion bash")
    expect(script.stdout).toContain("complete -F _kubectl_aicr kubectl-aicr")
  })
})
