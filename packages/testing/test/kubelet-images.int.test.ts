// The process kubelet runs the operator's own image for real: a Deployment of the approval-guard from the
// `aicr-operator` image (built without a daemon, pushed to the local registry, pinned by digest) under its own
// ServiceAccount rolls out as `kubectl rollout status` reports it, with a pod IP of its own and the readiness probe on
// its /readyz deciding Ready; the controller talks to the API server in-cluster style (KUBERNETES_SERVICE_HOST/PORT,
// the projected token, the CA), which the audit log and its Lease show. Probes decide: a readiness probe that fails
// keeps the rollout from completing, a liveness probe that fails restarts the container.
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { buildImage, operatorImage, pushImage } from "@aicr/image"
import { OciClient } from "@aicr/oras"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"
import { applyManifests, createNamespace, eventually, expectOk, kubeRequest, readAuditEvents, toolPath } from "../src/harness/index"

const run = promisify(execFile)
const info = inject("harness")
const client = new OciClient()
let image: string
let ns: string

const kubectl = (...args: string[]) => run(toolPath("kubectl"), ["--kubeconfig", info.kubeconfig, ...args], { maxBuffer: 16 << 20 })

const deployment = (name: string, overrides: { readinessPath?: string; livenessPort?: number } = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: ns },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        serviceAccountName: "aicr-approval-guard",
        securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "controller",
            image,
            args: [
              "approval-guard",
              "--operator-namespace",
              ns,
              "--leader-election-namespace",
              ns,
              "--leader-election-id",
              name,
              "--health-probe-bind-address",
              "$(POD_IP):8081",
              "--metrics-bind-address",
              "$(POD_IP):8080",
            ],
            env: [
              { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
              { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            ],
            ports: [
              { name: "health", containerPort: 8081 },
              { name: "metrics", containerPort: 8080 },
            ],
            // Liveness waits for the start (a loaded machine takes seconds to load a bundle), as a chart would say.
            startupProbe: { httpGet: { path: "/healthz", port: "health" }, periodSeconds: 1, failureThreshold: 120 },
            readinessProbe: { httpGet: { path: overrides.readinessPath ?? "/readyz", port: "health" }, periodSeconds: 1 },
            livenessProbe: { httpGet: { path: "/healthz", port: overrides.livenessPort ?? 8081 }, periodSeconds: 1, failureThreshold: 3 },
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
          },
        ],
      },
    },
  },
})

beforeAll(async () => {
  ns = await createNamespace(info, "img")
  const bundle = await buildApp("approval-guard", join(info.dir, "image-test", "approval-guard"))
  const built = await buildImage(
    operatorImage({ "approval-guard": bundle.outdir }, { version: "0.0.0-test" }, [process.arch === "arm64" ? "arm64" : "amd64"]),
    {
      outDir: join(info.dir, "image-test", "images"),
    },
  )
  image = (await pushImage(client, built, `${info.registry}/images-test/aicr-operator`, "v0.0.0-test")).replace(/:v0\.0\.0-test@/, "@")
  // The approval-guard's own identity: what it reads and writes, and nothing else.
  await applyManifests(info, [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "aicr-approval-guard", namespace: ns } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `${ns}-approval-guard` },
      rules: [
        { apiGroups: ["operator.aicr.run"], resources: ["runtimerollouts"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["operator.aicr.run"], resources: ["runtimerollouts/status"], verbs: ["get", "patch", "update"] },
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterrolebindings"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
        { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${ns}-approval-guard` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${ns}-approval-guard` },
      subjects: [{ kind: "ServiceAccount", name: "aicr-approval-guard", namespace: ns }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "approval-guard-leases", namespace: ns },
      rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update", "patch"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "approval-guard-leases", namespace: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "approval-guard-leases" },
      subjects: [{ kind: "ServiceAccount", name: "aicr-approval-guard", namespace: ns }],
    },
  ])
}, 600_000)

afterAll(async () => {
  await client.close()
  // The approval-guard pods of this file would otherwise keep running on the shared plane for the rest of the tier and
  // reconcile every RuntimeRollout the later files create (seen: crds.int's rollout "cols" re-marked Approved=False).
  if (ns === undefined) return
  await kubectl("delete", "namespace", ns, "--wait=true", "--timeout=240s")
  await kubectl("delete", "clusterrolebinding,clusterrole", `${ns}-approval-guard`, "--ignore-not-found")
}, 300_000)

const podsOf = async (app: string) =>
  expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/pods?labelSelector=app%3D${app}` }), "list pods").items as {
    metadata: { name: string }
    status: {
      podIP?: string
      conditions?: { type: string; status: string }[]
      containerStatuses?: { ready: boolean; restartCount: number; imageID: string; lastState?: { terminated?: { exitCode: number } } }[]
    }
  }[]

describe("process kubelet: the operator's image, in-cluster", () => {
  it("a controller Deployment from its image rolls out Ready under its own ServiceAccount and talks to the API server in-cluster style", async () => {
    await applyManifests(info, [deployment("guard")])
    const { stdout } = await kubectl("-n", ns, "rollout", "status", "deployment/guard", "--timeout=180s")
    expect(stdout).toContain('deployment "guard" successfully rolled out')
    const [pod] = await podsOf("guard")
    expect(pod!.status.podIP).toMatch(/^127\.(?!0\.0\.1$)\d+\.\d+\.\d+$/)
    expect(pod!.status.containerStatuses![0]).toMatchObject({ ready: true, restartCount: 0, imageID: expect.stringContaining(`@${image.split("@")[1]}`) })
    // Its /readyz answers on the pod IP (the probe's address), as a kubelet's probe reaches it.
    const res = await fetch(`http://${pod!.status.podIP}:8081/readyz`)
    expect(res.status).toBe(200)
    // In-cluster: the Lease is held by this pod, and the API server saw the ServiceAccount's own requests.
    const lease = expectOk(await kubeRequest(info, { method: "GET", path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/guard` }), "lease")
    expect(lease.spec.holderIdentity).toMatch(new RegExp(`^${pod!.metadata.name}_`))
    const writes = await eventually(
      async () => {
        const e = readAuditEvents(info, { username: `system:serviceaccount:${ns}:aicr-approval-guard`, resource: "leases", namespace: ns })
        return e.length > 0 ? e : undefined
      },
      { timeoutMs: 30_000, what: "the ServiceAccount's Lease writes in the audit log" },
    )
    expect(writes.length).toBeGreaterThan(0)
  })

  it("a failing readiness probe keeps the rollout from completing", async () => {
    await applyManifests(info, [deployment("unready", { readinessPath: "/no-such-check" })])
    await eventually(async () => (await podsOf("unready"))[0]?.status.containerStatuses?.[0], { timeoutMs: 120_000, what: "the unready pod's container" })
    await expect(kubectl("-n", ns, "rollout", "status", "deployment/unready", "--timeout=15s")).rejects.toThrow(
      /exceeded its progress deadline|timed out waiting/,
    )
    const [pod] = await podsOf("unready")
    expect(pod!.status.conditions?.find((c) => c.type === "Ready")?.status).toBe("False")
    expect(pod!.status.containerStatuses![0]!.ready).toBe(false)
  })

  it("a failing liveness probe restarts the container", async () => {
    await applyManifests(info, [deployment("dying", { livenessPort: 1 })])
    const pod = await eventually(
      async () => {
        const [p] = await podsOf("dying")
        return (p?.status.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? p : undefined
      },
      { timeoutMs: 120_000, what: "a restart after the liveness probe failed" },
    )
    expect(pod.status.containerStatuses![0]!.lastState?.terminated).toBeDefined()
  })
})
