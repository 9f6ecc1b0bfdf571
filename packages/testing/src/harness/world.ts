// What tests of the step-executor and planner build around them, as the other controllers and people would: charts pushed with
// the real helm into the runtime registry, the AppProject the chart creates, plan and content ConfigMaps as the
// planner writes them, rollouts with their approval (and `Approved` as the approval-guard reports it), outcome labels
// as the planner sets them, and a recorder of every Application and Deployment watch event.
import { writeFileSync } from "node:fs"
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  ArgoCD,
  ClusterRuntimeKind,
  contentConfigMapName,
  desiredStateDigest,
  encodePlan,
  type KubeObject,
  LABEL_OUTCOME,
  LABEL_ROLE,
  type Plan,
  planConfigMapName,
  PLAN_DATA_KEY,
  type PlanRelease,
  type ResourceKind,
  ROLE_CONTENT,
  ROLE_PLAN,
  type RolloutStep,
  RuntimeRolloutKind,
  sha256,
  SINGLETON_NAME,
} from "@aicr/api"
import { toConditionTime } from "@aicr/conditions"
import { collectionPath, makeKube, objectPath } from "@aicr/kube"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  eventually,
  expectOk,
  type HarnessInfo,
  type IsolatedHelm,
  kubeRequest,
  packageDemoChart,
  runtimeRepositories,
  runtimeSourceRepos,
} from "./index"
import { type AppSpec, parseConfig, runApp, type RunOptions } from "@aicr/runtime"
import { Effect, Fiber } from "effect"
import { request } from "undici"

export const ROLLOUTS = collectionPath(RuntimeRolloutKind)
export const RUNTIME = objectPath(ClusterRuntimeKind, SINGLETON_NAME)
export const APPS = collectionPath(ArgoCD.Application, ARGOCD_NAMESPACE)

/**
 * Deletes the ClusterRuntime `cluster` and waits until it is gone. The planner's cleanup finalizer is taken off first
 * (the stuck-finalizer runbook): a test that stopped its planner would otherwise leave the runtime Deleting forever.
 */
export const removeRuntime = async (info: HarnessInfo): Promise<void> => {
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no runtime left" })
}

/** What `startController` takes besides the app's flags: `runApp`'s test hooks, and the kubeconfig to run on. */
export interface StartOptions extends RunOptions {
  /** The kubeconfig the controller runs on, e.g. its ServiceAccount's (default `info.kubeconfig`, the admin's). */
  readonly kubeconfig?: string | undefined
}

/** The runtime flags of a controller run on the plane from outside it: no leader election, metrics and health servers off, warnings only. */
export const controllerRunFlags = (kubeconfig: string): ReadonlyArray<string> => [
  "--kubeconfig",
  kubeconfig,
  "--leader-elect=false",
  "--metrics-bind-address=0",
  "--health-probe-bind-address=0",
  "--log-level=warn",
]

/**
 * A whole controller run in this process against the plane, as the int tests run one (`controllerRunFlags`); `args`
 * are the app's own flags, `options` another kubeconfig and `runApp`'s test hooks. `stop` interrupts it.
 */
export const startController = <E>(
  info: HarnessInfo,
  app: AppSpec<E>,
  args: ReadonlyArray<string>,
  options: StartOptions = {},
): { readonly stop: () => Promise<void> } => {
  const { kubeconfig = info.kubeconfig, ...run } = options
  const config = parseConfig(app.name, [...controllerRunFlags(kubeconfig), ...args], {})
  const fiber = Effect.runFork(runApp(app, config, run))
  return { stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined) }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const get = async (info: HarnessInfo, path: string): Promise<any> => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)

export interface Chart {
  readonly name: string
  readonly version: string
  /** `host/aicr/cluster/charts/<name>:<version>` */
  readonly ref: string
  readonly digest: string
}

/** The manifest digest the registry serves for a tag (what the mirror records). */
const manifestDigest = async (registry: string, repo: string, tag: string): Promise<string> => {
  const res = await request(`http://${registry}/v2/${repo}/manifests/${tag}`, {
    method: "HEAD",
    headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
  })
  const d = res.headers["docker-content-digest"]
  if (res.statusCode !== 200 || typeof d !== "string") throw new Error(`no manifest digest for ${repo}:${tag} (${res.statusCode})`)
  return d
}

/** Packages and pushes the demo chart name:version into `<registry>/aicr/cluster/charts`. */
export const pushChart = async (info: HarnessInfo, helm: IsolatedHelm, name: string, version: string, tgz?: string): Promise<Chart> => {
  const repo = runtimeRepositories(info)[0]!
  await helm.helm("push", tgz ?? (await packageDemoChart(helm, name, version, version.replace(/^0\./u, "1."))), `oci://${repo}`, "--plain-http")
  const path = `${repo.slice(info.registry.length + 1)}/${name}`
  return { name, version, ref: `${repo}/${name}:${version}`, digest: await manifestDigest(info.registry, path, version) }
}

/**
 * What the operator chart installs for the releases: the AppProject (sources the runtime registry only, destinations
 * the given namespaces) and each component namespace with its Pod Security labels (`privileged` here), except those
 * named in `absent` (Argo CD does not create namespaces: a step into one of those is `NamespaceMissing`).
 */
export const installProject = (info: HarnessInfo, namespaces: ReadonlyArray<string>, absent: ReadonlyArray<string> = []) =>
  applyManifests(info, [
    ...namespaces
      .filter((n) => !absent.includes(n))
      .map((name) => ({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels: Object.fromEntries(["enforce", "audit", "warn"].map((m) => [`pod-security.kubernetes.io/${m}`, "privileged"])) },
      })),
    {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "AppProject",
      metadata: { name: "aicr", namespace: ARGOCD_NAMESPACE },
      spec: {
        sourceRepos: runtimeSourceRepos(info),
        destinations: namespaces.map((namespace) => ({ server: "https://kubernetes.default.svc", namespace })),
        clusterResourceWhitelist: [{ group: "*", kind: "*" }],
      },
    },
  ])

export interface Release {
  readonly chart: Chart
  readonly namespace: string
  readonly values?: string
  readonly dependsOn?: ReadonlyArray<string>
}

/**
 * Writes a plan's ConfigMaps as the planner does: its one content ConfigMap (holding `text` under the key the plan
 * records) and the immutable plan ConfigMap.
 */
export const applyPlan = async (info: HarnessInfo, ns: string, plan: Plan, text: string): Promise<void> => {
  const [content] = plan.content
  if (content === undefined || plan.content.length !== 1) throw new Error(`applyPlan writes one content ConfigMap; the plan records ${plan.content.length}`)
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: content.configMap, namespace: ns, labels: { [LABEL_ROLE]: ROLE_CONTENT } },
      data: { [content.key]: text },
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: planConfigMapName(plan.desiredStateDigest),
        namespace: ns,
        labels: { [LABEL_ROLE]: ROLE_PLAN },
        annotations: { [ANNOTATION_DESIRED_STATE_DIGEST]: plan.desiredStateDigest },
      },
      immutable: true,
      data: { [PLAN_DATA_KEY]: encodePlan(plan) },
    },
  ])
}

/** Writes the plan and content ConfigMaps the planner would for these releases (in order); returns the plan. */
export const writePlan = async (info: HarnessInfo, ns: string, runtimeUID: string, releases: ReadonlyArray<Release>): Promise<Plan> => {
  const files: Record<string, string> = {}
  const planReleases: PlanRelease[] = releases.map((r, order) => {
    const values = r.values ?? `message: ${r.chart.name}-${r.chart.version}\n`
    files[`${r.chart.name}/values.yaml`] = values
    return {
      name: r.chart.name,
      namespace: r.namespace,
      order,
      dependsOn: [...(r.dependsOn ?? [])],
      chart: { ref: r.chart.ref, digest: r.chart.digest },
      values: { digest: sha256(values) },
    }
  })
  const valuesJson = JSON.stringify({ apiVersion: "operator.aicr.run/v1alpha1", kind: "Bundle", deployer: "helm", files })
  const engine = { kind: "argocd" as const, project: "aicr" }
  const digest = desiredStateDigest({ engine, releases: planReleases })
  const content = contentConfigMapName(digest)
  const plan: Plan = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Plan",
    runtimeUID,
    createdAt: toConditionTime(Date.now()),
    source: "Resolution",
    desiredStateDigest: digest,
    flags: [],
    engine,
    releases: planReleases,
    content: [{ key: "values.json", configMap: content, digest: sha256(valuesJson) }],
  }
  await applyPlan(info, ns, plan, valuesJson)
  return plan
}

/**
 * A status write as another controller makes it (server-side apply with that controller's field manager, forced: the
 * test plays that controller), on the runtime `cluster` or on a rollout.
 */
export const applyStatusAs = async (
  info: HarnessInfo,
  manager: string,
  status: unknown,
  on: { readonly kind: "ClusterRuntime" | "RuntimeRollout"; readonly name: string } = { kind: "ClusterRuntime", name: "cluster" },
) =>
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: `${on.kind === "ClusterRuntime" ? RUNTIME : `${ROLLOUTS}/${on.name}`}/status?fieldManager=${manager}&force=true`,
      body: { apiVersion: "operator.aicr.run/v1alpha1", kind: on.kind, metadata: { name: on.name }, status },
      contentType: "application/apply-patch+yaml",
    }),
    `status as ${manager}`,
  )

/** Sets Approved on the rollout as the approval-guard would, for its current generation. */
export const setApproved = async (info: HarnessInfo, name: string, status: "True" | "False", reason: string, message: string) => {
  const r = await get(info, `${ROLLOUTS}/${name}`)
  await applyStatusAs(
    info,
    "aicr-approval-guard",
    {
      conditions: [{ type: "Approved", status, reason, message, observedGeneration: r.metadata.generation, lastTransitionTime: toConditionTime(Date.now()) }],
    },
    { kind: "RuntimeRollout", name },
  )
}

/** Creates an approved rollout from → to with these steps (Approved=True as the guard reports it). */
export const createRollout = async (info: HarnessInfo, o: { name: string; runtimeUID: string; from?: Plan; to: Plan; steps: ReadonlyArray<RolloutStep> }) => {
  const now = Date.now()
  const iso = toConditionTime
  const kind = o.from === undefined ? "Install" : "Upgrade"
  expectOk(
    await kubeRequest(info, {
      method: "POST",
      path: ROLLOUTS,
      body: {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "RuntimeRollout",
        metadata: { name: o.name },
        spec: {
          runtimeUID: o.runtimeUID,
          ...(o.from ? { fromDigest: o.from.desiredStateDigest } : {}),
          toDigest: o.to.desiredStateDigest,
          kind,
          deadline: iso(now + 3_600_000),
          requiresApproval: true,
          steps: o.steps,
          approval: {
            approvedBy: "bob",
            reason: "step-executor int test",
            approvedAt: iso(now),
            expiresAt: iso(now + 3_000_000),
            toDigest: o.to.desiredStateDigest,
          },
        },
      },
    }),
    `create rollout ${o.name}`,
  )
  await setApproved(info, o.name, "True", "ApprovedByUser", "Approved by bob")
}

/** Ends the rollout as the planner does: the durable outcome label. */
export const closeRollout = async (info: HarnessInfo, name: string, outcome: string) =>
  expectOk(
    await kubeRequest(info, { method: "PATCH", path: `${ROLLOUTS}/${name}`, body: { metadata: { labels: { [LABEL_OUTCOME]: outcome } } } }),
    `close ${name}`,
  )

export const Deployments: ResourceKind = { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", namespaced: true }

export interface Recorded {
  readonly seq: number
  readonly t: number
  readonly type: string
  readonly kind: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly object: any
}

/** Records every watch event of Applications (engine namespace) and Deployments (all namespaces), in arrival order. */
export const startRecorder = (info: HarnessInfo) => {
  const kube = makeKube({ kubeconfigPath: info.kubeconfig })
  const events: Recorded[] = []
  let seq = 0
  let listed = 0
  let onListed: () => void = () => undefined
  const ready = new Promise<void>((resolve) => (onListed = resolve))
  const watchOne = (kind: ResourceKind, namespace?: string) =>
    Effect.gen(function* () {
      const list = yield* kube.list<KubeObject>(kind, namespace ? { namespace } : {})
      for (const object of list.items) events.push({ seq: seq++, t: Date.now(), type: "ADDED", kind: kind.kind, object })
      if (++listed === 2) onListed()
      let rv = list.resourceVersion
      for (;;) {
        yield* kube.watch<KubeObject>(kind, { ...(namespace ? { namespace } : {}), resourceVersion: rv, timeoutSeconds: 60 }, (e) =>
          Effect.sync(() => {
            if (e.type === "BOOKMARK") rv = e.resourceVersion
            else {
              rv = e.object.metadata.resourceVersion ?? rv
              events.push({ seq: seq++, t: Date.now(), type: e.type, kind: kind.kind, object: e.object })
            }
          }),
        )
      }
    })
  const fibers = [Effect.runFork(watchOne(ArgoCD.Application, ARGOCD_NAMESPACE)), Effect.runFork(watchOne(Deployments))]
  return {
    /** Resolves once both lists are in: every later write is seen as a watch event. */
    ready,
    events,
    apps: (name?: string) => events.filter((e) => e.kind === "Application" && (name === undefined || e.object.metadata.name === name)),
    save: (file: string) => writeFileSync(file, events.map((e) => JSON.stringify(e)).join("\n")),
    stop: () => Effect.runPromise(Effect.forEach(fibers, (f) => Fiber.interrupt(f))),
  }
}
