// Deleting a runtime with a rolled-out stack, on the real kube-apiserver (with the admission policies of policies/)
// and a real Argo CD v3.4.2 syncing real charts onto kwok nodes. The planner runs in-process, the step-executor and
// the approval-guard as their shipped bundles; each as its ServiceAccount aicr-<controller> in aicr-system, as in a
// cluster, so admission sees the operator's identities. The test plays the resolver and the registry-mirror (their
// rooms and the content ConfigMap of three demo charts) and the people: admin edits and deletes the runtime,
// `approver` approves. Measured: the finalizer the planner adds (and that admission lets it change nothing else),
// Ready=False/Deleting, the Remove rollout awaiting approval, the Applications and their resources gone in reverse
// order after the approval, the finalizer removed and the runtime gone.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ANNOTATION_EDITED_BY, APPROVER_ROLE, contentConfigMapName, FINALIZER_CLEANUP, LABEL_OUTCOME, sha256 } from "@aicr/api"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  type ArgoCd,
  createNamespace,
  createServiceAccountToken,
  eventually,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  installApprovalPolicies,
  isolatedHelm,
  kubeRequest,
  type KubeTarget,
  packageDemoChart,
  type Proc,
  readAuditEvents,
  removeApprovalPolicies,
  runtimeRepositories,
  runtimeSourceRepos,
  spawnProc,
  startArgoCd,
  writeKubeconfig,
  expectCondition,
} from "@aicr/testing/harness"
import { applyStatusAs, removeRuntime, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { plannerApp } from "../src/app"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const APPS = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications`
const OPERATOR_NS = "aicr-system"
const CONTROLLERS = ["planner", "step-executor", "approval-guard"] as const
const identity = (c: string) => `system:serviceaccount:${OPERATOR_NS}:aicr-${c}`
const RELEASES = ["demo-a", "demo-b", "demo-c"] as const
const suffix = Math.random().toString(36).slice(2, 6)
const namespaceOf = (release: string) => `teardown-${release}-${suffix}`
const work = mkdtempSync(join(tmpdir(), "planner-teardown-it-"))

let ns = ""
let uid = ""
let helm: IsolatedHelm | undefined
let argocd: ArgoCd | undefined
let planner: { readonly stop: () => Promise<void> } | undefined
const procs: Proc[] = []
/** info plus the planner's ServiceAccount token, as user `planner`. */
let asOperator: KubeTarget
const charts: Record<string, { ref: string; digest: string }> = {}

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)
const exists = async (path: string) => (await kubeRequest(info, { method: "GET", path })).status !== 404
const condition = async (type: string): Promise<Cond | undefined> => (await get(RUNTIME)).status?.conditions?.find((c: Cond) => c.type === type)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rollouts = async (): Promise<any[]> => (await get(ROLLOUTS)).items.filter((r: { spec: { runtimeUID: string } }) => r.spec.runtimeUID === uid)
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/u, "Z")

/** Pushes demo chart name@0.1.0 into the runtime registry with the real helm; the digest is the one the registry serves. */
const pushChart = async (h: IsolatedHelm, name: string) => {
  const repo = runtimeRepositories(info)[0]!
  await h.helm("push", await packageDemoChart(h, name, "0.1.0", "1.1.0"), `oci://${repo}`, "--plain-http")
  const res = await fetch(`http://${info.registry}/v2/${repo.slice(info.registry.length + 1)}/${name}/manifests/0.1.0`, {
    method: "HEAD",
    headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
  })
  const digest = res.headers.get("docker-content-digest")
  if (!res.ok || digest === null) throw new Error(`no manifest digest for ${name}:0.1.0 (${res.status})`)
  charts[name] = { ref: `${repo}/${name}:0.1.0`, digest }
}

/** A resolution of the three demo charts (a chain), published as the resolver and the registry-mirror would. */
const publish = async () => {
  const input = sha256(`teardown-${suffix}`)
  const cm = contentConfigMapName(input)
  const componentRefs = RELEASES.map((name, i) => ({
    name,
    namespace: namespaceOf(name),
    chart: name,
    version: "0.1.0",
    source: "https://charts.example",
    dependencyRefs: i > 0 ? [RELEASES[i - 1]] : [],
  }))
  const files = Object.fromEntries(RELEASES.map((name) => [`${name}/values.yaml`, `message: ${name}-teardown\n`]))
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: cm, namespace: ns, labels: { "operator.aicr.run/role": "content" } },
      data: {
        "recipe.json": JSON.stringify({ componentRefs, deploymentOrder: [...RELEASES] }),
        "values.json": JSON.stringify({ apiVersion: "operator.aicr.run/v1alpha1", kind: "Bundle", deployer: "helm", files }),
      },
    },
  ])
  const at = { observedGeneration: (await get(RUNTIME)).metadata.generation, lastTransitionTime: new Date().toISOString(), message: "" }
  await applyStatusAs(info, "aicr-resolver", {
    conditions: [{ type: "Resolved", status: "True", reason: "InputsResolved", ...at }],
    resolution: { inputDigest: input, contentConfigMap: cm, aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" } },
  })
  const prefix = runtimeRepositories(info)[0]!.replace(/\/charts$/u, "")
  await applyStatusAs(info, "aicr-registry-mirror", {
    conditions: [{ type: "Mirrored", status: "True", reason: "ContentMirrored", ...at }],
    mirror: {
      inputDigest: input,
      bundle: `${prefix}/bundles/cluster:input-1@${sha256(input)}`,
      charts: RELEASES.map((release) => ({ release, ref: `${charts[release]!.ref}@${charts[release]!.digest}` })),
    },
  })
}

/** `kubectl aicr approve` as the static user `approver` (group aicr-approvers, bound to the approver role). */
const approve = async (name: string) => {
  const r = await get(`${ROLLOUTS}/${name}`)
  const now = Date.now()
  const approval = {
    approvedBy: "approver",
    groups: ["aicr-approvers"],
    reason: "planner teardown int test",
    approvedAt: iso(now),
    expiresAt: iso(Math.min(now + 3_600_000, Date.parse(r.spec.deadline))),
    toDigest: r.spec.toDigest,
  }
  expectOk(await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, user: "approver", body: { spec: { approval } } }), `approve ${name}`)
}

beforeAll(async () => {
  ns = await createNamespace(info, "aicr-teardown")
  await removeRuntime(info)
  for (const r of (await eventually(() => get(ROLLOUTS), { what: "RuntimeRollouts served" })).items)
    await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  await installApprovalPolicies(info)
  await applyManifests(info, [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "teardown-operator" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: CONTROLLERS.map((c) => ({ kind: "ServiceAccount", name: `aicr-${c}`, namespace: OPERATOR_NS })),
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "teardown-approvers" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: APPROVER_ROLE },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "aicr-approvers" }],
    },
  ])
  const tokens = Object.fromEntries(
    await Promise.all(CONTROLLERS.map(async (c) => [c, await createServiceAccountToken(info, OPERATOR_NS, `aicr-${c}`)] as const)),
  )
  const kubeconfig = (c: string) => writeKubeconfig(join(work, `aicr-${c}.kubeconfig`), info.server, info.caFile, [{ name: `aicr-${c}`, token: tokens[c]! }])
  asOperator = { ...info, users: { ...info.users, planner: { token: tokens.planner!, user: identity("planner"), groups: [] } } }

  helm = await isolatedHelm("aicr-teardown-charts-")
  const [started, executor, guard] = await Promise.all([
    startArgoCd(info),
    buildApp("step-executor", join(work, "step-executor")),
    buildApp("approval-guard", join(work, "approval-guard")),
    (async () => {
      for (const r of RELEASES) await pushChart(helm!, r)
    })(),
  ])
  argocd = started
  await applyManifests(info, [
    // The release namespaces, as the chart's install creates them: Argo CD creates none (SYNC_OPTIONS).
    ...RELEASES.map((r) => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespaceOf(r), labels: { "pod-security.kubernetes.io/enforce": "privileged" } },
    })),
    {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "AppProject",
      metadata: { name: "aicr", namespace: ARGOCD_NAMESPACE },
      spec: {
        sourceRepos: runtimeSourceRepos(info),
        destinations: RELEASES.map((r) => ({ server: "https://kubernetes.default.svc", namespace: namespaceOf(r) })),
        clusterResourceWhitelist: [{ group: "*", kind: "*" }],
      },
    },
    // admin is the runtime's editor (the policy requires the annotation to name the requester).
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "admin" } },
      spec: {
        intent: "training",
        platform: "kubeflow",
        criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
        validation: { deployment: "Disabled" },
      },
    },
  ])
  uid = (await get(RUNTIME)).metadata.uid
  const common = ["--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=warn", "--operator-namespace", ns]
  planner = startController(info, plannerApp, ["--operator-namespace", ns, "--stabilization-window", "0s"], { kubeconfig: kubeconfig("planner") })
  procs.push(
    await spawnProc({
      name: "step-executor",
      bin: process.execPath,
      args: [executor.entry, "--kubeconfig", kubeconfig("step-executor"), ...common, "--step-timeout", "120s", "--sync-retries", "1"],
      logDir: join(info.dir, "logs", "teardown"),
    }),
  )
  procs.push(
    await spawnProc({
      name: "approval-guard",
      bin: process.execPath,
      args: [guard.entry, "--kubeconfig", kubeconfig("approval-guard"), ...common],
      logDir: join(info.dir, "logs", "teardown"),
    }),
  )
}, 300_000)

afterAll(async () => {
  await planner?.stop()
  await Promise.all(procs.map((p) => p.stop()))
  for (const name of RELEASES) await kubeRequest(info, { method: "DELETE", path: `${APPS}/${name}` })
  await argocd?.stop()
  await helm?.cleanup()
  await removeRuntime(info)
  for (const r of (await get(ROLLOUTS)).items) await kubeRequest(info, { method: "DELETE", path: `${ROLLOUTS}/${r.metadata.name}` })
  for (const r of RELEASES) await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${namespaceOf(r)}` })
  for (const n of ["teardown-operator", "teardown-approvers"])
    await kubeRequest(info, { method: "DELETE", path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${n}` })
  await removeApprovalPolicies(info)
  rmSync(work, { recursive: true, force: true })
})

describe("deleting a runtime with a rolled-out stack (real apiserver, admission policies, Argo CD)", () => {
  it("the planner adds its cleanup finalizer as aicr-planner; admission refuses it the spec and anyone else's finalizers", async () => {
    await eventually(async () => (await get(RUNTIME)).metadata.finalizers?.includes(FINALIZER_CLEANUP), { what: `finalizer ${FINALIZER_CLEANUP}` })
    const added = readAuditEvents(info, { resource: "clusterruntimes", verb: "patch", username: identity("planner") }).filter(
      (e) => e.responseStatus?.code === 200,
    )
    expect(added.length).toBeGreaterThanOrEqual(1)
    const refused = async (body: unknown, contentType?: string) => {
      const res = await kubeRequest(asOperator, { method: "PATCH", path: RUNTIME, user: "planner", body, ...(contentType ? { contentType } : {}) })
      expect(res.status, JSON.stringify(res.body?.message)).toBe(403)
      expect(res.body.message).toContain(
        `the operator's identity ${identity("planner")} may change only its finalizer ${FINALIZER_CLEANUP} of ClusterRuntime cluster (and its status)`,
      )
    }
    await refused({ metadata: { annotations: { [ANNOTATION_EDITED_BY]: identity("planner") } }, spec: { paused: true } })
    await refused({ metadata: { finalizers: [FINALIZER_CLEANUP, "example.com/other"] } })
    // Someone else's finalizer: admin may add it; the operator may not remove it.
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: RUNTIME,
        contentType: "application/json-patch+json",
        body: [{ op: "add", path: "/metadata/finalizers/-", value: "example.com/keep" }],
      }),
      "admin adds a finalizer",
    )
    const keep = (await get(RUNTIME)).metadata.finalizers.indexOf("example.com/keep")
    await refused([{ op: "remove", path: `/metadata/finalizers/${keep}` }], "application/json-patch+json")
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: RUNTIME,
        contentType: "application/json-patch+json",
        body: [{ op: "remove", path: `/metadata/finalizers/${keep}` }],
      }),
      "admin removes it",
    )
    expect((await get(RUNTIME)).metadata.finalizers).toEqual([FINALIZER_CLEANUP])
    expect((await get(RUNTIME)).spec.paused).toBeUndefined()
  })

  it("rolls the stack out: one approval installs the three releases through Argo CD", async () => {
    await publish()
    const install = await eventually(async () => (await rollouts()).find((r) => r.spec.kind === "Install"), { what: "the Install rollout", timeoutMs: 30_000 })
    expect(install.spec.steps.map((s: { release: string }) => s.release)).toEqual([...RELEASES])
    await approve(install.metadata.name)
    await eventually(async () => (await get(`${ROLLOUTS}/${install.metadata.name}`)).metadata.labels?.[LABEL_OUTCOME] === "Succeeded", {
      what: "the Install rollout Succeeded",
      timeoutMs: 240_000,
      intervalMs: 500,
    })
    await eventually(async () => (await condition("Ready"))?.status === "True", { what: "Ready=True" })
    for (const r of RELEASES) expect(await exists(`/apis/apps/v1/namespaces/${namespaceOf(r)}/deployments/${r}`)).toBe(true)
  }, 300_000)

  it("deleting it: Ready=False/Deleting and a Remove rollout in reverse order awaiting approval; nothing is removed before that", async () => {
    expectOk(await kubeRequest(info, { method: "DELETE", path: RUNTIME }), "admin deletes the runtime")
    const removal = await eventually(async () => (await rollouts()).find((r) => r.spec.kind === "Remove"), { what: "the Remove rollout", timeoutMs: 30_000 })
    expect(removal.spec.steps).toEqual(
      [...RELEASES].reverse().map((release) => ({ release, namespace: namespaceOf(release), action: "Remove", from: "0.1.0" })),
    )
    expect(removal.spec).toMatchObject({ requiresApproval: true, requestedBy: "admin" })
    expect(removal.spec.approval).toBeUndefined()
    const ready = await eventually(
      async () => {
        const c = await condition("Ready")
        return c?.reason === "Deleting" && c.message.includes("awaiting approval") && c
      },
      { what: "Ready=False/Deleting awaiting approval" },
    )
    expect(ready).toMatchObject({
      status: "False",
      message: `The runtime is being deleted: rollout ${removal.metadata.name} awaiting approval (kubectl aicr approve ${removal.metadata.name} --reason "…")`,
    })
    expectCondition(await condition("Planned"), "Planned", "False", "Deleting")
    // The approval-guard waits for an approver; the executor starts no step; the finalizer holds the runtime.
    await eventually(
      async () =>
        (await get(`${ROLLOUTS}/${removal.metadata.name}`)).status?.conditions?.some((c: Cond) => c.type === "Approved" && c.reason === "AwaitingApproval"),
      { what: "Approved=False/AwaitingApproval" },
    )
    await new Promise((r) => setTimeout(r, 3_000))
    for (const r of RELEASES) expect((await get(`${APPS}/${r}`)).metadata.deletionTimestamp).toBeUndefined()
    const rt = await get(RUNTIME)
    expect(rt.metadata.deletionTimestamp).toBeDefined()
    expect(rt.metadata.finalizers).toEqual([FINALIZER_CLEANUP])
    expect((await rollouts()).filter((r) => !r.metadata.labels?.[LABEL_OUTCOME]).map((r) => r.metadata.name)).toEqual([removal.metadata.name])
  })

  it("after the approval the Applications and their resources go in reverse order, then the finalizer, then the runtime", async () => {
    const removal = (await rollouts()).find((r) => r.spec.kind === "Remove")
    await approve(removal.metadata.name)
    await eventually(async () => !(await exists(RUNTIME)), { what: "the runtime gone", timeoutMs: 240_000, intervalMs: 500 })
    for (const r of RELEASES) {
      expect(await exists(`${APPS}/${r}`)).toBe(false)
      expect(await exists(`/apis/apps/v1/namespaces/${namespaceOf(r)}/deployments/${r}`)).toBe(false)
      expect(await exists(`/api/v1/namespaces/${namespaceOf(r)}/configmaps/${r}-settings`)).toBe(false)
    }
    // The executor deleted each Application only after the one before it was gone (Argo CD pruned it first).
    const deletes = readAuditEvents(info, { resource: "applications", verb: "delete", username: identity("step-executor") }).filter(
      (e) => e.responseStatus?.code === 200,
    )
    expect(deletes.map((e) => e.objectRef?.name)).toEqual([...RELEASES].reverse())
    // Argo CD's last successful write of an Application is the removal of its finalizer: then it is gone. Argo CD can
    // still send a status patch after that, which the API server refuses (404); that is no write and may come after
    // the executor's next delete.
    const gone = (name: string) =>
      readAuditEvents(info, { resource: "applications", name, username: "system:argocd-application-controller" })
        .filter((e) => (e.verb === "patch" || e.verb === "update") && (e.responseStatus?.code ?? 0) < 300)
        .at(-1)!
    for (let i = 1; i < deletes.length; i++) expect(deletes[i]!.stageTimestamp > gone(deletes[i - 1]!.objectRef!.name!).stageTimestamp).toBe(true)
    // The planner removed its finalizer last, as itself; the rollout and the plans stay as the record.
    const finalizerWrites = readAuditEvents(info, { resource: "clusterruntimes", verb: "patch", username: identity("planner") }).filter(
      (e) => e.responseStatus?.code === 200,
    )
    expect(finalizerWrites.at(-1)!.stageTimestamp >= deletes.at(-1)!.stageTimestamp).toBe(true)
    expect((await get(`${ROLLOUTS}/${removal.metadata.name}`)).metadata.labels?.[LABEL_OUTCOME]).toBe("Succeeded")
    expect((await get(`/api/v1/namespaces/${ns}/configmaps?labelSelector=operator.aicr.run%2Frole%3Dplan`)).items).toHaveLength(1)
  }, 300_000)
})
