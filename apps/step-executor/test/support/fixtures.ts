// Builders for the step-executor's component tests: a runtime, plan and content ConfigMaps as the planner writes
// them, an approved rollout with its steps, Argo CD's CRD and AppProject, and Argo CD's side of an Application
// (status as the controller writes it: stale after a change, or ready at a revision).
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  type ClusterRuntime,
  desiredStateDigest,
  encodePlan,
  LABEL_ROLE,
  type Plan,
  planConfigMapName,
  PLAN_DATA_KEY,
  type PlanRelease,
  ROLE_CONTENT,
  ROLE_PLAN,
  type RolloutStep,
  type RuntimeRollout,
  sha256,
} from "@aicr/api"
import type { Application } from "@aicr/argocd"
import { toConditionTime } from "@aicr/conditions"

export const T0 = Date.parse("2026-12-02T10:00:00Z")
export const at = (s: number) => toConditionTime(T0 + s * 1000)
/** The uid FakeKube gives the first object seeded (the runtime). */
export const UID = "00000000-0000-4000-8000-000000000001"
export const NAMESPACE = "aicr-system"
export const REGISTRY = "registry.example/aicr/cluster"
export const digestOf = (s: string) => sha256(s)

export const aRuntime = (spec: Partial<ClusterRuntime["spec"]> = {}): ClusterRuntime =>
  ({
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster", uid: UID, generation: 1 },
    spec: { validation: { deployment: "Disabled" }, ...spec },
  }) as ClusterRuntime

export interface Rel {
  readonly name: string
  readonly version: string
  readonly namespace?: string
  readonly values?: string
  readonly readinessGate?: PlanRelease["readinessGate"]
}

export const aPlan = (rels: ReadonlyArray<Rel>, files: Record<string, string> = {}): { plan: Plan; configMaps: unknown[] } => {
  const all: Record<string, string> = { ...files }
  const releases: PlanRelease[] = rels.map((r, order) => {
    const values = r.values ?? `message: ${r.name}-${r.version}\nnested: {a: 1}\n`
    all[`${r.name}/values.yaml`] = values
    return {
      name: r.name,
      namespace: r.namespace ?? r.name,
      order,
      dependsOn: order > 0 ? [rels[order - 1]!.name] : [],
      chart: { ref: `${REGISTRY}/charts/${r.name}:${r.version}`, digest: digestOf(`${r.name}@${r.version}`) },
      values: { digest: sha256(values) },
      ...(r.readinessGate !== undefined ? { readinessGate: r.readinessGate } : {}),
    }
  })
  const valuesJson = JSON.stringify({ apiVersion: "operator.aicr.run/v1alpha1", kind: "Bundle", deployer: "helm", files: all })
  const engine = { kind: "argocd" as const, project: "aicr" }
  const digest = desiredStateDigest({ engine, releases })
  const content = `aicr-content-${digest.slice(7, 39)}`
  const plan: Plan = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Plan",
    runtimeUID: UID,
    createdAt: at(0),
    source: "Resolution",
    desiredStateDigest: digest,
    flags: [],
    engine,
    releases,
    content: [{ key: "values.json", configMap: content, digest: sha256(valuesJson) }],
  }
  return {
    plan,
    configMaps: [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: content, namespace: NAMESPACE, labels: { [LABEL_ROLE]: ROLE_CONTENT } },
        data: { "values.json": valuesJson },
      },
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: planConfigMapName(digest),
          namespace: NAMESPACE,
          labels: { [LABEL_ROLE]: ROLE_PLAN },
          annotations: { [ANNOTATION_DESIRED_STATE_DIGEST]: digest },
        },
        immutable: true,
        data: { [PLAN_DATA_KEY]: encodePlan(plan) },
      },
    ],
  }
}

export const stepsOf = (action: RolloutStep["action"], names: ReadonlyArray<string>, extra: Partial<RolloutStep> = {}): RolloutStep[] =>
  names.map((release) => ({ release, namespace: release, action, ...extra }))

export interface RolloutState {
  readonly approved?: "True" | "False" | "stale" | "missing"
  readonly approvedReason?: string
  readonly validationReady?: "True" | "missing"
  readonly revoked?: boolean
  readonly acknowledged?: ReadonlyArray<string>
}

export const aRollout = (name: string, plan: Plan, steps: ReadonlyArray<RolloutStep>, s: RolloutState = {}): RuntimeRollout => {
  const generation = 1 // what FakeKube gives a seeded object
  const cond = (type: string, status: string, reason: string, g = generation) => ({
    type,
    status,
    reason,
    message: `${type} ${reason}`,
    observedGeneration: g,
    lastTransitionTime: at(0),
  })
  const approved = s.approved ?? "True"
  const conditions = [
    ...(approved === "missing"
      ? []
      : [
          cond(
            "Approved",
            approved === "stale" ? "True" : approved,
            s.approvedReason ?? (approved === "False" ? "AwaitingApproval" : "ApprovedByUser"),
            approved === "stale" ? 0 : generation,
          ),
        ]),
    ...(s.validationReady === "True" ? [cond("ValidationReady", "True", "ValidationAvailable")] : []),
  ]
  return {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "RuntimeRollout",
    metadata: { name, generation, creationTimestamp: at(0) },
    spec: {
      runtimeUID: UID,
      toDigest: plan.desiredStateDigest,
      kind: "Install",
      deadline: at(3600),
      requiresApproval: true,
      steps,
      approval: { approvedBy: "bob", reason: "test", approvedAt: at(0), expiresAt: at(3000), toDigest: plan.desiredStateDigest },
      ...(s.revoked ? { revocation: { revokedBy: "bob", reason: "stop", revokedAt: at(1) } } : {}),
      ...(s.acknowledged ? { acknowledgements: s.acknowledged.map((step) => ({ step, acknowledgedBy: "bob", at: at(1) })) } : {}),
    },
    status: { conditions },
  } as RuntimeRollout
}

export const applicationCrd = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "applications.argoproj.io" } }
export const appProject = { apiVersion: "argoproj.io/v1alpha1", kind: "AppProject", metadata: { name: "aicr", namespace: "argocd" } }

/** Argo CD's status for an Application that is synced and healthy at its spec's revision. */
export const readyStatus = (app: Application) => ({
  sync: { status: "Synced", revision: app.spec!.source.targetRevision, comparedTo: { source: app.spec!.source, destination: app.spec!.destination } },
  health: { status: "Healthy" },
  operationState: { phase: "Succeeded", message: "successfully synced (all tasks run)", syncResult: { revision: app.spec!.source.targetRevision } },
})

/** Right after a change: the comparison already at the new target, the operation done, health still from before. */
export const staleStatus = (app: Application) => ({
  sync: { status: "OutOfSync", revision: app.spec!.source.targetRevision, comparedTo: { source: app.spec!.source, destination: app.spec!.destination } },
  health: { status: "Healthy" },
  operationState: { phase: "Succeeded", message: "successfully synced (all tasks run)", syncResult: { revision: app.spec!.source.targetRevision } },
})

export const failedStatus = (app: Application, message: string) => ({
  sync: { status: "OutOfSync", revision: app.spec!.source.targetRevision, comparedTo: { source: app.spec!.source, destination: app.spec!.destination } },
  health: { status: "Missing" },
  operationState: {
    phase: "Failed",
    message,
    operation: { sync: { revision: app.spec!.source.targetRevision } },
    syncResult: { revision: app.spec!.source.targetRevision },
  },
})

/**
 * FIXTURE shaped after the documented AICR 1.x layout (research/aicr-newer.md §3; no 1.x bundle or gate image runs
 * here): the `<component>-readiness` release is a local chart whose Job `<component>-readiness-gate` runs the gate.
 * Argo CD's status once the sync at the revision succeeded, with the Job's health as Argo CD assesses a Job:
 * Progressing while it runs, Degraded once it failed (past its backoffLimit), Healthy once it completed.
 */
export const gateStatus = (app: Application, job: "Progressing" | "Degraded" | "Healthy") => {
  const c = app.metadata.name.replace(/-readiness$/u, "")
  const message = { Progressing: undefined, Degraded: "Job has reached the specified backoff limit", Healthy: "Job completed" }[job]
  return {
    ...readyStatus(app),
    health: { status: job },
    resources: [
      { kind: "ServiceAccount", name: `${c}-readiness-gate`, namespace: app.spec!.destination.namespace, health: { status: "Healthy" } },
      { kind: "ConfigMap", name: `${c}-readiness-bundle`, namespace: app.spec!.destination.namespace },
      {
        group: "batch",
        kind: "Job",
        name: `${c}-readiness-gate`,
        namespace: app.spec!.destination.namespace,
        health: { status: job, ...(message ? { message } : {}) },
      },
    ],
  }
}
