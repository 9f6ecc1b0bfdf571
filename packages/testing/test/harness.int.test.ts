// The local control plane itself: every later integration and e2e test relies on what this file proves.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, inject, it } from "vitest"
import { parse } from "yaml"
import {
  applyManifests,
  createNamespace,
  createServiceAccountToken,
  DEFAULT_GPU_NODES,
  DEFAULT_NODES,
  eventually,
  expectOk,
  kubeconfigFor,
  kubeRequest,
  type KubeResponse,
  readAuditEvents,
  readVersions,
  startApiServer,
  startControlPlane,
  startRegistry,
} from "../src/harness/index"

interface Cond {
  readonly type: string
  readonly status: string
}
/** A raw API object as kubeRequest returns it. */
type Raw = KubeResponse["body"]

const info = inject("harness")
const get = (path: string, user?: string) => kubeRequest(info, { method: "GET", path, user })
const post = (path: string, body: unknown, user?: string) => kubeRequest(info, { method: "POST", path, body, user })

const pause = (image = "registry.k8s.io/pause:3.10") => ({ containers: [{ name: "c", image }] })
const gpuToleration = { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }

describe("the local control plane", () => {
  it("serves the kube-apiserver version pinned in hack/tools/versions.env", async () => {
    const res = await get("/version")
    expect(res.status).toBe(200)
    expect(res.body.gitVersion).toBe(readVersions().k8s)
    expect(info.versions.k8s).toBe(readVersions().k8s)
  })

  it("writes one admin kubeconfig with a context per static user and admin as current context", () => {
    const kc = parse(readFileSync(info.kubeconfig, "utf8"))
    expect(kc["current-context"]).toBe("admin")
    expect(kc.contexts.map((c: { name: string }) => c.name).sort()).toEqual(Object.keys(info.users).sort())
    expect(Object.keys(info.users)).toEqual(expect.arrayContaining(["admin", "alice", "bob", "carol", "approver", "tenant"]))
    expect(kc.clusters[0].cluster.server).toBe(info.server)
  })

  it("reuses the healthy plane recorded in its state dir instead of starting another", async () => {
    const again = await startControlPlane({ dir: info.dir })
    expect(again.reused).toBe(true)
    expect(again.info.server).toBe(info.server)
    expect(again.info.pids).toEqual(info.pids)
  })
})

describe("kwok fake nodes", () => {
  it("registers 2 system and 4 GPU nodes that become Ready with EKS H100 labels, taints and capacity", async () => {
    const nodes = await eventually(
      async () => {
        const items = (await get("/api/v1/nodes")).body.items as Raw[]
        const ready = items.filter((n) => n.status.conditions?.some((c: Cond) => c.type === "Ready" && c.status === "True"))
        return ready.length === DEFAULT_NODES.length && items
      },
      { what: "6 Ready nodes" },
    )
    const byName = new Map(nodes.map((n) => [n.metadata.name, n]))
    for (const n of nodes) {
      expect(n.metadata.annotations["kwok.x-k8s.io/node"]).toBe("fake")
      expect(n.metadata.labels).toMatchObject({ "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "topology.kubernetes.io/region": "us-west-2" })
      expect(n.metadata.labels["topology.kubernetes.io/zone"]).toMatch(/^us-west-2[ab]$/)
    }
    const gpus = nodes.filter((n) => n.metadata.labels["eks.amazonaws.com/nodegroup"] === "gpu")
    const systems = nodes.filter((n) => n.metadata.labels["eks.amazonaws.com/nodegroup"] === "system")
    expect(gpus.map((n) => n.metadata.name).sort()).toEqual(DEFAULT_GPU_NODES.map((n) => n.name).sort())
    expect(systems).toHaveLength(2)
    for (const n of gpus) {
      expect(n.metadata.labels).toMatchObject({ "node.kubernetes.io/instance-type": "p5.48xlarge", "nvidia.com/gpu.present": "true" })
      expect(n.spec.taints).toContainEqual({ key: "nvidia.com/gpu", effect: "NoSchedule" })
      expect(n.status.capacity).toMatchObject({ "nvidia.com/gpu": "8", cpu: "192", pods: "100" })
      expect(n.status.allocatable["nvidia.com/gpu"]).toBe("8")
    }
    for (const n of systems) {
      expect(n.metadata.labels["node.kubernetes.io/instance-type"]).toBe("m5.2xlarge")
      expect(n.metadata.labels["nvidia.com/gpu.present"]).toBeUndefined()
      expect(n.spec.taints ?? []).not.toContainEqual(expect.objectContaining({ key: "nvidia.com/gpu" }))
      expect(n.status.capacity).toMatchObject({ cpu: "8", memory: "32Gi", pods: "58" })
    }
    expect(byName.get("kwok-gpu-0")!.status.allocatable.cpu).toBe("191450m")
  })

  it("runs a Deployment to Available, a GPU-tolerating DaemonSet to Ready on all 6 nodes, and a Job to Complete", async () => {
    const ns = await createNamespace(info, "workloads")
    const labels = { app: "web" }
    expectOk(
      await post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: { replicas: 3, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: pause() } },
      }),
      "create deployment",
    )
    const dsLabels = { app: "agent" }
    expectOk(
      await post(`/apis/apps/v1/namespaces/${ns}/daemonsets`, {
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: "agent" },
        spec: { selector: { matchLabels: dsLabels }, template: { metadata: { labels: dsLabels }, spec: { ...pause(), tolerations: [gpuToleration] } } },
      }),
      "create daemonset",
    )
    expectOk(
      await post(`/apis/batch/v1/namespaces/${ns}/jobs`, {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "once" },
        spec: { backoffLimit: 0, template: { spec: { ...pause("busybox:1.36"), restartPolicy: "Never" } } },
      }),
      "create job",
    )

    const dep = await eventually(
      async () => {
        const d = (await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`)).body
        return d.status?.conditions?.some((c: Cond) => c.type === "Available" && c.status === "True") && d.status.readyReplicas === 3 && d
      },
      { timeoutMs: 60_000, what: "Deployment Available" },
    )
    expect(dep.status.availableReplicas).toBe(3)

    const ds = await eventually(
      async () => {
        const d = (await get(`/apis/apps/v1/namespaces/${ns}/daemonsets/agent`)).body
        return d.status?.desiredNumberScheduled === 6 && d.status.numberReady === 6 && d
      },
      { timeoutMs: 60_000, what: "DaemonSet ready on 6 nodes" },
    )
    expect(ds.status.numberAvailable).toBe(6)

    const job = await eventually(
      async () => {
        const j = (await get(`/apis/batch/v1/namespaces/${ns}/jobs/once`)).body
        return j.status?.conditions?.some((c: Cond) => c.type === "Complete" && c.status === "True") && j
      },
      { timeoutMs: 60_000, what: "Job Complete" },
    )
    expect(job.status.succeeded).toBe(1)

    // The web pods avoid the tainted GPU nodes; the agent pods land on every node.
    const pods = (await get(`/api/v1/namespaces/${ns}/pods`)).body.items as Raw[]
    const webNodes = pods.filter((p) => p.metadata.labels?.app === "web").map((p) => p.spec.nodeName)
    expect(webNodes.every((n: string) => n.startsWith("kwok-system-"))).toBe(true)
    const agentNodes = new Set(pods.filter((p) => p.metadata.labels?.app === "agent").map((p) => p.spec.nodeName))
    expect(agentNodes.size).toBe(6)
  })
})

describe("authentication and authorization", () => {
  it("refuses a plain user and honours admin impersonation of users and several groups", async () => {
    const denied = await get("/api/v1/namespaces/default/secrets", "alice")
    expect(denied.status).toBe(403)
    expect(denied.body.reason).toBe("Forbidden")
    expect((await get("/api/v1/namespaces/default/secrets", "admin")).status).toBe(200)

    const review = await kubeRequest(info, {
      method: "POST",
      path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
      impersonate: { user: "alice", groups: ["team-a", "viewers"] },
    })
    expect(review.status).toBe(201)
    expect(review.body.status.userInfo.username).toBe("alice")
    expect(review.body.status.userInfo.groups).toEqual(expect.arrayContaining(["team-a", "viewers"]))

    const asAlice = await kubeRequest(info, { method: "GET", path: "/api/v1/namespaces/default/secrets", impersonate: { user: "alice" } })
    expect(asAlice.status).toBe(403)
    // alice may not impersonate anyone.
    const escalate = await kubeRequest(info, { method: "GET", path: "/api/v1/namespaces", user: "alice", impersonate: { user: "admin" } })
    expect(escalate.status).toBe(403)
  })

  it("grants exactly what a RoleBinding for a group allows", async () => {
    const ns = await createNamespace(info, "rbac")
    await applyManifests(info, [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "read-secrets", namespace: ns },
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "approvers", namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-secrets" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "aicr-approvers" }],
      },
    ])
    // A new binding reaches the authorizer's cache a moment after the write (informer-fed): wait for the grant.
    await eventually(async () => (await get(`/api/v1/namespaces/${ns}/secrets`, "approver")).status === 200, {
      timeoutMs: 10_000,
      what: "the RoleBinding to take effect",
    })
    expect((await get(`/api/v1/namespaces/${ns}/secrets`, "tenant")).status).toBe(403)
    expect((await get(`/api/v1/namespaces/default/secrets`, "approver")).status).toBe(403)
  })

  it("issues ServiceAccount tokens through the TokenRequest API that the apiserver accepts", async () => {
    const ns = await createNamespace(info, "sa")
    const token = await createServiceAccountToken(info, ns, "robot")
    const target = { ...info, users: { robot: { token, user: "robot", groups: [] } } }
    const review = await kubeRequest(target, {
      method: "POST",
      path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      user: "robot",
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    })
    expect(review.status).toBe(201)
    expect(review.body.status.userInfo.username).toBe(`system:serviceaccount:${ns}:robot`)
    expect((await kubeRequest(target, { method: "GET", path: `/api/v1/namespaces/${ns}/secrets`, user: "robot" })).status).toBe(403)
  })

  it("writes a kubeconfig per user whose token authenticates as that user", async () => {
    const path = await kubeconfigFor(info, "bob")
    const kc = parse(readFileSync(path, "utf8"))
    expect(kc["current-context"]).toBe("bob")
    expect(kc.users[0].user.token).toBe(info.users.bob!.token)
    expect(kc.clusters[0].cluster["certificate-authority"]).toBe(info.caFile)
  })
})

describe("admission and audit", () => {
  it("enforces a ValidatingAdmissionPolicy once it is effective", async () => {
    const label = `vap-${Math.random().toString(36).slice(2, 8)}`
    const ns = await createNamespace(info, "vap", { [label]: "true" })
    const policy = {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: label },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] }] },
        validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: "team label required" }],
      },
    }
    const binding = {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: label },
      spec: { policyName: label, validationActions: ["Deny"], matchResources: { namespaceSelector: { matchLabels: { [label]: "true" } } } },
    }
    await applyManifests(info, [policy, binding])
    try {
      const cm = (name: string, labels?: Record<string, string>) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels } })
      const denied = await eventually(
        async () => {
          const res = await post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, cm("bad"))
          return res.status === 422 && res
        },
        { timeoutMs: 15_000, what: "policy effective" },
      )
      expect(denied.body.message).toContain("team label required")
      expect((await post(`/api/v1/namespaces/${ns}/configmaps`, cm("good", { team: "a" }))).status).toBe(201)
      // Namespaces without the label are not affected.
      expect((await post(`/api/v1/namespaces/default/configmaps?dryRun=All`, cm("free"))).status).toBe(201)
    } finally {
      await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${label}` })
      await kubeRequest(info, { method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${label}` })
    }
  })

  it("records each write of a named object in the audit log, and no reads", async () => {
    const ns = await createNamespace(info, "audit")
    const name = `cm-${Math.random().toString(36).slice(2, 8)}`
    expect((await post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "1" } })).status).toBe(201)
    expect((await kubeRequest(info, { method: "PATCH", path: `/api/v1/namespaces/${ns}/configmaps/${name}`, body: { data: { a: "2" } } })).status).toBe(200)
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/${name}`)).status).toBe(200)
    const events = await eventually(
      async () => {
        const e = readAuditEvents(info, { namespace: ns, name, resource: "configmaps" })
        return e.length >= 2 && e
      },
      { timeoutMs: 10_000, what: "audit events" },
    )
    expect(events.map((e) => e.verb)).toEqual(["create", "patch"])
    expect(events[0]!.user.username).toBe("admin")
    expect(events[0]!.responseStatus?.code).toBe(201)
    expect(readAuditEvents(info, { verb: "get", name })).toHaveLength(0)
  })

  it("applies CRDs and custom resources server-side without dropping preserve-unknown-fields content", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-manifests-"))
    const group = `h${Math.random().toString(36).slice(2, 8)}.test.aicr.dev`
    writeFileSync(
      join(dir, "01-crd.yaml"),
      [
        "apiVersion: apiextensions.k8s.io/v1",
        "kind: CustomResourceDefinition",
        `metadata: {name: widgets.${group}}`,
        "spec:",
        `  group: ${group}`,
        "  scope: Namespaced",
        "  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}",
        "  versions:",
        "  - name: v1",
        "    served: true",
        "    storage: true",
        "    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}",
      ].join("\n"),
    )
    writeFileSync(
      join(dir, "02-cr.yaml"),
      `apiVersion: ${group}/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec:\n  free: {nested: [1, {deep: true}]}\n`,
    )
    try {
      await applyManifests(info, dir)
      const w = (await get(`/apis/${group}/v1/namespaces/default/widgets/w1`)).body
      expect(w.spec).toEqual({ free: { nested: [1, { deep: true }] } })
      expect(w.metadata.managedFields[0].manager).toBe("aicr-test-harness")
      expect(w.metadata.managedFields[0].operation).toBe("Apply")
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await kubeRequest(info, { method: "DELETE", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}` })
    }
  })
})

describe("OCI registry", () => {
  const extra: { stop(): Promise<void> }[] = []
  afterAll(async () => {
    for (const r of extra) await r.stop()
  })

  it("serves the plane's registry without auth", async () => {
    const res = await fetch(`http://${info.registry}/v2/`)
    expect(res.status).toBe(200)
  })

  it("requires basic auth when started with htpasswd", async () => {
    const reg = await startRegistry({ htpasswd: { user: "pusher", password: "s3cret" } })
    extra.push(reg)
    const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}` })
    expect((await fetch(`http://${reg.address}/v2/`)).status).toBe(401)
    expect((await fetch(`http://${reg.address}/v2/`, { headers: basic("pusher", "wrong") })).status).toBe(401)
    expect((await fetch(`http://${reg.address}/v2/`, { headers: basic("pusher", "s3cret") })).status).toBe(200)
  })
})

describe("a standalone kube-apiserver on the shared etcd", () => {
  it("can be killed and restarted on the same port, and its data survives", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-apiserver-"))
    let api = await startApiServer({ etcd: info.etcd, dir })
    try {
      const name = `survivor-${Math.random().toString(36).slice(2, 8)}`
      const created = await kubeRequest(api, {
        method: "POST",
        path: "/api/v1/namespaces/default/configmaps",
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { k: "v" } },
      })
      expect(created.status).toBe(201)
      const port = api.port
      api.kill("SIGKILL")
      await api.proc.exited
      expect((await kubeRequest(api, { method: "GET", path: "/version" }).catch((e: Error) => e)) instanceof Error).toBe(true)
      api = await startApiServer({ etcd: info.etcd, dir, port })
      expect(api.port).toBe(port)
      const back = await kubeRequest(api, { method: "GET", path: `/api/v1/namespaces/default/configmaps/${name}` })
      expect(back.status).toBe(200)
      expect(back.body.data).toEqual({ k: "v" })
      // The plane's own apiserver sees the same etcd data.
      expect((await get(`/api/v1/namespaces/default/configmaps/${name}`)).status).toBe(200)
    } finally {
      await api.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
