/**
 * teardown: pure. The runtime's cleanup finalizer and what the planner does while the runtime is being deleted
 * (operator.md §3.2, §4.7, §4.15; ADR 20261202-runtime-deletion):
 *
 * - While the runtime lives, the planner adds `operator.aicr.run/cleanup` when it is missing (admission lets the
 *   operator's identities change nothing else on the runtime).
 * - Once it is being deleted, no rollout towards any target is created. An open rollout nobody approved is
 *   Superseded; an approved one runs to its end (revoking it stops it after the step in flight).
 * - Then a `Remove` rollout lists every release that may run — the active plan's, and those of approved rollouts
 *   that ended without success since — each once, in the reverse dependency order of the newest plan naming it. It
 *   awaits approval like every rollout; the step executor deletes the Applications and Argo CD prunes their
 *   resources through its resources finalizer.
 * - When the Remove rollout Succeeded, or nothing was ever rolled out, the planner removes its finalizer and the
 *   runtime goes. Plan, content and assessment ConfigMaps and the rollouts stay, as the record.
 */
import {
  ANNOTATION_EDITED_BY,
  ANNOTATION_RETRY,
  type ClusterRuntime,
  FINALIZER_CLEANUP,
  LABEL_PLAN,
  LABEL_RUNTIME_UID,
  type Plan,
  planKey,
  type PlanRelease,
  rolloutName,
  type RolloutStep,
  type RuntimeRollout,
} from "@aicr/api"
import { shortDigest, toMillisTime as iso } from "@aicr/conditions"
import type { JsonPatchOp } from "@aicr/kube"
import { assessWithoutUpgradeCheck } from "./assess"
import type { Close, Decision, NewRollout } from "./decide"
import type { Observed } from "./gather"
import { attemptsFor, isApproved, outcomeOf, type RolloutView } from "./rollouts"

export const isDeleting = (rt: ClusterRuntime): boolean => rt.metadata.deletionTimestamp !== undefined

/** The JSON patch that adds or removes our finalizer and nothing else, or undefined when there is nothing to do. */
export const finalizerPatch = (rt: ClusterRuntime, want: "Add" | "Remove"): ReadonlyArray<JsonPatchOp> | undefined => {
  const fs = rt.metadata.finalizers
  const i = (fs ?? []).indexOf(FINALIZER_CLEANUP)
  if (want === "Remove")
    return i < 0
      ? undefined
      : [
          { op: "test", path: `/metadata/finalizers/${i}`, value: FINALIZER_CLEANUP },
          { op: "remove", path: `/metadata/finalizers/${i}` },
        ]
  if (i >= 0) return undefined
  // The tests make the patch fail (409/422, retried) if another writer changed the finalizers meanwhile.
  return fs === undefined
    ? [
        { op: "test", path: "/metadata/resourceVersion", value: rt.metadata.resourceVersion },
        { op: "add", path: "/metadata/finalizers", value: [FINALIZER_CLEANUP] },
      ]
    : [
        { op: "test", path: "/metadata/finalizers", value: fs },
        { op: "add", path: "/metadata/finalizers/-", value: FINALIZER_CLEANUP },
      ]
}

/** The finalizer write of a pass while the runtime lives. */
export const finalizerWhileLive = (rt: ClusterRuntime): "Add" | undefined => (finalizerPatch(rt, "Add") === undefined ? undefined : "Add")

const ENDED_WITHOUT_SUCCESS = new Set(["Failed", "Revoked", "Expired"])

/**
 * The plans whose releases may run, newest first: the active plan, and before it the targets of approved rollouts
 * newer than the active plan's that ended without success (their steps may have run).
 */
export const plansToRemove = (view: RolloutView): ReadonlyArray<string> => {
  const digests: string[] = []
  for (const r of view.all) {
    const outcome = outcomeOf(r)
    if (outcome === "Succeeded") {
      if (r.spec.kind !== "Remove" && !digests.includes(r.spec.toDigest)) digests.push(r.spec.toDigest)
      break
    }
    if (r.spec.kind !== "Remove" && isApproved(r) && ENDED_WITHOUT_SUCCESS.has(outcome ?? "") && !digests.includes(r.spec.toDigest))
      digests.push(r.spec.toDigest)
  }
  return digests
}

/** Remove steps: each release once, in the reverse dependency order of the newest plan that names it. */
export const removalSteps = (plans: ReadonlyArray<Plan>): RolloutStep[] => {
  const seen = new Set<string>()
  const steps: RolloutStep[] = []
  for (const p of plans) {
    for (const r of [...p.releases].sort((a, b) => b.order - a.order)) {
      if (seen.has(r.name)) continue
      seen.add(r.name)
      steps.push({ release: r.name, namespace: r.namespace, action: "Remove", ...(r.upstream?.version ? { from: r.upstream.version } : {}) })
    }
  }
  return steps
}

/** The Remove rollout of these plans (newest first), with its assessment (every release `removed`). */
export const removalRollout = (o: Observed, plans: ReadonlyArray<Plan>, active: string | undefined): NewRollout => {
  const uid = o.runtime.metadata.uid!
  const newest = plans[0]!
  const toDigest = newest.desiredStateDigest
  const releases: PlanRelease[] = plans.flatMap((p) => p.releases).filter((r, i, all) => all.findIndex((x) => x.name === r.name) === i)
  const assessment = assessWithoutUpgradeCheck({ ...newest, releases }, { ...newest, releases: [] }, newest.aicr?.version ?? "unknown")
  const requestedBy = o.runtime.metadata.annotations?.[ANNOTATION_EDITED_BY]
  const name = rolloutName(toDigest, attemptsFor(o.rollouts, toDigest) + 1)
  const rollout: RuntimeRollout = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "RuntimeRollout",
    metadata: { name, labels: { [LABEL_RUNTIME_UID]: uid, [LABEL_PLAN]: planKey(toDigest) } },
    spec: {
      runtimeUID: uid,
      ...(active !== undefined ? { fromDigest: active } : {}),
      toDigest,
      kind: "Remove",
      deadline: iso(o.now + o.deadlineMs),
      requiresApproval: true,
      ...(requestedBy ? { requestedBy } : {}),
      steps: removalSteps(plans),
    },
  }
  return { rollout, assessment }
}

/** What a pass does while the runtime is being deleted; `closes` already holds the outcomes the open rollout reached. */
export const decideDeletion = (o: Observed, view: RolloutView, closes: Close[]): Decision => {
  const base = {
    closes,
    writePlan: undefined,
    create: undefined,
    active: view.active,
    target: undefined,
    targetSince: undefined,
    ended: undefined,
    open: undefined,
  } as const
  const deleting = (message: string) => ({ _tag: "Deleting", message }) as const
  const open = view.open
  if (open !== undefined && open.spec.kind !== "Remove") {
    if (isApproved(open)) {
      return {
        ...base,
        open,
        finalizer: undefined,
        plan: deleting(
          `approved rollout ${open.metadata.name} runs to its end before the removal is planned (kubectl aicr revoke ${open.metadata.name} stops it after the step in flight)`,
        ),
      }
    }
    closes.push({ rollout: open, outcome: "Superseded" })
  } else if (open !== undefined) {
    return { ...base, open, finalizer: undefined, plan: deleting(`rollout ${open.metadata.name} removes every release`) }
  }

  // `view` carries this pass's closes, so the newest Remove rollout (none is open here) shows how it ended.
  const removal = view.all.find((r) => r.spec.kind === "Remove")
  const removalOutcome = removal === undefined ? undefined : outcomeOf(removal)
  if (removal !== undefined && removalOutcome === "Succeeded") {
    return {
      ...base,
      finalizer: "Remove",
      plan: deleting(`rollout ${removal.metadata.name} removed every release; the finalizer ${FINALIZER_CLEANUP} is removed`),
    }
  }
  if (removal !== undefined && removalOutcome !== undefined && o.runtime.metadata.annotations?.[ANNOTATION_RETRY] !== removal.metadata.name) {
    return { ...base, finalizer: undefined, ended: removal, plan: deleting(`removal rollout ${removal.metadata.name} ended ${removalOutcome}`) }
  }

  const digests = plansToRemove(view)
  if (digests.length === 0) return { ...base, finalizer: "Remove", plan: deleting(`nothing was rolled out; the finalizer ${FINALIZER_CLEANUP} is removed`) }
  const plans: Plan[] = []
  for (const d of digests) {
    const p = o.plans.get(d)
    if (p === undefined || !p.ok) {
      return {
        ...base,
        finalizer: undefined,
        plan: {
          _tag: "Blocked",
          reason: "PlanUnreadable",
          message: `plan ${shortDigest(d)}, whose releases must be removed, ${p === undefined ? "has no plan ConfigMap" : `is unreadable: ${p.ok ? "" : p.why}`}; restore it, or remove the finalizer ${FINALIZER_CLEANUP} by hand (the Applications stay, orphaned)`,
        },
      }
    }
    plans.push(p.plan)
  }
  const create = removalRollout(o, plans, view.active)
  return { ...base, finalizer: undefined, create, open: create.rollout, plan: deleting(`rollout ${create.rollout.metadata.name} removes every release`) }
}
