/**
 * Resource kinds and rooms: the vocabulary every package uses to name a Kubernetes kind and the slice of an
 * object's status one controller may write.
 *
 * A `ResourceKind` carries the GVK, the plural and the scope; `packages/kube` builds API paths from it.
 * A `Room` is the status slice a single controller owns on one kind (design/style.md §B.4): the condition types it
 * re-applies on every pass plus the top-level `status` keys it owns. `packages/kube` refuses to apply a status body
 * that writes outside the room, and the field manager makes the API server refuse a write into another's room.
 */

export interface ResourceKind {
  readonly group: string // "" for the core group
  readonly version: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
}

export const apiVersionOf = (k: ResourceKind): string => (k.group === "" ? k.version : `${k.group}/${k.version}`)

export const kindKey = (k: ResourceKind): string => `${k.kind}.${k.group === "" ? "core" : k.group}`

export interface Room {
  /** The controller that owns this room, e.g. `approval-guard`. */
  readonly controller: string
  /** Server-side-apply field manager; also the user agent prefix. */
  readonly fieldManager: string
  /** The kind whose status holds the room. */
  readonly kind: ResourceKind
  /** Condition types this controller sets on every pass (the complete set: omission deletes). */
  readonly conditions: ReadonlyArray<string>
  /** Top-level keys under `.status` this controller owns, e.g. `["approval"]`. */
  readonly statusKeys: ReadonlyArray<string>
}

export const GROUP = "operator.aicr.run"
export const VERSION = "v1alpha1"

/** The only name the operator acts on (operator.md §3.2 [D]): the `ClusterRuntime` is a singleton. */
export const SINGLETON_NAME = "cluster"

export const ClusterRuntimeKind: ResourceKind = { group: GROUP, version: VERSION, kind: "ClusterRuntime", plural: "clusterruntimes", namespaced: false }
export const RuntimeRolloutKind: ResourceKind = { group: GROUP, version: VERSION, kind: "RuntimeRollout", plural: "runtimerollouts", namespaced: false }

export const Core = {
  ConfigMap: { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  Secret: { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  Node: { group: "", version: "v1", kind: "Node", plural: "nodes", namespaced: false },
  Namespace: { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
  Pod: { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true },
  ServiceAccount: { group: "", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
  Event: { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", namespaced: true },
  Lease: { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", namespaced: true },
  Job: { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true },
  CustomResourceDefinition: {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
  },
} as const satisfies Record<string, ResourceKind>

export const ArgoCD = {
  Application: { group: "argoproj.io", version: "v1alpha1", kind: "Application", plural: "applications", namespaced: true },
  AppProject: { group: "argoproj.io", version: "v1alpha1", kind: "AppProject", plural: "appprojects", namespaced: true },
} as const satisfies Record<string, ResourceKind>

export const Rbac = {
  ClusterRole: { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRole", plural: "clusterroles", namespaced: false },
  ClusterRoleBinding: { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRoleBinding", plural: "clusterrolebindings", namespaced: false },
  RoleBinding: { group: "rbac.authorization.k8s.io", version: "v1", kind: "RoleBinding", plural: "rolebindings", namespaced: true },
} as const satisfies Record<string, ResourceKind>

/** Create-only review kinds: the API server answers in `status` and stores nothing. */
export const Reviews = {
  SubjectAccessReview: { group: "authorization.k8s.io", version: "v1", kind: "SubjectAccessReview", plural: "subjectaccessreviews", namespaced: false },
  SelfSubjectReview: { group: "authentication.k8s.io", version: "v1", kind: "SelfSubjectReview", plural: "selfsubjectreviews", namespaced: false },
} as const satisfies Record<string, ResourceKind>

/** The minimal shape every object read from the API server has. */
export interface ObjectMeta {
  readonly name: string
  readonly namespace?: string
  readonly uid?: string
  readonly generation?: number
  readonly resourceVersion?: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  readonly finalizers?: ReadonlyArray<string>
  readonly deletionTimestamp?: string
  readonly creationTimestamp?: string
}

export interface KubeObject {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: ObjectMeta
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones: the key a work queue carries. */
export type ObjectKey = string

export const keyOf = (o: { readonly metadata: { readonly name: string; readonly namespace?: string } }): ObjectKey =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name

export const parseKey = (key: ObjectKey): { readonly namespace?: string; readonly name: string } => {
  const i = key.indexOf("/")
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) }
}
