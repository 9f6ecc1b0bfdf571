/**
 * Argo CD Applications as the operator writes them (operator.md §6; ADR 20261202-step-executor): one per release in
 * the engine namespace, the release's chart from the runtime registry **pinned by digest** (Argo CD's native OCI
 * source: repoURL `oci://<registry>/<prefix>/charts/<chart>`, path `.`, targetRevision the chart's OCI manifest digest
 * the mirror recorded, so a tag moved in the registry changes nothing deployed; ADR 20261203-charts-by-digest), the
 * release's values as `valuesObject`, automated sync with prune and self-heal, the resources finalizer, and labels and
 * annotations that name the runtime, the release, the plan and the written revision: the markers a restarted executor
 * reads to tell a written step from an unwritten one (§4.14).
 */
import { ANNOTATION_DESIRED_STATE_DIGEST, type KubeObject, type ObjectMeta } from "@aicr/api"
import { ANNOTATION_RELEASE_RECORD, ANNOTATION_SPEC_DIGEST, encodeRecord, type ReleaseRecord, specDigest } from "./record"

export const APPLICATION_API_VERSION = "argoproj.io/v1alpha1"
/** The CRD serving Applications: missing until Argo CD is installed. */
export const APPLICATION_CRD = "applications.argoproj.io"
/** Deleting an Application with this finalizer makes Argo CD prune what it installed first. */
export const RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
/** The in-cluster destination (the only one the AppProject allows). */
export const IN_CLUSTER = "https://kubernetes.default.svc"

/** [I] The chart digest the Application was written for (the OCI manifest digest the mirror pushed). */
export const ANNOTATION_CHART_DIGEST = "operator.aicr.run/chart-digest"
/** [I] The digest of the release's values (plan `values.digest`) the Application was written for. */
export const ANNOTATION_VALUES_DIGEST = "operator.aicr.run/values-digest"
/** [I] The full desiredStateDigest of the plan that wrote the Application (the `plan` label holds its 32-hex key). */
export const ANNOTATION_PLAN_DIGEST = ANNOTATION_DESIRED_STATE_DIGEST
/** [I] When the executor wrote this revision (RFC 3339): the start of the step, for its deadline. */
export const ANNOTATION_WRITTEN_AT = "operator.aicr.run/written-at"

/**
 * An Application's source: the operator writes native OCI sources (`repoURL: oci://…`, `path: .`, targetRevision a
 * manifest digest); Applications written by earlier versions, and Argo CD's Helm-repository sources, have `chart`.
 */
export interface HelmSource {
  readonly repoURL: string
  readonly chart?: string
  readonly path?: string
  readonly targetRevision: string
  readonly helm?: { readonly releaseName?: string; readonly valuesObject?: unknown }
}

export interface ApplicationCondition {
  readonly type: string
  readonly message?: string
}

export interface ApplicationSpec {
  readonly project: string
  readonly source: HelmSource
  readonly destination: { readonly server: string; readonly namespace: string }
  readonly syncPolicy?: {
    readonly automated?: { readonly enabled?: boolean; readonly prune?: boolean; readonly selfHeal?: boolean }
    readonly syncOptions?: ReadonlyArray<string>
    readonly retry?: { readonly limit?: number; readonly backoff?: { readonly duration?: string; readonly factor?: number; readonly maxDuration?: string } }
  }
  readonly ignoreDifferences?: ReadonlyArray<unknown>
}

export interface ApplicationStatus {
  /** When Argo CD last compared the Application (every comparison sets it). */
  readonly reconciledAt?: string
  readonly sync?: { readonly status?: string; readonly revision?: string; readonly comparedTo?: { readonly source?: unknown; readonly destination?: unknown } }
  readonly health?: { readonly status?: string; readonly message?: string }
  readonly operationState?: {
    readonly phase?: string
    readonly message?: string
    readonly finishedAt?: string
    readonly operation?: { readonly sync?: { readonly revision?: string } }
    readonly syncResult?: { readonly revision?: string }
  }
  readonly conditions?: ReadonlyArray<ApplicationCondition>
  /** The managed resources as Argo CD last saw them, with each one's health. */
  readonly resources?: ReadonlyArray<ApplicationResource>
}

export interface ApplicationResource {
  readonly group?: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string
  readonly health?: { readonly status?: string; readonly message?: string }
}

/** An Argo CD Application as read from the API server (only the fields the operator uses are typed). */
export interface Application extends KubeObject {
  readonly metadata: ObjectMeta
  readonly spec?: ApplicationSpec
  readonly operation?: unknown
  readonly status?: ApplicationStatus
}

/** Where a chart lives, as an OCI Helm source: `host/prefix/charts/<chart>:<version>` → repoURL, chart, version. */
export const helmSourceOf = (ref: string): { readonly repoURL: string; readonly chart: string; readonly version: string } => {
  const bare = ref.replace(/^oci:\/\//u, "").replace(/@sha256:[a-f0-9]{64}$/u, "")
  const slash = bare.lastIndexOf("/")
  const colon = bare.lastIndexOf(":")
  if (slash <= 0 || colon <= slash + 1 || colon === bare.length - 1) throw new Error(`Not a chart reference host/repository/<chart>:<version>: ${ref}`)
  return { repoURL: bare.slice(0, slash), chart: bare.slice(slash + 1, colon), version: bare.slice(colon + 1) }
}

/**
 * The native OCI source of a chart pinned by digest: `host/prefix/charts/<chart>:<version>` and its manifest digest →
 * `{repoURL: oci://host/prefix/charts/<chart>, path: ".", targetRevision: sha256:…}`. Argo CD resolves a digest
 * revision as it is (no tag lookup), pulls that manifest and reports it as `sync.revision`.
 */
export const chartSourceOf = (ref: string, digest: string): { readonly repoURL: string; readonly path: string; readonly targetRevision: string } => {
  if (!/^sha256:[a-f0-9]{64}$/u.test(digest)) throw new Error(`Not a manifest digest: ${digest}`)
  const src = helmSourceOf(ref)
  return { repoURL: `oci://${src.repoURL}/${src.chart}`, path: ".", targetRevision: digest }
}

export interface ReleaseApplication {
  readonly name: string
  readonly namespace: string
  readonly project: string
  readonly release: string
  readonly destinationNamespace: string
  /** `host/…/charts/<chart>:<version>` (no digest). */
  readonly chartRef: string
  readonly chartDigest: string
  readonly valuesDigest: string
  readonly values: Readonly<Record<string, unknown>>
  readonly labels: Readonly<Record<string, string>>
  readonly planDigest: string
  readonly writtenAt: string
  readonly ignoreDifferences?: ReadonlyArray<unknown>
  /**
   * How often Argo CD retries a failed sync before it reports the operation Failed (5 s, then doubling, at most 1 m
   * apart). Argo CD 3.4 otherwise retries an automated sync 5 times over minutes, reporting phase Running meanwhile.
   */
  readonly syncRetries: number
  /** What re-adoption rebuilds the plan from (`record.ts`). */
  readonly record: ReleaseRecord
}

/**
 * [I] The sync options of every release (ADR 20261203-real-chart-sync): objects are applied server-side, as AICR's own
 * Argo CD bundles do. Namespaces are not created (no `CreateNamespace=true`, which makes them without Pod Security
 * labels): the chart's install creates the component namespaces with theirs, and the step executor starts no step
 * whose namespace is missing (`NamespaceMissing`, ADR 20261203-namespace-missing). Client-side apply stores the whole object in the
 * `last-applied-configuration` annotation, over the API server's 262,144-byte limit for the large CRDs of the real
 * charts (kubeflow-trainer's JobSet 913 KB, kube-prometheus-stack's 820 KB, KAI's 658 KB), so their sync fails.
 */
export const SYNC_OPTIONS = ["ServerSideApply=true"] as const

/**
 * [I] Comparison exceptions every release carries before the plan's own (operator.md §6; ADR 20261203-real-charts):
 * fields the API server or a component rewrites after Argo CD applied the chart, which Argo CD's client-side
 * comparison would otherwise report as OutOfSync after every successful sync.
 * Each is a null the chart renders in a custom resource (Argo CD drops nulls of built-in kinds itself, not of custom
 * resources; every null of the reference recipe's charts with AICR's values, found with `helm template`):
 * - gpu-operator's ClusterPolicy: the chart renders `spec.migManager.config.name` as null and the CRD defaults it
 *   (`default-mig-parted-config`).
 * - kube-prometheus-stack's Prometheus: AICR's EKS overlay (v0.10.16 and v0.11.1) sets `storageSpec.emptyDir: null`
 *   to drop the component default's emptyDir beside its `volumeClaimTemplate`; the chart renders it as
 *   `spec.storage.emptyDir: null`, which server-side apply leaves out of the stored object.
 * And a field the API server drops because its feature is off (Argo CD compares built-in kinds through its own
 * Go types, which know the field):
 * - nvidia-dra-driver-gpu's DeviceClass `gpu.nvidia.com`: the chart renders `spec.extendedResourceName` at
 *   resource.k8s.io/v1, a field of the DRAExtendedResource feature (alpha and off by default in Kubernetes 1.35; EKS
 *   enables no alpha feature); an API server without it stores the DeviceClass without the field.
 * Argo CD's server-side diff would cover such defaults without a list, but its dry-run apply refuses manifests with
 * null objects (the Prometheus above) and the Application then stays in ComparisonError.
 */
export const COMPARISON_EXCEPTIONS = [
  { group: "nvidia.com", kind: "ClusterPolicy", jqPathExpressions: [".spec.migManager.config.name"] },
  { group: "monitoring.coreos.com", kind: "Prometheus", jqPathExpressions: [".spec.storage.emptyDir"] },
  { group: "resource.k8s.io", kind: "DeviceClass", jqPathExpressions: [".spec.extendedResourceName"] },
] as const

/** Argo CD's retry backoff for the operator's Applications. */
export const RETRY_BACKOFF = { duration: "5s", factor: 2, maxDuration: "1m" } as const

/**
 * The Application for one release. `syncPolicy.automated.enabled` is never part of it: suspension toggles only that
 * field (`suspensionPatch`), so applying a release never fights a suspension and a suspension never owns the rest.
 */
export const releaseApplication = (r: ReleaseApplication) => {
  const spec: ApplicationSpec & { readonly source: HelmSource & { readonly helm: { readonly releaseName: string; readonly valuesObject: unknown } } } = {
    project: r.project,
    source: { ...chartSourceOf(r.chartRef, r.chartDigest), helm: { releaseName: r.release, valuesObject: r.values } },
    destination: { server: IN_CLUSTER, namespace: r.destinationNamespace },
    syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: SYNC_OPTIONS, retry: { limit: r.syncRetries, backoff: RETRY_BACKOFF } },
    ignoreDifferences: [...COMPARISON_EXCEPTIONS, ...(r.ignoreDifferences ?? [])],
  }
  return {
    apiVersion: APPLICATION_API_VERSION,
    kind: "Application",
    metadata: {
      name: r.name,
      namespace: r.namespace,
      labels: r.labels,
      annotations: {
        [ANNOTATION_CHART_DIGEST]: r.chartDigest,
        [ANNOTATION_VALUES_DIGEST]: r.valuesDigest,
        [ANNOTATION_PLAN_DIGEST]: r.planDigest,
        [ANNOTATION_WRITTEN_AT]: r.writtenAt,
        [ANNOTATION_RELEASE_RECORD]: encodeRecord(r.record),
        [ANNOTATION_SPEC_DIGEST]: specDigest(spec),
      },
      finalizers: [RESOURCES_FINALIZER],
    },
    spec,
  } satisfies KubeObject & { spec: ApplicationSpec }
}

/** Whether the Application carries the markers of this chart and values digest (it was written for them). */
export const writtenFor = (app: Application, chartDigest: string, valuesDigest: string): boolean =>
  app.metadata.annotations?.[ANNOTATION_CHART_DIGEST] === chartDigest && app.metadata.annotations?.[ANNOTATION_VALUES_DIGEST] === valuesDigest
