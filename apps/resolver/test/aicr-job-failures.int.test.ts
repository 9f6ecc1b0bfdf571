// The AICR Job runbook's reasons from real causes on the local control plane (the real kube-apiserver, kwok nodes, the
// process kubelet running the real AICR binary as the snapshot agent Job the resolver creates):
// - AICRTimeout: the pinned AICR image does not exist, the pod stays in ErrImagePull and the Job passes its deadline;
// - AICRUnauthorized: the agent's identity lacks the right to write its output ConfigMap (its Role without `patch`),
//   AICR exits 8 with the API server's 403 inside its INTERNAL wrap;
// - AICRInternal: an admission policy refuses AICR's output ConfigMap, AICR exits 8 with INTERNAL and the policy's words;
// - InvalidPlacement: an admitted toleration without an effect, which AICR's key:effect flags cannot express.
// Each clears once its cause is gone.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { jobRbac } from "@aicr/aicr"
import {
  addNode,
  applyManifests,
  createNamespace,
  deleteClusterScoped,
  eventually,
  expectCondition,
  gpuNode,
  h100Host,
  type HarnessInfo,
  kubeRequest,
  readVersions,
  type Registry,
  removeNode,
  setHostProfile,
  startRegistry,
  untilCondition,
} from "@aicr/testing/harness"
import { startController } from "@aicr/testing/world"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { resolverApp } from "../src/app"
import { runtimeFixture, specFor } from "./runtime-fixture"

const info: HarnessInfo = inject("harness")
/** The AICR Jobs' RBAC this file applies; its cluster-scoped part (the fixed-name `aicr-node-reader`) is deleted after it. */
let rbac: ReadonlyArray<Record<string, unknown>> = []
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const { aicr: CURRENT } = readVersions()
const NAMESPACES = ["cert-manager", "gpu-operator", "kai-scheduler", "kube-system", "kubeflow", "monitoring", "nvidia-dra-driver", "nvsentinel", "skyhook"]
const work = mkdtempSync(join(tmpdir(), "resolver-fail-int-"))
const suffix = Math.random().toString(36).slice(2, 6)
/** Our own GPU node: each driver change is a new snapshot key, so a new snapshot Job. */
const NODE = `fail-gpu-${suffix}`
const GROUP = `fail-gpu-${suffix}`
const POLICY = `aicr-fail-${suffix}`
let registry: Registry
let ns: string
let resolver: { readonly stop: () => Promise<void> } | undefined

const start = (extra: ReadonlyArray<string> = []) => {
  resolver = startController(info, resolverApp(), [
    "--aicr-version",
    CURRENT,
    "--registry",
    `oci://${registry.address}/aicr/fail`,
    "--operator-namespace",
    ns,
    "--component-namespaces",
    NAMESPACES.join(","),
    "--allow-unsupported-aicr=true",
    ...extra,
  ])
}
const stop = async () => {
  await resolver?.stop()
  resolver = undefined
}

const SPEC = specFor(GROUP)
const { getRuntime, current, setSpec } = runtimeFixture(info)
/** A new driver on our node: a new snapshot key, so the resolver starts a new snapshot Job. */
let driver = 0
const newSnapshot = () => setHostProfile(info, NODE, h100Host({ driver: `580.105.${10 + ++driver}`, cuda: "13.0" }))
const agentRole = (verbs: ReadonlyArray<string>) =>
  applyManifests(info, [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "aicr-agent", namespace: ns },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs }],
    },
  ])
const AGENT = () => `system:serviceaccount:${ns}:aicr-agent`
/** A dry-run ConfigMap the policy below also refuses: it shows when the API server enforces the policy. */
const probe = () =>
  kubeRequest(info, {
    method: "POST",
    path: `/api/v1/namespaces/${ns}/configmaps?dryRun=All`,
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${POLICY}-probe` } },
  })

beforeAll(async () => {
  registry = await startRegistry({ name: "resolver-fail-int", dir: mkdtempSync(join(work, "registry-")) })
  ns = await createNamespace(info, "aicr-fail")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  await applyManifests(info, [...(rbac = jobRbac({ namespace: ns, discoveryNamespace: ns, serviceAccount: "aicr-jobs", agentServiceAccount: "aicr-agent" }))])
  const n = gpuNode(80)
  await addNode(info, { ...n, name: NODE, labels: { ...n.labels, "kubernetes.io/hostname": NODE, "eks.amazonaws.com/nodegroup": GROUP } }, { wait: true })
  await newSnapshot()
  await applyManifests(info, [{ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: SPEC }])
}, 120_000)

afterAll(async () => {
  await stop()
  await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${POLICY}` })
  await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${POLICY}` })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await removeNode(info, NODE).catch(() => undefined)
  await registry?.stop()
  rmSync(work, { recursive: true, force: true })
  await deleteClusterScoped(info, rbac)
})

describe("AICR Job failures from real causes", () => {
  it("AICRTimeout: an AICR image that cannot be pulled keeps the snapshot pod in ErrImagePull until the Job's deadline", async () => {
    start(["--aicr-image", "ghcr.io/nvidia/aicr:v0.9.0", "--job-deadline", "30"])
    const c = await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "False", "AICRTimeout", {
      timeoutMs: 180_000,
      intervalMs: 500,
    })
    expect(c.message).toMatch(
      new RegExp(
        `^Snapshot Job ${ns}/aicr-snapshot-\\w+ on node ${NODE} ran past its deadline(; the pod was (ErrImagePull|ImagePullBackOff): image ghcr\\.io/nvidia/aicr:v0\\.9\\.0: no local build of AICR v0\\.9\\.0 \\(\\S+\\): add it to hack/tools/versions\\.env and run 'bash hack/build-tools\\.sh aicr')?$`,
      ),
    )
    expect(current(await getRuntime(), "Resolved")).toMatchObject({ status: "False", reason: "AICRTimeout", message: c.message })
    await stop()
    // The pinned image: a new resolver, the same snapshot key under another image pin, resolves.
    start()
    await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "True", "NodeGroupsDiscovered", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
  }, 420_000)

  it("AICRUnauthorized: the agent's identity may not write its output ConfigMap; the API server's 403 names the missing right", async () => {
    await agentRole(["get", "create", "update"])
    await newSnapshot()
    const c = await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "False", "AICRUnauthorized", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
    expect(c.message).toMatch(
      new RegExp(
        `^Snapshot Job ${ns}/aicr-snapshot-\\w+ on node ${NODE} exited 8: \\[INTERNAL\\] .*configmaps "aicr-snapshot-\\w+" is forbidden: User "${AGENT()}" cannot patch resource "configmaps" in API group "" in the namespace "${ns}"`,
      ),
    )
    expectCondition(current(await getRuntime(), "Resolved"), "Resolved", "False", "AICRUnauthorized")
    // The right given back (the chart's Role), the next snapshot goes through.
    await agentRole(["get", "create", "update", "patch"])
    await newSnapshot()
    await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "True", "NodeGroupsDiscovered", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
  }, 420_000)

  it("AICRInternal: an admission policy refuses AICR's output ConfigMap; AICR's INTERNAL failure carries the policy's words", async () => {
    await applyManifests(info, [
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicy",
        metadata: { name: POLICY },
        spec: {
          failurePolicy: "Fail",
          matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] }] },
          // The agent's writes, and a probe the test writes to see the policy in force.
          matchConditions: [{ name: "agent", expression: `request.userInfo.username == "${AGENT()}" || object.metadata.name == "${POLICY}-probe"` }],
          validations: [{ expression: "false", message: "snapshot output is frozen during the maintenance window" }],
        },
      },
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicyBinding",
        metadata: { name: POLICY },
        spec: {
          policyName: POLICY,
          validationActions: ["Deny"],
          matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } },
        },
      },
    ])
    // A binding takes effect once the API server's policy cache has it: wait for the agent's write to be refused.
    await eventually(async () => ((await probe()).status >= 400 && JSON.stringify((await probe()).body).includes(POLICY) ? true : undefined), {
      timeoutMs: 30_000,
      what: "the policy in force",
    })
    await newSnapshot()
    const c = await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "False", "AICRInternal", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
    expect(c.message).toMatch(
      new RegExp(
        `^Snapshot Job ${ns}/aicr-snapshot-\\w+ on node ${NODE} exited 8: \\[INTERNAL\\] .*ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: snapshot output is frozen during the maintenance window`,
      ),
    )
    expectCondition(current(await getRuntime(), "Resolved"), "Resolved", "False", "AICRInternal")
    await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${POLICY}` })
    await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${POLICY}` })
    await eventually(async () => ((await probe()).status === 201 ? true : undefined), { timeoutMs: 30_000, what: "the policy gone" })
    await newSnapshot()
    await untilCondition(async () => current(await getRuntime(), "Discovered"), "Discovered", "True", "NodeGroupsDiscovered", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
  }, 420_000)

  it("InvalidPlacement: an admitted toleration without an effect, which AICR's bundle flags cannot express, names the field", async () => {
    const tolerations = [{ key: "nvidia.com/gpu", operator: "Exists" }]
    await setSpec({ ...SPEC, placement: { ...SPEC.placement, accelerated: { ...SPEC.placement.accelerated, tolerations } } })
    const c = await untilCondition(async () => current(await getRuntime(), "Resolved"), "Resolved", "False", "InvalidPlacement", {
      timeoutMs: 240_000,
      intervalMs: 500,
    })
    expect(c.message).toBe(
      "AICR takes tolerations as key=value:effect (operator Equal) or key:effect (operator Exists); spec.placement.accelerated.tolerations[0] lack a key, an effect or the value of an Equal",
    )
    await setSpec(SPEC)
    await untilCondition(async () => current(await getRuntime(), "Resolved"), "Resolved", "True", "InputsResolved", { timeoutMs: 300_000, intervalMs: 500 })
  }, 400_000)
})
