// Argo CD Applications in tests: a builder for a Helm-chart Application and the readiness predicate "synced and
// healthy at the revision just written" (research argocd-local.md §8, checked there against every recorded status
// write). The Application CRD has no status subresource, so metadata.generation moves on every status write and
// cannot serve as an observed generation; status.sync.comparedTo proves the controller saw the spec.
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { isDeepStrictEqual } from "node:util"
import { ARGOCD_NAMESPACE, RESOURCES_FINALIZER } from "./argocd"
import type { IsolatedHelm } from "./helm"
import { eventually, expectOk, kubeRequest } from "./kube"
import type { KubeTarget } from "./types"

interface Condition {
  readonly type: string
  readonly message?: string
}

/** The parts of an Application the predicate reads (a raw API object has them all). */
export interface ApplicationView {
  readonly metadata?: { readonly name?: string }
  readonly spec?: { readonly source?: unknown }
  readonly operation?: unknown
  readonly status?: {
    readonly sync?: { readonly status?: string; readonly revision?: string; readonly comparedTo?: { readonly source?: unknown } }
    readonly health?: { readonly status?: string }
    readonly operationState?: { readonly phase?: string; readonly message?: string; readonly syncResult?: { readonly revision?: string } }
    readonly conditions?: readonly Condition[]
  }
}

/**
 * Why app is not yet synced and healthy at revision (empty: it is). Every part is needed: health stays Healthy at the
 * old revision for a while after a change, the operation can be done while sync.status still says OutOfSync, and a
 * follow-up sync may run while the app already looks Synced and Healthy.
 */
export const applicationNotReady = (app: ApplicationView, revision: string): string[] => {
  const st = app.status ?? {}
  const op = st.operationState
  return [
    ...(isDeepStrictEqual(st.sync?.comparedTo?.source, app.spec?.source) ? [] : ["last comparison is not against spec.source"]),
    ...(st.sync?.status === "Synced" ? [] : [`sync status ${st.sync?.status ?? "unset"}`]),
    ...(st.sync?.revision === revision ? [] : [`sync.revision ${st.sync?.revision ?? "unset"}, want ${revision}`]),
    ...(st.health?.status === "Healthy" ? [] : [`health ${st.health?.status ?? "unset"}`]),
    ...(app.operation === undefined ? [] : ["an operation is requested or running"]),
    ...(op === undefined || (op.phase === "Succeeded" && op.syncResult?.revision === revision)
      ? []
      : [`operation ${op.phase ?? "?"} at ${op.syncResult?.revision ?? "?"}${op.message ? `: ${op.message}` : ""}`]),
    ...(st.conditions ?? []).filter((c) => c.type.endsWith("Error")).map((c) => `${c.type}: ${c.message ?? ""}`),
  ]
}

export interface HelmApplication {
  readonly name: string
  /** OCI repository without scheme, e.g. `${info.registry}/charts`. */
  readonly repoURL: string
  readonly chart: string
  readonly targetRevision: string
  /** Namespace the chart is installed into (created by Argo CD). */
  readonly destinationNamespace: string
  readonly releaseName?: string
  readonly values?: Record<string, unknown>
  /** Add the resources finalizer, so deleting the Application prunes what it installed (default true). */
  readonly finalizer?: boolean
}

/** An Application that installs one chart and keeps it synced (automated, prune, self-heal, CreateNamespace). */
export const helmApplication = (a: HelmApplication) => ({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Application",
  metadata: { name: a.name, namespace: ARGOCD_NAMESPACE, ...((a.finalizer ?? true) ? { finalizers: [RESOURCES_FINALIZER] } : {}) },
  spec: {
    project: "default",
    source: {
      repoURL: a.repoURL,
      chart: a.chart,
      targetRevision: a.targetRevision,
      helm: { releaseName: a.releaseName ?? a.name, ...(a.values ? { valuesObject: a.values } : {}) },
    },
    destination: { server: "https://kubernetes.default.svc", namespace: a.destinationNamespace },
    syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["CreateNamespace=true"] },
  },
})

export interface OciApplication extends Omit<HelmApplication, "repoURL" | "chart"> {
  /** The chart's own OCI repository with scheme, e.g. `oci://${info.registry}/aicr/cluster/charts/demo`. */
  readonly repoURL: string
}

/**
 * An Application on Argo CD's native OCI source, the way the operator writes them: repoURL the chart's repository,
 * path `.`, targetRevision a manifest digest (pinned) or a tag; Argo CD reports the manifest digest as sync.revision.
 */
export const ociApplication = (a: OciApplication) => {
  const app = helmApplication({ ...a, chart: "" })
  return { ...app, spec: { ...app.spec, source: { repoURL: a.repoURL, path: ".", targetRevision: a.targetRevision, helm: app.spec.source.helm } } }
}

const appPath = (name: string) => `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications/${name}`

export const getApplication = async (info: KubeTarget, name: string): Promise<ApplicationView & Record<string, unknown>> =>
  expectOk(await kubeRequest(info, { method: "GET", path: appPath(name) }), `get Application ${name}`)

/** Waits until the Application is synced and healthy at revision; a timeout says which part never held. */
export const waitForApplication = async (
  info: KubeTarget,
  name: string,
  revision: string,
  opts: { readonly timeoutMs?: number } = {},
): Promise<ApplicationView & Record<string, unknown>> => {
  let why: string[] = ["never read"]
  try {
    return await eventually(
      async () => {
        const app = await getApplication(info, name)
        why = applicationNotReady(app, revision)
        return why.length === 0 && app
      },
      { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: 100, what: `Application ${name} at ${revision}` },
    )
  } catch (e) {
    throw new Error(`Application ${name} not synced and healthy at ${revision}: ${why.join("; ")}`, { cause: e })
  }
}

/** Deletes the Application and waits until it is gone (with the resources finalizer: after the prune). */
export const deleteApplication = async (info: KubeTarget, name: string, opts: { readonly timeoutMs?: number } = {}): Promise<void> => {
  const res = await kubeRequest(info, { method: "DELETE", path: appPath(name) })
  if (res.status !== 404) expectOk(res, `delete Application ${name}`)
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: appPath(name) })).status === 404, {
    timeoutMs: opts.timeoutMs ?? 60_000,
    intervalMs: 100,
    what: `Application ${name} gone`,
  })
}

/**
 * Packages a small chart with the real helm (like `helm create`, trimmed to one Deployment on the system nodes and one
 * ConfigMap; appVersion is the image tag, the values set replicas and a MESSAGE env var) and returns the .tgz path.
 */
export const packageDemoChart = async (helm: IsolatedHelm, name: string, version: string, appVersion: string): Promise<string> => {
  const dir = join(helm.work, "charts-src", `${name}-${version}`)
  await mkdir(join(dir, "templates"), { recursive: true })
  await writeFile(join(dir, "Chart.yaml"), `apiVersion: v2\nname: ${name}\nversion: ${version}\nappVersion: "${appVersion}"\ntype: application\n`)
  await writeFile(join(dir, "values.yaml"), "replicas: 1\nmessage: default\n")
  await writeFile(
    join(dir, "templates", "deployment.yaml"),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {helm.sh/chart: "{{ .Chart.Name }}-{{ .Chart.Version }}"}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app.kubernetes.io/instance: "{{ .Release.Name }}"}}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: "{{ .Release.Name }}", chart-version: "{{ .Chart.Version }}"}
    spec:
      nodeSelector: {eks.amazonaws.com/nodegroup: system}
      containers:
        - name: app
          image: "registry.example/demo:{{ .Chart.AppVersion }}"
          env: [{name: MESSAGE, value: {{ .Values.message | quote }}}]
`,
  )
  await writeFile(
    join(dir, "templates", "configmap.yaml"),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  version: "{{ .Chart.Version }}"\n`,
  )
  const pkgs = join(helm.work, "pkgs")
  await helm.helm("package", dir, "-d", pkgs)
  return join(pkgs, `${name}-${version}.tgz`)
}
