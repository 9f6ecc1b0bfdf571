// Real Argo CD on the local control plane: an Application syncs a chart pushed with the real helm to the plane's OCI
// registry, its pods land on kwok system nodes, a targetRevision change reports the new revision, deleting it with
// the resources finalizer prunes what it installed, and stopping Argo CD leaves no process behind.
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import {
  addRepositoryCredential,
  ARGOCD_NAMESPACE,
  ARGOCD_PROCS,
  type ArgoCd,
  deleteApplication,
  eventually,
  expectOk,
  getApplication,
  helmApplication,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  packageDemoChart,
  pidAlive,
  readAuditEvents,
  runtimeRepositories,
  type Registry,
  startArgoCd,
  startRegistry,
  waitForApplication,
} from "../src/harness/index"
import { readState } from "../src/harness/plane"

const info = inject("harness")

/** "pid command" of every process whose working directory is dir or below it. */
const processesUnder = (dir: string): string[] =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const cwd = readlinkSync(`/proc/${d}/cwd`)
        return cwd === dir || cwd.startsWith(`${dir}/`) ? [`${d} ${readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " ")}`] : []
      } catch {
        return []
      }
    })
const get = (path: string) => kubeRequest(info, { method: "GET", path })
const apply = (obj: unknown) =>
  kubeRequest(info, {
    method: "PATCH",
    path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications/${(obj as { metadata: { name: string } }).metadata.name}?fieldManager=argocd-test&force=true`,
    body: obj,
    contentType: "application/apply-patch+yaml",
  })

describe("Argo CD on the local control plane", () => {
  let argocd: ArgoCd | undefined
  let helm: IsolatedHelm
  // One of the runtime registry's repositories, which Argo CD is set up to pull from.
  const repo = runtimeRepositories(info)[0]!
  const ns = `demo-${Math.random().toString(36).slice(2, 7)}`

  beforeAll(async () => {
    helm = await isolatedHelm("aicr-argocd-chart-")
    const [started] = await Promise.all([
      startArgoCd(info),
      (async () => {
        for (const [version, appVersion] of [
          ["0.1.0", "1.0.0"],
          ["0.2.0", "1.1.0"],
        ] as const) {
          await helm.helm("push", await packageDemoChart(helm, "demo", version, appVersion), `oci://${repo}`, "--plain-http")
        }
      })(),
    ])
    argocd = started
  })

  afterAll(async () => {
    await argocd?.stop()
    await helm?.cleanup()
  })

  it("runs the three processes, recorded in the plane's state, the controller under its own identity", () => {
    expect(Object.keys(argocd!.info.pids).sort()).toEqual([...ARGOCD_PROCS].sort())
    expect(Object.values(argocd!.info.pids).every((pid) => pidAlive(pid))).toBe(true)
    const recorded = readState(info.dir)!.procs.map((p) => p.name)
    expect(recorded).toEqual(expect.arrayContaining([...ARGOCD_PROCS]))
    expect(argocd!.info.controllerUser).toBe("system:argocd-application-controller")
  })

  it("syncs a chart from the local OCI registry to Synced/Healthy with its pods on kwok system nodes", async () => {
    expectOk(
      await apply(
        helmApplication({
          name: "demo",
          repoURL: repo,
          chart: "demo",
          targetRevision: "0.1.0",
          destinationNamespace: ns,
          values: { replicas: 2, message: "set-by-argocd" },
        }),
      ),
      "create Application demo",
    )
    const app = await waitForApplication(info, "demo", "0.1.0")
    expect(app.status?.sync?.revision).toBe("0.1.0")
    expect(app.status?.operationState?.syncResult?.revision).toBe("0.1.0")

    const dep = expectOk(await get(`/apis/apps/v1/namespaces/${ns}/deployments/demo`), "get Deployment")
    expect(dep.spec.template.spec.containers[0].image).toBe("registry.example/demo:1.0.0")
    expect(dep.spec.template.spec.containers[0].env).toEqual([{ name: "MESSAGE", value: "set-by-argocd" }])
    expect(dep.status.availableReplicas).toBe(2)
    const cm = expectOk(await get(`/api/v1/namespaces/${ns}/configmaps/demo-settings`), "get ConfigMap")
    expect(cm.data).toEqual({ version: "0.1.0" })

    const pods = expectOk(await get(`/api/v1/namespaces/${ns}/pods?labelSelector=app.kubernetes.io%2Finstance%3Ddemo`), "list pods").items
    expect(pods).toHaveLength(2)
    for (const pod of pods) {
      expect(pod.spec.nodeName).toMatch(/^kwok-system-\d$/)
      expect(pod.status.phase).toBe("Running")
    }
    // The writes to the cluster are the controller's own, under its identity.
    expect(readAuditEvents(info, { verb: "create", resource: "deployments", namespace: ns, name: "demo" }).map((e) => e.user.username)).toEqual([
      "system:argocd-application-controller",
    ])
  })

  it("reports the new revision after a targetRevision change, with the full readiness predicate", async () => {
    const patch = await kubeRequest(info, {
      method: "PATCH",
      path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications/demo`,
      body: { spec: { source: { targetRevision: "0.2.0" } } },
    })
    expectOk(patch, "patch targetRevision")
    const app = await waitForApplication(info, "demo", "0.2.0")
    expect(app.status?.sync?.comparedTo?.source).toEqual(app.spec?.source)
    expect(app.status?.operationState?.syncResult?.revision).toBe("0.2.0")
    const history = (app.status as { history?: { revision: string }[] }).history ?? []
    expect(history.map((h) => h.revision)).toEqual(expect.arrayContaining(["0.1.0", "0.2.0"]))
    expect(history.at(-1)?.revision).toBe("0.2.0")

    const dep = expectOk(await get(`/apis/apps/v1/namespaces/${ns}/deployments/demo`), "get Deployment")
    expect(dep.spec.template.spec.containers[0].image).toBe("registry.example/demo:1.1.0")
    expect(dep.status.updatedReplicas).toBe(2)
    const cm = expectOk(await get(`/api/v1/namespaces/${ns}/configmaps/demo-settings`), "get ConfigMap")
    expect(cm.data).toEqual({ version: "0.2.0" })
  })

  it("prunes what it installed when the Application is deleted with the resources finalizer", async () => {
    expect((await getApplication(info, "demo")).metadata).toMatchObject({ finalizers: ["resources-finalizer.argocd.argoproj.io"] })
    await deleteApplication(info, "demo")
    expect((await get(`/apis/apps/v1/namespaces/${ns}/deployments/demo`)).status).toBe(404)
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/demo-settings`)).status).toBe(404)
    await eventually(async () => (await get(`/api/v1/namespaces/${ns}/pods`)).body.items.length === 0, { what: "the chart's pods gone" })
  })

  it("pulls with the credentials of an added repository credential from a registry with basic auth", async () => {
    let authed: Registry | undefined
    try {
      authed = await startRegistry({ dir: join(helm.work, "authed"), name: "registry-authed", htpasswd: { user: "puller", password: "s3cret-pw" } })
      await helm.helm("registry", "login", authed.address, "--username", "puller", "--password", "s3cret-pw", "--plain-http")
      await helm.helm("push", join(helm.work, "pkgs", "demo-0.1.0.tgz"), `oci://${authed.address}/charts`, "--plain-http")
      const authedNs = `${ns}-authed`
      const url = `${authed.address}/charts`
      // Without a credential for it, the registry refuses the pull and the Application says so.
      await addRepositoryCredential(info, { name: "authed-registry", url, plainHttp: true })
      expectOk(
        await apply(helmApplication({ name: "demo-authed", repoURL: url, chart: "demo", targetRevision: "0.1.0", destinationNamespace: authedNs })),
        "create Application demo-authed",
      )
      const refused = await eventually(async () => (await getApplication(info, "demo-authed")).status?.conditions?.find((c) => c.type === "ComparisonError"), {
        what: "ComparisonError on demo-authed",
      })
      expect(refused.message).toMatch(/helm pull oci:\/\/.*basic credential not found/)
      await addRepositoryCredential(info, { name: "authed-registry", url, username: "puller", password: "s3cret-pw", plainHttp: true })
      // A hard refresh retries at once instead of at the next resync.
      expectOk(
        await kubeRequest(info, {
          method: "PATCH",
          path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications/demo-authed`,
          body: { metadata: { annotations: { "argocd.argoproj.io/refresh": "hard" } } },
        }),
        "request a hard refresh",
      )
      await waitForApplication(info, "demo-authed", "0.1.0")
      expect((await get(`/apis/apps/v1/namespaces/${authedNs}/deployments/demo-authed`)).status).toBe(200)
      await deleteApplication(info, "demo-authed")
    } finally {
      await authed?.stop()
    }
  })

  it("leaves no Argo CD or redis process behind once stopped", async () => {
    const { pids } = argocd!.info
    await argocd!.stop()
    argocd = undefined
    expect(Object.values(pids).filter((pid) => pidAlive(pid))).toEqual([])
    // Nor any child (helm runs in Argo CD's temp dir): no process works anywhere under <dir>/argocd.
    expect(processesUnder(join(info.dir, "argocd"))).toEqual([])
    expect(readState(info.dir)!.procs.filter((p) => (ARGOCD_PROCS as readonly string[]).includes(p.name))).toEqual([])
  })
})
