// Ready's engine reasons on the real kube-apiserver: the planner (runApp) and the step-executor (its shipped bundle,
// as a process) run; nothing else. Without Argo CD's Application CRD the executor's EngineAvailable is
// False/EngineMissing and the runtime's Ready says so; once the CRDs are installed the executor's informers list them
// (watched once they appear, no restart) and Ready clears. Run as an identity that may not read Argo CD's objects, the
// executor reports Unauthorized, which Ready carries; granted the read, it clears without a restart.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ANNOTATION_EDITED_BY } from "@aicr/api"
import {
  applyManifests,
  createNamespace,
  eventually,
  expectCondition,
  expectOk,
  type HarnessInfo,
  installArgoCdObjects,
  kubeconfigFor,
  kubeRequest,
  type Proc,
  spawnProc,
  untilCondition,
} from "@aicr/testing/harness"
import { removeRuntime, startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { plannerApp } from "../src/app"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const APPLICATION_CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/applications.argoproj.io"
const CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
const CLUSTER_ROLE_BINDINGS = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
const suffix = Math.random().toString(36).slice(2, 6)
/** The executor's identity in the Unauthorized case: everything it needs except Argo CD's objects, until granted. */
const USER = "carol"
const ROLES = { operator: `engine-reasons-operator-${suffix}`, engine: `engine-reasons-argocd-${suffix}` }
let ns: string
let work: string
let bundle: string
let planner: { readonly stop: () => Promise<void> } | undefined
let executor: Proc | undefined

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const runtime = async (): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get the runtime")

const startExecutor = async (kubeconfig: string, name: string) =>
  spawnProc({
    name,
    bin: process.execPath,
    args: [
      bundle,
      "--kubeconfig",
      kubeconfig,
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
      "--log-level=info",
      "--operator-namespace",
      ns,
      "--engine-project",
      "default",
    ],
    logDir: join(info.dir, "logs", "engine-reasons"),
  })

const grant = (role: string, rules: unknown[]) => [
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: role }, rules },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: role },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: USER }],
  },
]

/** Argo CD's Application CRD gone, with every Application (their finalizers dropped: no Argo CD runs here). */
const removeApplicationCrd = async () => {
  const apps = await kubeRequest(info, { method: "GET", path: "/apis/argoproj.io/v1alpha1/applications" })
  for (const a of (apps.status === 200 ? apps.body.items : []) as Array<{ metadata: { name: string; namespace: string } }>)
    await kubeRequest(info, {
      method: "PATCH",
      path: `/apis/argoproj.io/v1alpha1/namespaces/${a.metadata.namespace}/applications/${a.metadata.name}`,
      body: { metadata: { finalizers: null } },
      contentType: "application/merge-patch+json",
    })
  await kubeRequest(info, { method: "DELETE", path: APPLICATION_CRD })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: APPLICATION_CRD })).status === 404, {
    what: "the Application CRD deleted",
    timeoutMs: 60_000,
  })
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "planner-engine-reasons-"))
  ns = await createNamespace(info, "aicr-engine-reasons")
  await removeRuntime(info)
  await removeApplicationCrd()
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: { intent: "training", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" }, validation: { deployment: "Disabled" } },
    },
  ])
  planner = startController(info, plannerApp, ["--operator-namespace", ns, "--engine-project", "default"])
  bundle = (await buildApp("step-executor", join(work, "step-executor"))).entry
}, 180_000)

afterAll(async () => {
  await planner?.stop()
  await executor?.stop()
  await removeRuntime(info)
  for (const role of Object.values(ROLES)) {
    await kubeRequest(info, { method: "DELETE", path: `${CLUSTER_ROLE_BINDINGS}/${role}` })
    await kubeRequest(info, { method: "DELETE", path: `${CLUSTER_ROLES}/${role}` })
  }
  // Leave Argo CD's objects installed, as the files that need them expect.
  await installArgoCdObjects(info)
  await rm(work, { recursive: true, force: true })
})

describe("Ready carries the step-executor's engine reasons and clears when the engine is back", () => {
  it("Argo CD's CRDs absent: EngineAvailable and Ready False/EngineMissing, saying what to install; installed, both clear without a restart", async () => {
    executor = await startExecutor(info.kubeconfig, "step-executor-admin")
    const engine = await untilCondition(runtime, "EngineAvailable", "False", "EngineMissing")
    expect(engine.message).toBe("Argo CD's CRD applications.argoproj.io is not installed; install Argo CD v3.4 in namespace argocd before the operator")
    const ready = await untilCondition(runtime, "Ready", "False", "EngineMissing")
    expect(ready.message).toBe(engine.message)
    expectCondition(await runtime(), "Stalled", "True", "EngineMissing")

    await installArgoCdObjects(info)
    await untilCondition(runtime, "EngineAvailable", "True", "EngineReady")
    const cleared = await untilCondition(runtime, "Ready", "False", "NoActivePlan")
    expect(cleared.message).toMatch(/^Nothing is rolled out yet/u)
    expectCondition(await runtime(), "Stalled", "False", "NotStalled")
    await executor.stop()
    executor = undefined
  })

  it("the executor may not read Argo CD's objects: EngineAvailable and Ready False/Unauthorized naming the refusal; granted, both clear without a restart", async () => {
    await applyManifests(
      info,
      grant(ROLES.operator, [
        { apiGroups: ["", "operator.aicr.run", "apiextensions.k8s.io", "events.k8s.io", "coordination.k8s.io", "batch"], resources: ["*"], verbs: ["*"] },
      ]),
    )
    executor = await startExecutor(await kubeconfigFor(info, USER), "step-executor-carol")
    const engine = await untilCondition(runtime, "EngineAvailable", "False", "Unauthorized")
    expect(engine.message).toMatch(
      /^The operator may not read Argo CD's objects: .*"carol" cannot list resource "(applications|appprojects)" in API group "argoproj\.io"/u,
    )
    const ready = await untilCondition(runtime, "Ready", "False", "Unauthorized")
    expect(ready.message).toBe(engine.message)

    await applyManifests(
      info,
      grant(ROLES.engine, [{ apiGroups: ["argoproj.io"], resources: ["applications", "appprojects"], verbs: ["get", "list", "watch"] }]),
    )
    await untilCondition(runtime, "EngineAvailable", "True", "EngineReady", { timeoutMs: 120_000 })
    await untilCondition(runtime, "Ready", "False", "NoActivePlan")
  })
})
