/**
 * The controllers' RBAC, rendered from their contracts (`packages/contracts`): every kind a controller watches or
 * reads gets `get`/`list`/`watch`, every kind it creates gets the write verbs, every room it writes gets the
 * `status` subresource, and owned labels or finalizers get `patch`/`update` on the object itself. Where each
 * namespaced kind lives (the contract names kinds, not namespaces) and which objects are addressed by name only is
 * the one table below, `PLACEMENT`; what every process needs besides its contract (its Lease, Events) is
 * `commonNeeds`, and what a contract does not say yet (access reviews, the per-run Job Secret) is `CONTRACT_GAPS`.
 * Nothing else grants anything.
 *
 * The output is a Helm template: namespaces are chart expressions, so the same rules follow `namespaces.*`,
 * `engine.namespace` and the release namespace.
 */
import { kindKey, type ResourceKind } from "@aicr/api"
import { CONTRACTS, type Contract, type Controller } from "@aicr/contracts"

/** A namespace as the chart knows it. */
export type NamespaceRef = "operator" | "discovery" | "engine" | "validation" | "components" | "default"

/** The Helm expression of each namespace (inside a `range`, hence `$`). */
export const NAMESPACE_EXPR: Readonly<Record<Exclude<NamespaceRef, "components">, string>> = {
  operator: "{{ $.Release.Namespace }}",
  discovery: "{{ $.Values.namespaces.discovery }}",
  engine: "{{ $.Values.engine.namespace }}",
  validation: "{{ $.Values.namespaces.validation }}",
  default: "default",
}

export interface Placement {
  readonly namespaces: ReadonlyArray<NamespaceRef>
  /** Only these objects (Helm expressions allowed); list/watch then need a `metadata.name` field selector. */
  readonly resourceNames?: ReadonlyArray<string>
}

/** A rule before rendering: a kind (or subresource) with verbs, cluster-wide or in some namespaces. */
export interface Grant {
  readonly group: string
  readonly resource: string
  readonly verbs: ReadonlyArray<string>
  /** Absent: cluster-wide (a ClusterRole rule). */
  readonly namespaces?: ReadonlyArray<NamespaceRef>
  readonly resourceNames?: ReadonlyArray<string>
  readonly why: string
}

const READ = ["get", "list", "watch"] as const
const WRITE = ["create", "update", "patch", "delete"] as const
const STATUS = ["get", "update", "patch"] as const

/** Where each namespaced kind a contract names lives, per controller (`<Kind>.<group>` keys). */
export const PLACEMENT: Readonly<Record<Controller, Readonly<Record<string, Placement>>>> = {
  // Recipe and bundle Jobs run in the release namespace, the snapshot agent in the discovery namespace (ADR 20261203-chart-namespaces).
  resolver: {
    "ConfigMap.core": { namespaces: ["operator", "discovery"] },
    "Job.batch": { namespaces: ["operator", "discovery"] },
    "Pod.core": { namespaces: ["operator", "discovery"] },
  },
  "registry-mirror": { "ConfigMap.core": { namespaces: ["operator"] } },
  planner: {
    "ConfigMap.core": { namespaces: ["operator"] },
    "Job.batch": { namespaces: ["operator"] },
    "Pod.core": { namespaces: ["operator"] },
    "Application.argoproj.io": { namespaces: ["engine"] },
  },
  "approval-guard": {},
  "step-executor": {
    "ConfigMap.core": { namespaces: ["operator"] },
    "Application.argoproj.io": { namespaces: ["engine"] },
    "AppProject.argoproj.io": { namespaces: ["engine"], resourceNames: ["{{ $.Values.engine.project }}"] },
  },
  "validation-gate": {
    "Job.batch": { namespaces: ["validation"] },
    // The validate Job's pods: their termination message and log (packages/aicr's Job runner).
    "Pod.core": { namespaces: ["validation"] },
    "ConfigMap.core": { namespaces: ["operator", "validation"] },
    "ServiceAccount.core": { namespaces: ["validation"] },
    "RoleBinding.rbac.authorization.k8s.io": { namespaces: ["validation"] },
  },
  "ecr-credential-refresher": {
    "Secret.core": {
      namespaces: ["engine", "operator"],
      resourceNames: ["{{ $.Values.registry.auth.repoCredsSecret }}", "{{ $.Values.registry.auth.dockerConfigSecret }}"],
    },
  },
}

/** Cluster-scoped reads addressed by name only. */
const CLUSTER_NAMES: Readonly<Record<string, ReadonlyArray<string>>> = {
  "CustomResourceDefinition.apiextensions.k8s.io": ["applications.argoproj.io"],
}

/** The Lease, Events and the like that every process needs besides its contract (packages/runtime, packages/kube). */
const commonNeeds = (controller: Controller): Grant[] => [
  {
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: ["get", "update", "patch"],
    namespaces: ["operator"],
    resourceNames: [`aicr-${controller}`],
    why: "leader election on its own Lease",
  },
  {
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: ["create"],
    namespaces: ["operator"],
    why: "leader election: the first candidate creates the Lease (create cannot be scoped by name)",
  },
  // Events about cluster-scoped objects go to `default` (packages/kube/src/events.ts), the rest to the object's namespace.
  { group: "events.k8s.io", resource: "events", verbs: ["create", "patch"], namespaces: ["operator", "default"], why: "Events on the objects it reconciles" },
]

/** Needs the contracts do not express yet (each one should move into its contract). */
export const CONTRACT_GAPS: Readonly<Record<Controller, ReadonlyArray<Grant>>> = {
  resolver: [
    {
      group: "",
      resource: "secrets",
      verbs: ["create", "patch"],
      namespaces: ["operator"],
      why: "the per-run registry Secret of a bundle Job, owned by the Job (packages/aicr/src/run.ts); never read",
    },
  ],
  "approval-guard": [
    {
      group: "authorization.k8s.io",
      resource: "subjectaccessreviews",
      verbs: ["create"],
      why: "asks the authorizer whether the approver holds the approve verb",
    },
  ],
  "registry-mirror": [],
  planner: [],
  "step-executor": [],
  "validation-gate": [
    {
      group: "authorization.k8s.io",
      resource: "subjectaccessreviews",
      verbs: ["create"],
      why: "asks the authorizer whether the validation launcher and AICR's validators hold the rights a run needs (ValidationReady)",
    },
  ],
  "ecr-credential-refresher": [
    {
      group: "",
      resource: "secrets",
      verbs: ["create"],
      namespaces: ["operator"],
      why: "aws: the docker-config Secret on the first mint (the chart cannot create a dockerconfigjson Secret empty; create cannot be scoped by name)",
    },
  ],
}

const resourceOf = (k: ResourceKind) => ({ group: k.group, resource: k.plural })

const placementOf = (c: Contract, k: ResourceKind): Placement | undefined => {
  if (!k.namespaced) return CLUSTER_NAMES[kindKey(k)] ? { namespaces: [], resourceNames: CLUSTER_NAMES[kindKey(k)]! } : undefined
  const p = PLACEMENT[c.controller][kindKey(k)]
  if (p === undefined) throw new Error(`hack/chart/rbac.ts: ${c.controller} names the namespaced kind ${kindKey(k)} but PLACEMENT does not say where it lives`)
  return p
}

const grant = (c: Contract, k: ResourceKind, verbs: ReadonlyArray<string>, why: string, subresource?: string): Grant => {
  const p = placementOf(c, k)
  const { group, resource } = resourceOf(k)
  return {
    group,
    resource: subresource ? `${resource}/${subresource}` : resource,
    verbs,
    ...(k.namespaced ? { namespaces: p!.namespaces } : {}),
    ...(p?.resourceNames && p.resourceNames.length > 0 ? { resourceNames: p.resourceNames } : {}),
    why,
  }
}

/** Every grant of one controller: from its contract, then its process needs. */
export const grantsOf = (c: Contract): ReadonlyArray<Grant> => {
  const read = new Map<string, ResourceKind>()
  for (const w of c.watches) read.set(kindKey(w.kind), w.kind)
  for (const k of c.reads.kinds) read.set(kindKey(k), k)
  for (const w of c.writes) read.set(kindKey(w.kind), w.kind)
  const out: Grant[] = []
  for (const k of read.values()) out.push(grant(c, k, READ, "watched or read (contract)"))
  for (const w of c.writes) {
    out.push(grant(c, w.kind, STATUS, `its status room (${[...w.conditions.map((d) => d.type), ...w.statusKeys].join(", ")})`, "status"))
    if ((w.labels?.length ?? 0) > 0 || (w.finalizers?.length ?? 0) > 0) {
      out.push(grant(c, w.kind, ["patch", "update"], `owned metadata (${[...(w.labels ?? []), ...(w.finalizers ?? [])].join(", ")})`))
    }
  }
  for (const cr of c.creates) out.push(grant(c, cr.kind, WRITE, cr.why))
  return [...out, ...commonNeeds(c.controller), ...CONTRACT_GAPS[c.controller]]
}

/** The chart's ServiceAccount of each controller: the one that needs AWS is `aicr-operator` (the seed's IRSA/Pod Identity subject). */
export const serviceAccountOf = (controller: Controller): string => (controller === "ecr-credential-refresher" ? "aicr-operator" : `aicr-${controller}`)

interface Rule {
  apiGroups: string[]
  resources: string[]
  verbs: string[]
  resourceNames?: string[]
}

const ruleOf = (g: Grant): Rule => ({
  apiGroups: [g.group],
  resources: [g.resource],
  verbs: [...g.verbs],
  ...(g.resourceNames ? { resourceNames: [...g.resourceNames] } : {}),
})

/** Rules with the same group, resource names and verbs are merged over resources; the order is stable. */
const merge = (rules: ReadonlyArray<Rule>): Rule[] => {
  const out: Rule[] = []
  for (const r of rules) {
    const same = out.find(
      (o) =>
        o.apiGroups[0] === r.apiGroups[0] &&
        JSON.stringify(o.resourceNames) === JSON.stringify(r.resourceNames) &&
        JSON.stringify([...o.verbs].sort()) === JSON.stringify([...r.verbs].sort()),
    )
    if (same) {
      if (!same.resources.includes(r.resources[0]!)) same.resources.push(r.resources[0]!)
    } else out.push({ ...r, verbs: [...r.verbs].sort(), resources: [...r.resources] })
  }
  return out
}

export interface ControllerRbac {
  readonly controller: Controller
  readonly serviceAccount: string
  readonly clusterRules: ReadonlyArray<Rule>
  /** Namespace ref → rules there. */
  readonly namespaced: ReadonlyArray<{ readonly namespace: NamespaceRef; readonly rules: ReadonlyArray<Rule> }>
}

const NAMESPACE_ORDER: ReadonlyArray<NamespaceRef> = ["operator", "discovery", "validation", "engine", "components", "default"]

export const rbacOf = (c: Contract): ControllerRbac => {
  const grants = grantsOf(c)
  return {
    controller: c.controller,
    serviceAccount: serviceAccountOf(c.controller),
    clusterRules: merge(grants.filter((g) => g.namespaces === undefined).map(ruleOf)),
    namespaced: NAMESPACE_ORDER.map((namespace) => ({ namespace, rules: merge(grants.filter((g) => g.namespaces?.includes(namespace)).map(ruleOf)) })).filter(
      (n) => n.rules.length > 0,
    ),
  }
}

export const ALL_RBAC: ReadonlyArray<ControllerRbac> = CONTRACTS.map(rbacOf)
