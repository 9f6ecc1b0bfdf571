/**
 * readiness: pure. After a rollout ended, the stack is still watched (operator.md §3.2 `Ready`: "every release ready
 * at its current revision"; §10 item 9): each release of the active plan is judged by the one ready-at-revision
 * predicate of `@aicr/argocd` (`notReadyAt`, the step executor's), on its live Argo CD Application, and a release
 * that is not is named with Argo CD's own words — the Application's health and sync status, its `*Error`
 * conditions, and each managed resource Argo CD lists out of sync or, where the application controller persists
 * resource health (`--persist-resource-health`, off by default since Argo CD 3.0), unhealthy with its health
 * message. Argo CD 3.x keeps no health message on the Application itself.
 *
 * A short blip is not an outage: a release counts only once it has been not ready for the grace period
 * (`--not-ready-grace`) as this process saw it (`NotReadySince`, in memory: a restarted planner starts the grace
 * again). Recovery counts at once.
 */
import { digestOf, type KubeObject, LABEL_RUNTIME_UID, type Plan } from "@aicr/api"
import { type Application, type ApplicationResource, comparedCurrentSource, helmSourceOf, notReadyAt } from "@aicr/argocd"
import { shortDigest } from "@aicr/conditions"
import { Clock, Context, Effect } from "effect"

export interface ReleaseNotReady {
  readonly release: string
  /** `notReadyAt`'s reasons, then the resources Argo CD reports unhealthy or out of sync. */
  readonly why: ReadonlyArray<string>
}

/** A managed resource as Argo CD reports it (`status.resources[]`): with its sync status too. */
type Resource = ApplicationResource & { readonly status?: string }

const MAX_RESOURCES = 3

/**
 * The managed resources Argo CD lists not Synced, or not Healthy (only where the controller persists resource health
 * in the Application), in Argo CD's words.
 */
export const resourceTrouble = (app: Application): string[] => {
  const bad = ((app.status?.resources ?? []) as ReadonlyArray<Resource>).filter(
    (r) => (r.health?.status !== undefined && r.health.status !== "Healthy") || (r.status !== undefined && r.status !== "Synced"),
  )
  const text = (r: Resource) => {
    const what = `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`
    const health =
      r.health?.status !== undefined && r.health.status !== "Healthy" ? ` ${r.health.status}${r.health.message ? `: ${r.health.message}` : ""}` : ""
    const sync = r.status !== undefined && r.status !== "Synced" ? ` ${r.status}` : ""
    return `${what}${sync}${health}`
  }
  const shown = bad.slice(0, MAX_RESOURCES).map(text)
  return bad.length > MAX_RESOURCES ? [...shown, `and ${bad.length - MAX_RESOURCES} more resources`] : shown
}

/**
 * Every release of the plan whose Application (in the engine namespace, named for the release, labelled with this
 * runtime's UID) is missing or not ready at the release's chart digest — the revision the step executor wrote.
 */
export const releasesNotReady = (plan: Plan, applications: ReadonlyArray<Application>, runtimeUID: string, engineNamespace: string): ReleaseNotReady[] =>
  plan.releases.flatMap((release): ReleaseNotReady[] => {
    const app = applications.find((a) => a.metadata.name === release.name && a.metadata.labels?.[LABEL_RUNTIME_UID] === runtimeUID)
    if (app === undefined) return [{ release: release.name, why: [`its Application ${engineNamespace}/${release.name} is missing`] }]
    const why = notReadyAt(app, release.chart.digest)
    return why.length === 0 ? [] : [{ release: release.name, why: [...why, ...resourceTrouble(app)] }]
  })

/** What `Ready` says about the stack of the active plan. */
export type StackReadiness =
  | { readonly _tag: "Ready" }
  /** Something is not ready, but for less than the grace period: `Ready` stays as it is; look again in `dueMs`. */
  | { readonly _tag: "Blip"; readonly dueMs: number }
  | { readonly _tag: "NotReady"; readonly message: string }

const MAX_RELEASES = 4

/** The plan release's chart, for messages: `<version>@sha256:<12 hex>`. */
const chartText = (plan: Plan, release: string) => {
  const r = plan.releases.find((x) => x.name === release)
  return r === undefined ? "" : ` at ${helmSourceOf(r.chart.ref).version}@sha256:${shortDigest(r.chart.digest)}`
}

export const sinceKey = (plan: Plan, release: string) => `${plan.desiredStateDigest}/${release}`

/**
 * The judgement: releases not ready for at least `graceMs` (by `since`, when each was first seen so) make `Ready`
 * NotReady, naming each with Argo CD's words; younger ones are a blip, looked at again when their grace ends.
 */
export const judgeStack = (
  plan: Plan,
  notReady: ReadonlyArray<ReleaseNotReady>,
  since: ReadonlyMap<string, number>,
  now: number,
  graceMs: number,
): StackReadiness => {
  if (notReady.length === 0) return { _tag: "Ready" }
  const seen = (r: ReleaseNotReady) => since.get(sinceKey(plan, r.release)) ?? now
  const ripe = notReady.filter((r) => now - seen(r) >= graceMs)
  if (ripe.length === 0) return { _tag: "Blip", dueMs: Math.max(1, Math.min(...notReady.map((r) => seen(r) + graceMs - now))) }
  const named = ripe.slice(0, MAX_RELEASES).map((r) => `release ${r.release}${chartText(plan, r.release)}: ${r.why.join("; ")}`)
  const more = ripe.length > MAX_RELEASES ? `; and ${ripe.length - MAX_RELEASES} more` : ""
  const count = ripe.length === 1 ? "1 release is" : `${ripe.length} releases are`
  return {
    _tag: "NotReady",
    message: `Plan ${shortDigest(plan.desiredStateDigest)} is rolled out, but ${count} not ready at ${ripe.length === 1 ? "its revision" : "their revisions"} (Argo CD): ${named.join(" | ")}${more}`,
  }
}

/** When each release was first seen not ready, in this process (the grace period's start). */
export interface NotReadySinceShape {
  /** Records the keys not ready now (a new one from now, a known one keeps its time; others are forgotten). */
  readonly observe: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, number>>
}

export class NotReadySince extends Context.Service<NotReadySince, NotReadySinceShape>()("@aicr/planner/NotReadySince") {}

export const makeNotReadySince = (): NotReadySinceShape => {
  let seen = new Map<string, number>()
  return {
    observe: (keys) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        seen = new Map(keys.map((k) => [k, seen.get(k) ?? now] as const))
        return seen
      }),
  }
}

/** An Application as the planner's informer keeps it: its name and labels, and a digest of what the planner reads. */
export interface WatchedApplication extends KubeObject {
  readonly watched: string
}

/**
 * The planner's informer keeps of each Application only its metadata and a digest of what the planner reads of it:
 * the annotations and spec (re-adoption's record and spec digest) and of the status what readiness reads. An Argo CD
 * status write that changes none of it (the `reconciledAt` of every comparison, operation timestamps) is then an
 * update with the same digest, which the informer's `ignore` drops instead of starting a pass.
 */
export const watchedProjection = (obj: KubeObject): WatchedApplication => {
  const app = obj as Application
  const st = app.status
  const op = st?.operationState
  const watched = digestOf({
    annotations: app.metadata.annotations ?? {},
    deleting: app.metadata.deletionTimestamp !== undefined,
    spec: app.spec ?? null,
    operation: app.operation !== undefined,
    sync: [st?.sync?.status ?? null, st?.sync?.revision ?? null, app.spec !== undefined && comparedCurrentSource(app)],
    health: [st?.health?.status ?? null, st?.health?.message ?? null],
    op: op === undefined ? null : [op.phase ?? null, op.message ?? null, op.operation?.sync?.revision ?? null, op.syncResult?.revision ?? null],
    conditions: (st?.conditions ?? []).map((c) => [c.type, c.message ?? null]),
    resources: resourceTrouble(app),
  })
  const m = app.metadata
  return {
    apiVersion: app.apiVersion,
    kind: app.kind,
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, labels: m.labels },
    watched,
  }
}

/** An update that changes nothing the planner reads (same labels, same digest) starts no pass. */
export const unchangedForPlanner = (old: KubeObject, next: KubeObject): boolean =>
  (old as WatchedApplication).watched === (next as WatchedApplication).watched && digestOf(old.metadata.labels ?? {}) === digestOf(next.metadata.labels ?? {})
