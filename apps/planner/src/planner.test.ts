import {
  ANNOTATION_EDITED_BY,
  ANNOTATION_RETRY,
  type ClusterRuntime,
  FINALIZER_CLEANUP,
  LABEL_OUTCOME,
  LABEL_RUNTIME_UID,
  type Plan,
  type RolloutKind,
  type RuntimeRollout,
  sha256,
} from "@aicr/api"
import type { JobState } from "@aicr/aicr"
import type { Application } from "@aicr/argocd"
import { OciError } from "@aicr/oras"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { assessWithoutUpgradeCheck, versionJump } from "./assess"
import { composePlan, readContent } from "./compose"
import { decide } from "./decide"
import { checkWith } from "./chart-registry"
import { chartsOf } from "./charts"
import type { Observed, PlanRead } from "./gather"
import { judgeStack, makeNotReadySince, releasesNotReady, sinceKey, unchangedForPlanner, watchedProjection } from "./readiness"
import { planSteps } from "./steps"
import { plannedCondition, readyCondition, runtimeStatus, stalledCondition, watchedPlan } from "./status"
import { finalizerPatch } from "./teardown"

const UID = "0b5c7a52-3f0e-4a8e-9d0a-3c8e5b1f2a90"
const NOW = Date.parse("2026-12-02T12:00:00Z")
const digest = (s: string) => sha256(s)

interface Comp {
  name: string
  namespace: string
  version?: string
  deps?: string[]
  source?: string
}
const content = (comps: Comp[], values: Record<string, string> = {}) => {
  const recipe = {
    componentRefs: comps.map((c) => ({
      name: c.name,
      namespace: c.namespace,
      chart: c.name,
      version: c.version,
      source: c.source ?? "https://charts.example",
      dependencyRefs: c.deps,
    })),
    deploymentOrder: comps.map((c) => c.name),
  }
  const files = Object.fromEntries(comps.map((c) => [`${c.name}/values.yaml`, values[c.name] ?? `replicas: 1 # ${c.name}\n`]))
  return { "recipe.json": JSON.stringify(recipe), "values.json": JSON.stringify({ kind: "Bundle", deployer: "helm", files }), "snapshot.json": "{}" }
}
const mirrorOf = (comps: Comp[], extra: Record<string, string> = {}) => ({
  inputDigest: digest("in"),
  bundle: `127.0.0.1:5000/aicr/cluster/bundles/cluster:input-1@${digest("bundle")}`,
  charts: [
    ...comps.map((c) => ({ release: c.name, ref: `127.0.0.1:5000/aicr/cluster/charts/${c.name}:${c.version ?? "0.0.0"}@${digest(`${c.name}@${c.version}`)}` })),
    ...Object.entries(extra).map(([release, ref]) => ({ release, ref })),
  ],
})

const V0_10 = [
  { name: "cert-manager", namespace: "cert-manager", version: "v1.17.2" },
  { name: "gpu-operator", namespace: "gpu-operator", version: "v25.10.1", deps: ["cert-manager"] },
  { name: "kai-scheduler", namespace: "kai-scheduler", version: "v0.12.17", deps: ["gpu-operator"] },
  { name: "nvsentinel", namespace: "nvsentinel", version: "v0.10.0", deps: ["cert-manager", "gpu-operator"] },
]
const V0_11 = V0_10.map((c) => (c.name === "kai-scheduler" ? { ...c, version: "v0.13.0" } : c.name === "nvsentinel" ? { ...c, version: "v1.1.0" } : c))

const planOf = (comps: Comp[], values: Record<string, string> = {}, aicr = "v0.11.1"): Plan => {
  const c = readContent(content(comps, values))
  if (!c.ok) throw new Error(c.why)
  const p = composePlan({
    runtimeUID: UID,
    resolution: { inputDigest: digest("in"), aicr: { version: aicr, image: `ghcr.io/nvidia/aicr:${aicr}` } },
    mirror: mirrorOf(comps),
    contentConfigMap: "aicr-content-x",
    content: c.value,
    project: "aicr",
    now: "2026-12-02T11:00:00Z",
  })
  if (!p.ok) throw new Error(p.why)
  return p.value
}

const cond = (type: string, status: "True" | "False" | "Unknown", reason: string, generation = 1) => ({
  type,
  status,
  reason,
  message: `${type} ${reason}`,
  observedGeneration: generation,
  lastTransitionTime: "2026-12-02T10:00:00Z",
})

const runtime = (
  extra: {
    annotations?: Record<string, string>
    spec?: Record<string, unknown>
    plans?: Record<string, unknown>
    metadata?: Partial<ClusterRuntime["metadata"]>
  } = {},
): ClusterRuntime => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "ClusterRuntime",
  metadata: {
    name: "cluster",
    uid: UID,
    generation: 1,
    resourceVersion: "7",
    ...extra.metadata,
    annotations: { [ANNOTATION_EDITED_BY]: "alice", ...extra.annotations },
  },
  spec: { intent: "training", validation: { deployment: "Disabled" }, ...extra.spec },
  status: {
    conditions: [cond("Resolved", "True", "InputsResolved"), cond("Mirrored", "True", "ContentMirrored")],
    resolution: { inputDigest: digest("in"), contentConfigMap: "aicr-content-x", aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" } },
    mirror: mirrorOf(V0_11),
    ...(extra.plans ? { plans: extra.plans } : {}),
  },
})

const planRead = (p: Plan): [string, PlanRead] => [p.desiredStateDigest, { ok: true, plan: p, configMap: "aicr-plan-x" }]

const observed = (o: Partial<Observed> & { rt?: ClusterRuntime } = {}): Observed => {
  const rt = o.rt ?? runtime()
  return {
    runtime: rt,
    generation: 1,
    resolved: { ...cond("Resolved", "True", "InputsResolved"), current: true },
    mirrored: { ...cond("Mirrored", "True", "ContentMirrored"), current: true },
    resolution: rt.status?.resolution,
    mirror: rt.status?.mirror,
    status: rt.status?.plans,
    content: { _tag: "Found", data: content(V0_11) },
    plans: new Map(),
    rollouts: [],
    applications: [],
    engineNamespace: "argocd",
    namespace: "aicr-system",
    project: "aicr",
    windowMs: 0,
    deadlineMs: 86_400_000,
    now: NOW,
    ...o,
  }
}

const rollout = (
  name: string,
  toDigest: string,
  extra: {
    labels?: Record<string, string>
    approved?: boolean
    conditions?: unknown[]
    fromDigest?: string
    created?: string
    kind?: RolloutKind
    runtimeUID?: string
  } = {},
): RuntimeRollout => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "RuntimeRollout",
  metadata: { name, generation: 1, creationTimestamp: extra.created ?? "2026-12-02T11:00:00Z", labels: extra.labels ?? {} },
  spec: {
    runtimeUID: extra.runtimeUID ?? UID,
    toDigest,
    ...(extra.fromDigest ? { fromDigest: extra.fromDigest } : {}),
    kind: extra.kind ?? (extra.fromDigest ? "Upgrade" : "Install"),
    deadline: "2026-12-03T11:00:00Z",
    requiresApproval: true,
    ...(extra.approved
      ? { approval: { approvedBy: "bob", reason: "ok", approvedAt: "2026-12-02T11:10:00Z", expiresAt: "2026-12-02T17:00:00Z", toDigest } }
      : {}),
  },
  ...(extra.conditions ? { status: { conditions: extra.conditions as never } } : {}),
})

describe("planner: composing the plan", () => {
  it("pins every release to the mirrored chart digest, in deployment order, and the same inputs give the same digest", () => {
    const a = planOf(V0_11)
    const b = planOf(V0_11)
    expect(a.desiredStateDigest).toBe(b.desiredStateDigest)
    expect(a.releases.map((r) => [r.name, r.order])).toEqual([
      ["cert-manager", 0],
      ["gpu-operator", 1],
      ["kai-scheduler", 2],
      ["nvsentinel", 3],
    ])
    expect(a.releases[2]).toMatchObject({
      chart: { ref: "127.0.0.1:5000/aicr/cluster/charts/kai-scheduler:v0.13.0", digest: digest("kai-scheduler@v0.13.0") },
      upstream: { version: "v0.13.0" },
      dependsOn: ["gpu-operator"],
    })
  })

  it("changes the digest when a values file changes, and not when only the creation time does", () => {
    expect(planOf(V0_11, { "gpu-operator": "driver: {enabled: false}\n" }).desiredStateDigest).not.toBe(planOf(V0_11).desiredStateDigest)
  })

  it("adds a <release>-manifests wrapper release after a chart that carries manifests", () => {
    const c = readContent(content(V0_11))
    if (!c.ok) throw new Error(c.why)
    const p = composePlan({
      runtimeUID: UID,
      resolution: {},
      mirror: mirrorOf(V0_11, { "gpu-operator-manifests": `r/wrappers/gpu-operator:0.0.0-aicr-1@${digest("w")}` }),
      contentConfigMap: "c",
      content: c.value,
      project: "aicr",
      now: "t",
    })
    expect(p.ok && p.value.releases.map((r) => r.name)).toEqual(["cert-manager", "gpu-operator", "gpu-operator-manifests", "kai-scheduler", "nvsentinel"])
    expect(p.ok && p.value.releases[2]).toMatchObject({ dependsOn: ["gpu-operator"], namespace: "gpu-operator" })
  })

  it("refuses a mirror that does not cover a release, naming it", () => {
    const c = readContent(content(V0_11))
    if (!c.ok) throw new Error(c.why)
    const p = composePlan({ runtimeUID: UID, resolution: {}, mirror: { charts: [] }, contentConfigMap: "c", content: c.value, project: "aicr", now: "t" })
    expect(p).toEqual({ ok: false, why: "the mirror recorded no chart for release cert-manager" })
  })
})

describe("planner: assessment without upgrade-check", () => {
  it.each([
    ["v0.12.17", "v0.13.0", "1 minor", true, false],
    ["v0.10.0", "v1.1.0", "1 major", true, false],
    ["2.55.0", "2.55.3", "3 patches", false, false],
    ["v25.3.0", "v25.10.1", "7 minors", false, false],
    ["v1.1.0", "v0.10.0", "1 major", true, true],
    ["1.0.0-rc.1", "1.0.0-rc.2", "prerelease", true, false],
  ])("%s → %s is %s (breaking %s, downgrade %s)", (from, to, jump, breaking, downgrade) => {
    expect(versionJump(from, to)).toEqual({ jump, breaking, downgrade })
  })

  it("rates the AICR v0.10.16 → v0.11.1 upgrade: kai-scheduler and nvsentinel breaking, unknown, never safe", () => {
    const a = assessWithoutUpgradeCheck(planOf(V0_10), planOf(V0_11), "v0.11.1")
    expect(a.components).toEqual([
      expect.objectContaining({
        component: "kai-scheduler",
        change: "version",
        from: "v0.12.17",
        to: "v0.13.0",
        verdict: "unknown",
        reason: "no-upgrade-check",
        jump: "1 minor",
        breaking: true,
        failsRun: true,
      }),
      expect.objectContaining({
        component: "nvsentinel",
        change: "version",
        from: "v0.10.0",
        to: "v1.1.0",
        verdict: "unknown",
        jump: "1 major",
        breaking: true,
      }),
    ])
    expect(a.components[0]!.explanation).toContain("AICR v0.11.1 has no upgrade-check")
    expect(a.components.some((c) => c.verdict === "safe")).toBe(false)
    expect(a.summary).toEqual({ components: 2, failing: 2 })
  })

  it("says why nothing is rated: this AICR has no upgrade-check; never safe", () => {
    const a = assessWithoutUpgradeCheck(planOf(V0_10), planOf(V0_11), "v0.10.16")
    expect(a.components[0]!.explanation).toBe("AICR v0.10.16 has no upgrade-check, so it cannot rate this transition; an approver must judge it")
    expect(a.components.every((c) => c.verdict !== "safe")).toBe(true)
  })

  it("a first install lists every component as added, with no verdict", () => {
    const a = assessWithoutUpgradeCheck(undefined, planOf(V0_11), "v0.11.1")
    expect(a.components.map((c) => [c.component, c.change, c.verdict])).toEqual(V0_11.map((c) => [c.name, "added", undefined]))
  })

  it("a values-only change and a namespace move are unknown too", () => {
    const moved = V0_11.map((c) => (c.name === "cert-manager" ? { ...c, namespace: "certs" } : c))
    const a = assessWithoutUpgradeCheck(planOf(V0_11), planOf(moved, { "gpu-operator": "x: 1\n" }), "v0.11.1")
    expect(a.components.map((c) => [c.component, c.change, c.verdict])).toEqual([
      ["cert-manager", "identity", "unknown"],
      ["gpu-operator", "values", "unknown"],
    ])
  })
})

describe("planner: steps", () => {
  it("installs and upgrades in dependency order, removes in reverse order, and skips unchanged releases", () => {
    const from = planOf([...V0_10, { name: "old-a", namespace: "x", version: "1.0.0" }, { name: "old-b", namespace: "x", version: "1.0.0", deps: ["old-a"] }])
    const to = planOf([...V0_11, { name: "new", namespace: "n", version: "0.1.0" }])
    const steps = planSteps(from, to, assessWithoutUpgradeCheck(from, to, "v0.11.1"))
    expect(steps.map((s) => `${s.action} ${s.release}${s.verdict ? ` ${s.verdict}` : ""}`)).toEqual([
      "Upgrade kai-scheduler unknown",
      "Upgrade nvsentinel unknown",
      "Install new",
      "Remove old-b",
      "Remove old-a",
    ])
    expect(steps[0]).toMatchObject({ from: "v0.12.17", to: "v0.13.0", namespace: "kai-scheduler" })
  })
})

describe("planner: decide", () => {
  const target = planOf(V0_11)

  it("waits for Resolved and Mirrored, read only when current", () => {
    const d = decide(observed({ mirrored: { type: "Mirrored", status: "Unknown", reason: "Stale", message: "stale", current: false } }))
    expect(d.plan).toMatchObject({ _tag: "AwaitingResolution", message: "Waiting for Mirrored=True at generation 1: Mirrored is Unknown/Stale" })
    expect(d.create).toBeUndefined()
  })

  it("writes the plan and holds the rollout back until the target held still for the window", () => {
    const d = decide(observed({ windowMs: 600_000 }))
    expect(d.writePlan?.desiredStateDigest).toBe(target.desiredStateDigest)
    expect(d.plan).toMatchObject({ _tag: "Stabilizing", until: NOW + 600_000 })
    expect(d.plan._tag === "Stabilizing" && d.plan.message).toContain("(600s left)")
    // A newer target restarts it; the same target keeps its start.
    const later = decide(
      observed({
        windowMs: 600_000,
        now: NOW + 300_000,
        rt: runtime({ plans: { target: target.desiredStateDigest, targetSince: new Date(NOW).toISOString() } }),
      }),
    )
    expect(later.plan).toMatchObject({ _tag: "Stabilizing", until: NOW + 600_000 })
    const other = decide(
      observed({ windowMs: 600_000, now: NOW + 300_000, rt: runtime({ plans: { target: digest("older"), targetSince: new Date(NOW).toISOString() } }) }),
    )
    expect(other.plan).toMatchObject({ _tag: "Stabilizing", until: NOW + 900_000 })
  })

  it("creates an Install rollout awaiting approval once the window passed, requested by the runtime's last editor", () => {
    const d = decide(observed({ plans: new Map([planRead(target)]) }))
    expect(d.writePlan).toBeUndefined()
    const r = d.create!.rollout
    expect(r.metadata.name).toMatch(/^cluster-[a-f0-9]{12}-1$/)
    expect(r.spec).toMatchObject({
      kind: "Install",
      toDigest: target.desiredStateDigest,
      requiresApproval: true,
      requestedBy: "alice",
      deadline: "2026-12-03T12:00:00.000Z",
    })
    expect(r.spec.fromDigest).toBeUndefined()
    expect(r.spec.steps!.map((s) => s.action)).toEqual(["Install", "Install", "Install", "Install"])
    expect(readyCondition(observed(), d)).toMatchObject({ status: "False", reason: "RollingOut", message: expect.stringContaining("awaiting approval") })
  })

  it("creates an Upgrade from the active plan with the breaking, unknown steps", () => {
    const active = planOf(V0_10)
    const done = rollout("cluster-aaaaaaaaaaaa-1", active.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })
    const d = decide(observed({ plans: new Map([planRead(target), planRead(active)]), rollouts: [done] }))
    expect(d.create!.rollout.spec).toMatchObject({ kind: "Upgrade", fromDigest: active.desiredStateDigest })
    expect(d.create!.rollout.spec.steps).toEqual([
      { release: "kai-scheduler", namespace: "kai-scheduler", action: "Upgrade", verdict: "unknown", from: "v0.12.17", to: "v0.13.0" },
      { release: "nvsentinel", namespace: "nvsentinel", action: "Upgrade", verdict: "unknown", from: "v0.10.0", to: "v1.1.0" },
    ])
  })

  it("does nothing when the active plan is the target, and Ready says so", () => {
    const done = rollout("cluster-bbbbbbbbbbbb-1", target.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })
    const o = observed({ plans: new Map([planRead(target)]), rollouts: [done] })
    const d = decide(o)
    expect(d.create).toBeUndefined()
    expect(readyCondition(o, d)).toMatchObject({ status: "True", reason: "ValidationDisabled" })
  })

  it("supersedes a rollout nobody approved when the target changes, but lets an approved one end first", () => {
    const stale = rollout("cluster-cccccccccccc-1", digest("older"))
    const d = decide(observed({ plans: new Map([planRead(target)]), rollouts: [stale] }))
    expect(d.closes).toEqual([{ rollout: stale, outcome: "Superseded" }])
    expect(d.create).toBeDefined()
    const running = rollout("cluster-cccccccccccc-1", digest("older"), { approved: true })
    const e = decide(observed({ plans: new Map([planRead(target)]), rollouts: [running] }))
    expect(e.closes).toEqual([])
    expect(e.create).toBeUndefined()
    expect(e.plan).toMatchObject({ _tag: "Planned", message: expect.stringContaining("waits for rollout cluster-cccccccccccc-1") })
  })

  it("closes a rollout whose steps completed as Succeeded (validation Disabled) and one that failed as Failed", () => {
    const ok = rollout("cluster-dddddddddddd-1", target.desiredStateDigest, { approved: true, conditions: [cond("Progressing", "True", "StepsCompleted")] })
    const d = decide(observed({ plans: new Map([planRead(target)]), rollouts: [ok] }))
    expect(d.closes).toEqual([{ rollout: ok, outcome: "Succeeded" }])
    expect(d.active).toBe(target.desiredStateDigest)
    const bad = rollout("cluster-dddddddddddd-1", target.desiredStateDigest, { approved: true, conditions: [cond("Progressing", "False", "RolloutFailed")] })
    const e = decide(observed({ plans: new Map([planRead(target)]), rollouts: [bad] }))
    expect(e.closes).toEqual([{ rollout: bad, outcome: "Failed" }])
    expect(e.create).toBeUndefined()
    expect(stalledCondition(observed(), e)).toMatchObject({
      status: "True",
      reason: "RolloutFailed",
      message: expect.stringContaining("operator.aicr.run/retry=cluster-dddddddddddd-1"),
    })
  })

  it("with validation Required closes Succeeded only after Validated=True, Failed on each terminal not-validated reason, and Ready names the run", () => {
    const required = runtime({ spec: { validation: { deployment: "Required" } } })
    const steps = cond("Progressing", "True", "StepsCompleted")
    const waiting = rollout("cluster-dddddddddddd-1", target.desiredStateDigest, {
      approved: true,
      conditions: [steps, cond("Validated", "False", "Validating")],
    })
    expect(decide(observed({ rt: required, plans: new Map([planRead(target)]), rollouts: [waiting] })).closes).toEqual([])
    for (const reason of ["ValidationFailed", "ValidationIncomplete", "ValidationEmpty", "ValidationUnverified", "EvidenceUnsigned"]) {
      const failed = rollout("cluster-dddddddddddd-1", target.desiredStateDigest, { approved: true, conditions: [steps, cond("Validated", "False", reason)] })
      const e = decide(observed({ rt: required, plans: new Map([planRead(target)]), rollouts: [failed] }))
      expect(e.closes, reason).toEqual([{ rollout: failed, outcome: "Failed" }])
      expect(stalledCondition(observed({ rt: required }), e)).toMatchObject({
        status: "True",
        reason: "RolloutFailed",
        message: expect.stringContaining(`(${reason}: Validated ${reason})`),
      })
    }
    const passed = {
      ...rollout("cluster-dddddddddddd-1", target.desiredStateDigest, { approved: true, conditions: [steps, cond("Validated", "True", "ValidationPassed")] }),
    }
    const f = decide(observed({ rt: required, plans: new Map([planRead(target)]), rollouts: [passed] }))
    expect(f.closes).toEqual([{ rollout: passed, outcome: "Succeeded" }])
    const closed = {
      ...passed,
      metadata: { ...passed.metadata, labels: { [LABEL_OUTCOME]: "Succeeded" } },
      status: {
        ...passed.status,
        validation: { runID: "aicr-validate-0123456789ab", result: "Passed" as const, evidenceRef: "r/aicr/cluster/evidence/cluster@sha256:" + "e".repeat(64) },
      },
    }
    const o = observed({ rt: required, plans: new Map([planRead(target)]), rollouts: [closed] })
    expect(readyCondition(o, decide(o))).toMatchObject({
      status: "True",
      reason: "RolledOut",
      message: expect.stringContaining("validation run aicr-validate-0123456789ab, evidence r/aicr/cluster/evidence/cluster@sha256:eee"),
    })
  })

  it("stalls the runtime with ValidationUnavailable while the open rollout says validation is not installed (not for a Remove rollout)", () => {
    const required = runtime({ spec: { validation: { deployment: "Required" } } })
    const open = rollout("cluster-ffffffffffff-1", target.desiredStateDigest, {
      conditions: [
        {
          ...cond("ValidationReady", "False", "ValidationUnavailable"),
          message: "install it with validation.enabled: true, or set spec.validation.deployment: Disabled",
        },
      ],
    })
    const o = observed({ rt: required, plans: new Map([planRead(target)]), rollouts: [open] })
    const d = decide(o)
    expect(stalledCondition(o, d)).toMatchObject({
      status: "True",
      reason: "ValidationUnavailable",
      message: expect.stringContaining("validation.enabled: true, or set spec.validation.deployment: Disabled"),
    })
    expect(readyCondition(o, d)).toMatchObject({
      status: "False",
      reason: "RollingOut",
      message: expect.stringContaining("rollout cluster-ffffffffffff-1 stalled: ValidationUnavailable: install it"),
    })
  })

  it("ignores stale rollout conditions", () => {
    const stale = rollout("cluster-eeeeeeeeeeee-1", target.desiredStateDigest, {
      approved: true,
      conditions: [cond("Progressing", "True", "StepsCompleted", 0)],
    })
    expect(decide(observed({ plans: new Map([planRead(target)]), rollouts: [stale] })).closes).toEqual([])
  })

  it("a retry needs the annotation naming the ended rollout, and makes the next attempt", () => {
    const failed = rollout("cluster-ffffffffffff-1", target.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Expired" } })
    expect(decide(observed({ plans: new Map([planRead(target)]), rollouts: [failed] })).create).toBeUndefined()
    const d = decide(
      observed({ rt: runtime({ annotations: { [ANNOTATION_RETRY]: "cluster-ffffffffffff-1" } }), plans: new Map([planRead(target)]), rollouts: [failed] }),
    )
    expect(d.create?.rollout.metadata.name).toMatch(/-2$/)
  })

  it("a pin targets the earlier plan as a Rollback; a pin to a missing plan is PlanUnreadable", () => {
    const earlier = planOf(V0_10)
    const done = rollout("cluster-aaaaaaaaaaaa-2", target.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })
    const d = decide(
      observed({
        rt: runtime({ spec: { pin: { desiredStateDigest: earlier.desiredStateDigest } } }),
        plans: new Map([planRead(target), planRead(earlier)]),
        rollouts: [done],
        pinCharts: { digest: earlier.desiredStateDigest, check: { _tag: "Present", checked: 4 } },
      }),
    )
    expect(d.create?.rollout.spec).toMatchObject({ kind: "Rollback", fromDigest: target.desiredStateDigest, toDigest: earlier.desiredStateDigest })
    const missing = decide(observed({ rt: runtime({ spec: { pin: { desiredStateDigest: digest("gone") } } }) }))
    expect(missing.plan).toMatchObject({ _tag: "Blocked", reason: "PlanUnreadable", message: expect.stringContaining("does not exist") })
    const o = observed({ rt: runtime({ spec: { pin: { desiredStateDigest: digest("gone") } } }) })
    expect(readyCondition(o, decide(o))).toMatchObject({ status: "False", reason: "PlanUnreadable", message: expect.stringContaining("does not exist") })
  })
})

describe("planner: a recorded chart tag moved in the registry after the rollout (Mirrored=False/Conflict)", () => {
  it("Stalled carries the mirror's Conflict and message; Ready stays RolledOut, nothing deployed changed; no new rollout", () => {
    const p = planOf(V0_11)
    const message = "Release gpu-operator: tag r/aicr/cluster/charts/gpu-operator:v25.10.1 now holds sha256:e…, not sha256:a…"
    const done = rollout("cluster-aaaaaaaaaaaa-1", p.desiredStateDigest, { approved: true, labels: { [LABEL_OUTCOME]: "Succeeded" } })
    // What the planner wrote when the rollout ended: the plan is active and the target.
    const rt = runtime({ plans: { active: p.desiredStateDigest, target: p.desiredStateDigest } })
    const o = observed({
      rt,
      status: rt.status?.plans,
      plans: new Map([planRead(p)]),
      rollouts: [done],
      mirrored: { ...cond("Mirrored", "False", "Conflict"), message, current: true },
    })
    const d = decide(o)
    expect(d.create).toBeUndefined()
    expect(stalledCondition(o, d)).toMatchObject({ status: "True", reason: "Conflict", message })
    expect(readyCondition(o, d)).toMatchObject({ status: "True", message: expect.stringContaining("is rolled out") })
  })
})

describe("planner: suspendEngine in Ready and Stalled (from the step-executor's status.engine)", () => {
  const withEngine = (suspendEngine: boolean, engine: Record<string, unknown>): ClusterRuntime => {
    const rt = runtime({ spec: { suspendEngine } })
    return { ...rt, status: { ...rt.status, engine } } as ClusterRuntime
  }
  const refused = "spec.suspendEngine is set but 1 of 3 Applications are not suspended: argocd/a: a sync operation is running"
  it.each([
    ["suspended everywhere", true, { applications: 3, suspended: 3 }, "EngineSuspended", "NotStalled"],
    [
      "an Application the suspension does not hold on",
      true,
      { applications: 3, suspended: 2, suspensionRefused: refused },
      "EngineSuspensionRefused",
      "EngineSuspensionRefused",
    ],
    ["a leftover refusal without suspendEngine", false, { applications: 3, suspended: 0, suspensionRefused: refused }, "RollingOut", "NotStalled"],
  ] as const)("%s", (_name, suspend, engine, ready, stalled) => {
    const o = observed({ rt: withEngine(suspend, engine) })
    const d = decide(o)
    expect(readyCondition(o, d)).toMatchObject({ status: "False", reason: ready })
    expect(stalledCondition(o, d)).toMatchObject({ reason: stalled })
    if (ready === "EngineSuspensionRefused") expect(readyCondition(o, d).message).toBe(refused)
  })
})

describe("planner: status.plans", () => {
  it("names the rollout's step only while one has started, not while it awaits approval at the gate", () => {
    const target = planOf(V0_11)
    const o = observed({ plans: new Map([planRead(target)]) })
    const item = (state: string) => ({ index: 1, release: "cert-manager", namespace: "cert-manager", action: "Install", state })
    // What the step executor writes while the gate holds: the first step named, Pending.
    const steps = (state: string) => ({ steps: { total: 4, done: 0, current: "1/4 cert-manager (Install)", items: [item(state)] } })
    const waiting = { ...rollout("cluster-aaaaaaaaaaaa-1", target.desiredStateDigest), status: steps("Pending") } as RuntimeRollout
    const approval = { approvedBy: "bob", reason: "ok", approvedAt: "t", expiresAt: "t", toDigest: target.desiredStateDigest }
    const approved = { ...waiting, spec: { ...waiting.spec, approval } } as RuntimeRollout
    const d = decide(o)
    const stepOf = (open: RuntimeRollout) => (runtimeStatus(o, { ...d, open }).plans as { rollout: { name: string; step?: string } }).rollout
    expect(stepOf(waiting)).toEqual({ name: "cluster-aaaaaaaaaaaa-1" })
    // An approval written but not (yet) counted by the guard: still nothing runs.
    expect(stepOf(approved)).toEqual({ name: "cluster-aaaaaaaaaaaa-1" })
    expect(readyCondition(o, { ...d, open: approved }).message).not.toContain("step 1/4")
    for (const state of ["Applying", "WaitingForReady", "AwaitingAcknowledgement", "Failed"]) {
      expect(stepOf({ ...approved, status: steps(state) } as RuntimeRollout).step, state).toBe("1/4 cert-manager (Install)")
    }
    expect(readyCondition(o, { ...d, open: { ...approved, status: steps("WaitingForReady") } as RuntimeRollout }).message).toBe(
      "rollout cluster-aaaaaaaaaaaa-1: step 1/4 cert-manager (Install)",
    )
  })
})

describe("planner: the cleanup finalizer and the runtime's deletion", () => {
  const active = planOf(V0_10)
  const target = planOf(V0_11)
  const DELETED = "2026-12-02T11:59:00Z"
  const deleting = (extra: Parameters<typeof runtime>[0] = {}) =>
    runtime({ ...extra, metadata: { deletionTimestamp: DELETED, finalizers: [FINALIZER_CLEANUP], ...extra.metadata } })
  const rolledOut = rollout("cluster-aaaaaaaaaaaa-1", active.desiredStateDigest, {
    labels: { [LABEL_OUTCOME]: "Succeeded" },
    approved: true,
    created: "2026-12-02T10:00:00Z",
  })
  const plans = new Map([planRead(active), planRead(target)])

  it.each([
    [
      "no finalizers yet",
      undefined,
      [
        { op: "test", path: "/metadata/resourceVersion", value: "7" },
        { op: "add", path: "/metadata/finalizers", value: [FINALIZER_CLEANUP] },
      ],
    ],
    [
      "another finalizer",
      ["example.com/keep"],
      [
        { op: "test", path: "/metadata/finalizers", value: ["example.com/keep"] },
        { op: "add", path: "/metadata/finalizers/-", value: FINALIZER_CLEANUP },
      ],
    ],
    ["ours already", ["example.com/keep", FINALIZER_CLEANUP], undefined],
  ] as const)("adds the finalizer while the runtime lives (%s), and changes no other finalizer", (_what, finalizers, patch) => {
    const rt = runtime({ metadata: finalizers === undefined ? {} : { finalizers: [...finalizers] } })
    expect(decide(observed({ rt })).finalizer).toBe(patch === undefined ? undefined : "Add")
    expect(finalizerPatch(rt, "Add")).toEqual(patch)
  })

  it("removes only its own finalizer, by index and with a test of that index", () => {
    const rt = deleting({ metadata: { finalizers: ["example.com/keep", FINALIZER_CLEANUP, "example.com/other"] } })
    expect(finalizerPatch(rt, "Remove")).toEqual([
      { op: "test", path: "/metadata/finalizers/1", value: FINALIZER_CLEANUP },
      { op: "remove", path: "/metadata/finalizers/1" },
    ])
    expect(finalizerPatch(runtime(), "Remove")).toBeUndefined()
  })

  it("nothing rolled out: no rollout, the finalizer is removed at once; Ready and Planned say Deleting", () => {
    const o = observed({ rt: deleting(), plans })
    const d = decide(o)
    expect(d).toMatchObject({ finalizer: "Remove", create: undefined, writePlan: undefined, target: undefined })
    expect(plannedCondition(d)).toMatchObject({ status: "False", reason: "Deleting" })
    expect(readyCondition(o, d)).toMatchObject({
      status: "False",
      reason: "Deleting",
      message: `The runtime is being deleted: nothing was rolled out; the finalizer ${FINALIZER_CLEANUP} is removed`,
    })
  })

  it("supersedes the rollout nobody approved, plans no new target, and creates the Remove rollout of the active plan in reverse order", () => {
    const waiting = rollout("cluster-bbbbbbbbbbbb-1", target.desiredStateDigest, { fromDigest: active.desiredStateDigest })
    const o = observed({ rt: deleting(), plans, rollouts: [waiting, rolledOut] })
    const d = decide(o)
    expect(d.closes).toEqual([{ rollout: waiting, outcome: "Superseded" }])
    expect(d.finalizer).toBeUndefined()
    const r = d.create!.rollout
    expect(r.metadata.name).toBe(`cluster-${active.desiredStateDigest.slice(7, 19)}-2`)
    expect(r.spec).toMatchObject({
      kind: "Remove",
      fromDigest: active.desiredStateDigest,
      toDigest: active.desiredStateDigest,
      requiresApproval: true,
      requestedBy: "alice",
      deadline: "2026-12-03T12:00:00.000Z",
    })
    expect(r.spec.steps).toEqual([
      { release: "nvsentinel", namespace: "nvsentinel", action: "Remove", from: "v0.10.0" },
      { release: "kai-scheduler", namespace: "kai-scheduler", action: "Remove", from: "v0.12.17" },
      { release: "gpu-operator", namespace: "gpu-operator", action: "Remove", from: "v25.10.1" },
      { release: "cert-manager", namespace: "cert-manager", action: "Remove", from: "v1.17.2" },
    ])
    expect(d.create!.assessment.components.map((c) => `${c.change} ${c.component}`)).toEqual([
      "removed cert-manager",
      "removed gpu-operator",
      "removed kai-scheduler",
      "removed nvsentinel",
    ])
    expect(plannedCondition(d)).toMatchObject({ status: "False", reason: "Deleting", message: `rollout ${r.metadata.name} removes every release` })
    expect(readyCondition(o, d)).toMatchObject({
      reason: "Deleting",
      message: `The runtime is being deleted: rollout ${r.metadata.name} awaiting approval (kubectl aicr approve ${r.metadata.name} --reason "…")`,
    })
    expect(stalledCondition(o, d)).toMatchObject({ status: "False" })
  })

  it("lets an approved rollout in flight run to its end; the removal then covers what it may have installed", () => {
    const bigger = planOf([...V0_11, { name: "extra", namespace: "extra", version: "0.1.0", deps: ["nvsentinel"] }])
    const running = rollout("cluster-cccccccccccc-1", bigger.desiredStateDigest, {
      fromDigest: active.desiredStateDigest,
      approved: true,
      created: "2026-12-02T11:00:00Z",
    })
    const all = new Map([...plans, planRead(bigger)])
    const o = observed({ rt: deleting(), plans: all, rollouts: [running, rolledOut] })
    const d = decide(o)
    expect(d).toMatchObject({ closes: [], create: undefined, finalizer: undefined, open: running })
    expect(readyCondition(o, d).message).toBe(
      `The runtime is being deleted: approved rollout ${running.metadata.name} runs to its end before the removal is planned (kubectl aicr revoke ${running.metadata.name} stops it after the step in flight)`,
    )
    // It failed midway: the removal lists its plan's releases first (newest plan first, each release once).
    const failed = { ...running, metadata: { ...running.metadata, labels: { [LABEL_OUTCOME]: "Failed" } } }
    const e = decide(observed({ rt: deleting(), plans: all, rollouts: [failed, rolledOut] }))
    expect(e.create!.rollout.spec).toMatchObject({ kind: "Remove", fromDigest: active.desiredStateDigest, toDigest: bigger.desiredStateDigest })
    expect(e.create!.rollout.spec.steps!.map((s) => `${s.release}${s.from ? `@${s.from}` : ""}`)).toEqual([
      "extra@0.1.0",
      "nvsentinel@v1.1.0",
      "kai-scheduler@v0.13.0",
      "gpu-operator@v25.10.1",
      "cert-manager@v1.17.2",
    ])
  })

  it("closes the Remove rollout Succeeded only once approved and done, then removes the finalizer in the same pass", () => {
    const done = [cond("Progressing", "True", "StepsCompleted")]
    const unapproved = rollout("cluster-aaaaaaaaaaaa-2", active.desiredStateDigest, {
      kind: "Remove",
      fromDigest: active.desiredStateDigest,
      conditions: done,
      created: "2026-12-02T11:59:30Z",
    })
    const o = observed({ rt: deleting(), plans, rollouts: [unapproved, rolledOut] })
    const waiting = decide(o)
    expect(waiting).toMatchObject({ closes: [], finalizer: undefined, create: undefined, open: unapproved })
    expect(readyCondition(o, waiting).message).toContain("awaiting approval")
    const approved = rollout("cluster-aaaaaaaaaaaa-2", active.desiredStateDigest, {
      kind: "Remove",
      fromDigest: active.desiredStateDigest,
      conditions: done,
      approved: true,
      created: "2026-12-02T11:59:30Z",
    })
    const d = decide(observed({ rt: deleting(), plans, rollouts: [approved, rolledOut] }))
    expect(d.closes).toEqual([{ rollout: approved, outcome: "Succeeded" }])
    expect(d).toMatchObject({ finalizer: "Remove", create: undefined, active: undefined })
    // Nothing left for status.plans: the key is left out (an empty object would reach the API server as null).
    expect(runtimeStatus(o, d).plans).toBeUndefined()
  })

  it("a Remove rollout that ended without success stalls, naming the retry; the retry makes the next attempt", () => {
    const expired = rollout("cluster-aaaaaaaaaaaa-2", active.desiredStateDigest, {
      kind: "Remove",
      fromDigest: active.desiredStateDigest,
      labels: { [LABEL_OUTCOME]: "Expired" },
      created: "2026-12-02T11:59:30Z",
    })
    const o = observed({ rt: deleting(), plans, rollouts: [expired, rolledOut] })
    const d = decide(o)
    expect(d).toMatchObject({ create: undefined, finalizer: undefined, ended: expired })
    expect(stalledCondition(o, d)).toMatchObject({
      status: "True",
      reason: "RolloutExpired",
      message: expect.stringContaining(`operator.aicr.run/retry=${expired.metadata.name}`),
    })
    const retry = decide(observed({ rt: deleting({ annotations: { [ANNOTATION_RETRY]: expired.metadata.name } }), plans, rollouts: [expired, rolledOut] }))
    expect(retry.create?.rollout.metadata.name).toBe(`cluster-${active.desiredStateDigest.slice(7, 19)}-3`)
    expect(retry.create?.rollout.spec.kind).toBe("Remove")
  })

  it("an active plan whose ConfigMap is gone blocks the removal as PlanUnreadable, naming the way out", () => {
    const o = observed({ rt: deleting(), plans: new Map([planRead(target)]), rollouts: [rolledOut] })
    const d = decide(o)
    expect(d.create).toBeUndefined()
    expect(d.plan).toMatchObject({
      _tag: "Blocked",
      reason: "PlanUnreadable",
      message: expect.stringContaining(`remove the finalizer ${FINALIZER_CLEANUP} by hand (the Applications stay, orphaned)`),
    })
    expect(stalledCondition(o, d)).toMatchObject({ status: "True", reason: "PlanUnreadable" })
  })

  it("numbers rollouts across runtimes: a deleted runtime's rollout keeps its name", () => {
    const old = rollout(`cluster-${target.desiredStateDigest.slice(7, 19)}-1`, target.desiredStateDigest, {
      runtimeUID: "11111111-2222-4333-8444-555555555555",
      labels: { [LABEL_OUTCOME]: "Succeeded" },
    })
    const d = decide(observed({ plans: new Map([planRead(target)]), rollouts: [old] }))
    expect(d.create?.rollout.metadata.name).toBe(`cluster-${target.desiredStateDigest.slice(7, 19)}-2`)
    expect(d.create?.rollout.spec.kind).toBe("Install")
  })
})

describe("planner: a pin whose charts are gone from the registry", () => {
  const current = planOf(V0_11)
  const earlier = planOf(V0_10)
  const done = rollout("cluster-aaaaaaaaaaaa-2", current.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })
  const pinned = (pinCharts?: Observed["pinCharts"]) =>
    observed({
      rt: runtime({ spec: { pin: { desiredStateDigest: earlier.desiredStateDigest } } }),
      plans: new Map([planRead(current), planRead(earlier)]),
      rollouts: [done],
      ...(pinCharts ? { pinCharts } : {}),
    })
  const charts = chartsOf(earlier)

  it("checks every chart of the pinned plan by digest before anything else", () => {
    expect(charts).toHaveLength(4)
    expect(charts[0]).toEqual({ release: "cert-manager", ref: `127.0.0.1:5000/aicr/cluster/charts/cert-manager@${digest("cert-manager@v1.17.2")}` })
    const d = decide(pinned())
    expect(d.needs).toEqual({ _tag: "PinCharts", plan: earlier })
    expect(d.create).toBeUndefined()
    expect(plannedCondition(d)).toMatchObject({
      status: "False",
      reason: "Assessing",
      message: expect.stringContaining("Checking that the 4 charts of the pinned plan"),
    })
  })

  it.each([
    {
      name: "one chart gone → PlanUnreadable naming the release and ref@digest, and what to do; no rollout; Stalled",
      check: { _tag: "Missing" as const, missing: [charts[2]!], checked: 4 },
      want: {
        tag: "Blocked",
        reason: "PlanUnreadable",
        message: [`release kai-scheduler (${charts[2]!.ref}) is no longer in the registry`, "push that chart back by digest or pin another plan"],
        stalled: true,
      },
    },
    {
      name: "two charts gone → both named",
      check: { _tag: "Missing" as const, missing: [charts[0]!, charts[3]!], checked: 4 },
      want: {
        tag: "Blocked",
        reason: "PlanUnreadable",
        message: ["release cert-manager", "release nvsentinel", "are no longer in the registry"],
        stalled: true,
      },
    },
    {
      name: "registry unreachable → Assessing, retried, not a refusal and not a stall",
      check: { _tag: "Unavailable" as const, message: "127.0.0.1:5000: connect ECONNREFUSED" },
      want: { tag: "Assessing", reason: "Assessing", message: ["the registry did not answer (retrying)", "ECONNREFUSED"], stalled: false },
    },
    {
      name: "registry refuses the planner → PlanUnreadable pointing at the credentials",
      check: { _tag: "Refused" as const, release: "cert-manager", message: "401 Unauthorized" },
      want: { tag: "Blocked", reason: "PlanUnreadable", message: ["refused the check of release cert-manager", "--docker-config"], stalled: true },
    },
  ])("$name", ({ check, want }) => {
    const o = pinned({ digest: earlier.desiredStateDigest, check })
    const d = decide(o)
    expect(d.needs).toBeUndefined()
    expect(d.create).toBeUndefined()
    expect(d.plan._tag).toBe(want.tag)
    if (want.tag === "Assessing") expect(d.plan).toMatchObject({ retry: true })
    const planned = plannedCondition(d)
    expect(planned).toMatchObject({ status: "False", reason: want.reason })
    for (const m of want.message) expect(planned.message).toContain(m)
    expect(stalledCondition(o, d).status).toBe(want.stalled ? "True" : "False")
  })

  it("every chart present → the Rollback rollout is created", () => {
    const d = decide(pinned({ digest: earlier.desiredStateDigest, check: { _tag: "Present", checked: 4 } }))
    expect(d.create?.rollout.spec).toMatchObject({ kind: "Rollback", toDigest: earlier.desiredStateDigest })
  })

  it("a check of another plan does not count", () => {
    expect(decide(pinned({ digest: current.desiredStateDigest, check: { _tag: "Present", checked: 4 } })).needs).toEqual({ _tag: "PinCharts", plan: earlier })
  })

  it("an unpinned target is not checked against the registry (the mirror just copied it)", () => {
    const d = decide(observed({ plans: new Map([planRead(current)]) }))
    expect(d.needs).toBeUndefined()
    expect(d.create).toBeDefined()
  })
})

describe("planner: assessment by AICR 1.x upgrade-check (fixture-based: reports shaped after the documented JSON, no 1.x binary runs here)", () => {
  const from = planOf(V0_10, {}, "v1.3.0")
  const to = planOf(V0_11, {}, "v1.3.0")
  const done = rollout("cluster-aaaaaaaaaaaa-1", from.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })
  const base = { plans: new Map([planRead(from), planRead(to)]), rollouts: [done] }
  const keyOf = () => {
    const d = decide(observed(base))
    if (d.needs?._tag !== "UpgradeCheck") throw new Error("no upgrade-check asked for")
    return d.needs.request
  }
  const withJob = (state: JobState) => observed({ ...base, upgradeCheck: { _tag: "Job", key: keyOf().key, job: "aicr-system/aicr-upgrade-check-x", state } })
  const reportOf = (rows: unknown[]) =>
    JSON.stringify({
      from: "/var/run/aicr/upgrade-check/from.json",
      to: "/var/run/aicr/upgrade-check/to.json",
      deployer: "argocd",
      objectNamesCompared: true,
      components: rows,
      summary: { components: rows.length, failing: 1 },
      atRisk: { scanned: false, reason: "no cluster access requested" },
    })
  const kai = { component: "kai-scheduler", change: "version", from: "v0.12.17", to: "v0.13.0", jump: "1 minor", breaking: true, downgrade: false }

  it("asks for the run with both plans' recipes and the target's AICR image; Planned=False/Assessing meanwhile", () => {
    const req = keyOf()
    expect(req).toMatchObject({ image: "ghcr.io/nvidia/aicr:v1.3.0", from: { configMap: "aicr-content-x" }, to: { configMap: "aicr-content-x" } })
    expect(req.from.digest).toBe(from.content.find((c) => c.key === "recipe.json")!.digest)
    const d = decide(observed(base))
    expect(plannedCondition(d)).toMatchObject({ status: "False", reason: "Assessing", message: expect.stringContaining("Starting aicr upgrade-check") })
    expect(d.create).toBeUndefined()
  })

  it("while the Job runs: Assessing with its state, no rollout, not stalled", () => {
    const o = withJob({ _tag: "Running", name: "aicr-upgrade-check-x", detail: "running" })
    const d = decide(o)
    expect(d.needs).toBeUndefined()
    expect(plannedCondition(d)).toMatchObject({
      status: "False",
      reason: "Assessing",
      message: expect.stringContaining("aicr upgrade-check Job aicr-system/aicr-upgrade-check-x"),
    })
    expect(stalledCondition(o, d).status).toBe("False")
  })

  it("AICR's verdicts become the assessment and the steps' verdicts; manual and unknown need approval", () => {
    const d = decide(
      withJob({
        _tag: "Succeeded",
        name: "x",
        terminationMessage: "",
        output: reportOf([
          { ...kai, verdict: "manual", reason: "recorded", steps: [{ id: "drain", description: "Drain the queues" }], failsRun: true },
          {
            component: "nvsentinel",
            change: "version",
            from: "v0.10.0",
            to: "v1.1.0",
            verdict: "safe",
            reason: "recorded",
            breaking: true,
            downgrade: false,
            failsRun: false,
          },
        ]),
      }),
    )
    expect(d.create?.assessment).toMatchObject({
      assessedBy: "aicr upgrade-check",
      aicrVersion: "v1.3.0",
      fromDigest: from.desiredStateDigest,
      toDigest: to.desiredStateDigest,
    })
    expect(d.create?.rollout.spec.requiresApproval).toBe(true)
    expect(d.create?.rollout.spec.steps?.map((s) => [s.release, s.verdict])).toEqual([
      ["kai-scheduler", "manual"],
      ["nvsentinel", "safe"],
    ])
  })

  it("a blocked verdict from AICR → TransitionBlocked, no rollout", () => {
    const o = withJob({
      _tag: "Succeeded",
      name: "x",
      terminationMessage: "",
      output: reportOf([{ ...kai, verdict: "blocked", reason: "beyond-record-ceiling", failsRun: true }]),
    })
    const d = decide(o)
    expect(d.create).toBeUndefined()
    expect(plannedCondition(d)).toMatchObject({
      status: "False",
      reason: "TransitionBlocked",
      message: expect.stringContaining("kai-scheduler v0.12.17→v0.13.0 (beyond-record-ceiling)"),
    })
    expect(stalledCondition(o, d)).toMatchObject({ status: "True", reason: "TransitionBlocked" })
  })

  it.each([
    {
      name: "AICR refused the input",
      state: {
        _tag: "Failed",
        name: "x",
        reason: "AICRInvalidRequest",
        transient: false,
        message: "exited 2: [INVALID_REQUEST] unknown deployer",
        exitCode: 2,
      } as JobState,
      reason: "AICRInvalidRequest",
      retry: false,
    },
    {
      name: "past its deadline",
      state: { _tag: "Failed", name: "x", reason: "AICRTimeout", transient: false, message: "ran past its deadline", exitCode: undefined } as JobState,
      reason: "AICRTimeout",
      retry: false,
    },
    {
      name: "failed before AICR ran (transient): retried",
      state: {
        _tag: "Failed",
        name: "x",
        reason: "AICRInternal",
        transient: true,
        message: "failed before AICR ran: evicted",
        exitCode: undefined,
      } as JobState,
      reason: "Assessing",
      retry: true,
    },
    {
      name: "a report that does not parse",
      state: { _tag: "Succeeded", name: "x", terminationMessage: "", output: "UPGRADE CHECK\n" } as JobState,
      reason: "AICRArtifactUnsupported",
      retry: false,
    },
    { name: "no report at all", state: { _tag: "Succeeded", name: "x", terminationMessage: "" } as JobState, reason: "AICRArtifactUnsupported", retry: false },
  ])("Job failure maps to its reason: $name → $reason", ({ state, reason, retry }) => {
    const d = decide(withJob(state))
    expect(d.create).toBeUndefined()
    expect(plannedCondition(d)).toMatchObject({ status: "False", reason })
    expect(d.plan._tag === "Assessing" && d.plan.retry === true).toBe(retry)
  })

  it("a recipe that is gone or changed → PlanUnreadable", () => {
    const d = decide(
      observed({ ...base, upgradeCheck: { _tag: "InputUnreadable", key: keyOf().key, message: "content ConfigMap aicr-system/aicr-content-x is gone" } }),
    )
    expect(plannedCondition(d)).toMatchObject({ status: "False", reason: "PlanUnreadable", message: expect.stringContaining("is gone") })
  })

  it("from a plan rebuilt at an adoption (no recipe): no upgrade-check, every change unknown, saying why", () => {
    const adopted = { ...from, source: "Adoption" as const, content: [] }
    const d = decide(observed({ plans: new Map([planRead(adopted), planRead(to)]), rollouts: [done] }))
    expect(d.needs).toBeUndefined()
    expect(d.create?.assessment.assessedBy).toBe("aicr-operator")
    const kai = d.create!.assessment.components.find((c) => c.component === "kai-scheduler")!
    expect(kai).toMatchObject({ verdict: "unknown", change: "version" })
    expect(kai.explanation).toContain("was rebuilt from live Applications at an adoption and records no recipe")
  })

  it("a first install needs no upgrade-check (every row is added); AICR 0.x never runs it", () => {
    expect(decide(observed({ plans: new Map([planRead(to)]) })).needs).toBeUndefined()
    const old = planOf(V0_10)
    const d = decide(
      observed({
        plans: new Map([planRead(old), planRead(planOf(V0_11))]),
        rollouts: [rollout("cluster-aaaaaaaaaaaa-1", old.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })],
      }),
    )
    expect(d.needs).toBeUndefined()
    expect(d.create?.assessment.assessedBy).toBe("aicr-operator")
    expect(d.create?.assessment.components[0]!.explanation).toContain("AICR v0.11.1 has no upgrade-check")
  })
})

describe("planner: the chart check over an OCI client (HEAD by digest)", () => {
  const refs = [
    { release: "a", ref: `r/charts/a@${digest("a")}` },
    { release: "b", ref: `r/charts/b@${digest("b")}` },
  ]
  const fail = (tag: "Unavailable" | "Unauthorized") =>
    new OciError({ reason: tag === "Unavailable" ? { _tag: tag, attempts: 3 } : { _tag: tag }, registry: "r", message: `r: ${tag}` })
  it.each([
    { name: "every manifest there → Present", answer: () => ({ digest: "x" }), want: { _tag: "Present", checked: 2 } },
    {
      name: "a manifest the registry lacks → Missing, named",
      answer: (ref: string) => (ref.includes("/b@") ? undefined : { digest: "x" }),
      want: { _tag: "Missing", missing: [refs[1]], checked: 2 },
    },
    {
      name: "registry unreachable → Unavailable (transient)",
      answer: () => {
        throw fail("Unavailable")
      },
      want: { _tag: "Unavailable", message: "r: Unavailable" },
    },
    {
      name: "registry refuses → Refused, with the release",
      answer: () => {
        throw fail("Unauthorized")
      },
      want: { _tag: "Refused", release: "a", message: "r: Unauthorized" },
    },
  ])("$name", async ({ answer, want }) => {
    const asked: string[] = []
    const registry = checkWith({ manifestExists: async (ref) => (asked.push(String(ref)), answer(String(ref)) as never) })
    expect(await Effect.runPromise(registry.check(refs))).toEqual(want)
    expect(asked[0]).toBe(refs[0]!.ref)
  })
})

describe("planner: settings", () => {
  it("runs upgrade-check Jobs in the operator namespace by default, as aicr-jobs, and reads the registry flags", async () => {
    const { parseSettings } = await import("./config")
    const s = parseSettings(["--operator-namespace", "ops"], {})
    expect(s.jobs).toMatchObject({ namespace: "ops", serviceAccount: "aicr-jobs", activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600 })
    expect(s).toMatchObject({ plainHttp: [], dockerConfig: undefined })
    const t = parseSettings(
      ["--jobs-namespace", "jobs", "--job-deadline", "120", "--plain-http", "reg:5000,other:80", "--docker-config", "/etc/aicr/config.json"],
      { AICR_JOB_SERVICE_ACCOUNT: "runner" },
    )
    expect(t.jobs).toMatchObject({ namespace: "jobs", serviceAccount: "runner", activeDeadlineSeconds: 120 })
    expect(t).toMatchObject({ plainHttp: ["reg:5000", "other:80"], dockerConfig: "/etc/aicr/config.json" })
    expect(() => parseSettings(["--job-ttl", "5"], {})).toThrow(/--job-ttl must be a whole number of seconds/)
  })
})

describe("planner: after a rollout, the stack is still watched (Ready=NotReady)", () => {
  const plan = planOf(V0_11)
  const gpu = plan.releases.find((r) => r.name === "gpu-operator")!
  const rolledOut = rollout("cluster-aaaa-1", plan.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" }, approved: true })
  const base = observed({ plans: new Map([planRead(plan)]), rollouts: [rolledOut] })
  /** An Application as Argo CD 3.4 reports one synced and healthy at the revision the executor wrote. */
  const app = (r: Plan["releases"][number], status: Record<string, unknown> = {}): Application => {
    const source = { repoURL: `oci://${r.chart.ref.split(":")[0]}`, path: ".", targetRevision: r.chart.digest }
    const destination = { server: "https://kubernetes.default.svc", namespace: r.namespace }
    return {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Application",
      metadata: { name: r.name, namespace: "argocd", labels: { [LABEL_RUNTIME_UID]: UID } },
      spec: { project: "aicr", source, destination },
      status: {
        sync: { status: "Synced", revision: r.chart.digest, comparedTo: { source, destination } },
        health: { status: "Healthy" },
        operationState: { phase: "Succeeded", syncResult: { revision: r.chart.digest } },
        ...status,
      },
    }
  }
  const healthy = plan.releases.map((r) => app(r))
  const withGpu = (status: Record<string, unknown>) => healthy.map((a) => (a.metadata.name === "gpu-operator" ? app(gpu, status) : a))
  // A driver pod not ready (crash-looping) under the driver DaemonSet, as Argo CD 3.4.2 reports it when its controller
  // persists resource health (--persist-resource-health; off by default, then only the Application's health is there):
  // the Application's health Progressing (no message at that level in 3.x), the DaemonSet's health message on the resource.
  const nodeDown = withGpu({
    health: { status: "Progressing" },
    resources: [
      {
        group: "apps",
        kind: "DaemonSet",
        namespace: "gpu-operator",
        name: "nvidia-driver-daemonset",
        status: "Synced",
        health: { status: "Progressing", message: 'Waiting for daemon set "nvidia-driver-daemonset" rollout to finish: 3 of 4 updated pods are available...' },
      },
      { kind: "ConfigMap", namespace: "gpu-operator", name: "settings", status: "Synced", health: { status: "Healthy" } },
    ],
  })
  const registryDown = withGpu({
    sync: { status: "Unknown", revision: gpu.chart.digest, comparedTo: { source: app(gpu).spec!.source, destination: app(gpu).spec!.destination } },
    conditions: [
      {
        type: "ComparisonError",
        message: `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = cannot get digest for revision ${gpu.chart.digest}: connect: connection refused`,
      },
    ],
  })

  it("names nothing while every release's Application is ready at the revision written", () => {
    expect(releasesNotReady(plan, healthy, UID, "argocd")).toEqual([])
  })

  it("names a release whose DaemonSet has a pod not ready, with Argo CD's health of the Application and of the DaemonSet", () => {
    expect(releasesNotReady(plan, nodeDown, UID, "argocd")).toEqual([
      {
        release: "gpu-operator",
        why: [
          "health Progressing",
          'DaemonSet gpu-operator/nvidia-driver-daemonset Progressing: Waiting for daemon set "nvidia-driver-daemonset" rollout to finish: 3 of 4 updated pods are available...',
        ],
      },
    ])
  })

  it("names a release Argo CD cannot compare (the registry down) with its ComparisonError, one OutOfSync with its resource, and a missing or foreign Application", () => {
    expect(releasesNotReady(plan, registryDown, UID, "argocd")[0]!.why).toEqual([
      "sync status Unknown",
      expect.stringMatching(/^ComparisonError: Failed to load target state: .*connection refused$/u),
    ])
    const drifted = withGpu({
      sync: { status: "OutOfSync", revision: gpu.chart.digest, comparedTo: app(gpu).status!.sync!.comparedTo },
      resources: [{ group: "apps", kind: "Deployment", namespace: "gpu-operator", name: "gpu-operator", status: "OutOfSync", health: { status: "Healthy" } }],
    })
    expect(releasesNotReady(plan, drifted, UID, "argocd")[0]!.why).toEqual(["sync status OutOfSync", "Deployment gpu-operator/gpu-operator OutOfSync"])
    const foreign = healthy.map((a) =>
      a.metadata.name === "cert-manager" ? { ...a, metadata: { ...a.metadata, labels: { [LABEL_RUNTIME_UID]: "another" } } } : a,
    )
    expect(
      releasesNotReady(
        plan,
        foreign.filter((a) => a.metadata.name !== "nvsentinel"),
        UID,
        "argocd",
      ),
    ).toEqual([
      { release: "cert-manager", why: ["its Application argocd/cert-manager is missing"] },
      { release: "nvsentinel", why: ["its Application argocd/nvsentinel is missing"] },
    ])
  })

  it("a release not ready for less than the grace period is a blip (Ready stays, looked at again when the grace ends); past it, NotReady names the release and Argo CD's words", () => {
    const notReady = releasesNotReady(plan, nodeDown, UID, "argocd")
    const since = new Map([[sinceKey(plan, "gpu-operator"), NOW - 10_000]])
    expect(judgeStack(plan, notReady, since, NOW, 30_000)).toEqual({ _tag: "Blip", dueMs: 20_000 })
    const judged = judgeStack(plan, notReady, since, NOW + 20_000, 30_000)
    expect(judged._tag).toBe("NotReady")
    const ready = readyCondition(base, decide(base), judged)
    expect(ready).toMatchObject({ status: "False", reason: "NotReady" })
    expect(ready.message).toBe(
      `Plan ${plan.desiredStateDigest.slice(7, 19)} is rolled out, but 1 release is not ready at its revision (Argo CD): release gpu-operator at v25.10.1@sha256:${gpu.chart.digest.slice(7, 19)}: health Progressing; DaemonSet gpu-operator/nvidia-driver-daemonset Progressing: Waiting for daemon set "nvidia-driver-daemonset" rollout to finish: 3 of 4 updated pods are available`,
    )
    expect(judgeStack(plan, [], since, NOW + 40_000, 30_000)).toEqual({ _tag: "Ready" })
  })

  it("clears back to RolledOut (validation Required and passed) or ValidationDisabled once every release is ready again", () => {
    const validated = { ...rolledOut, status: { validation: { result: "Passed" as const, runID: "run-1", evidenceRef: "r/evidence@sha256:1" } } }
    const required = observed({
      rt: runtime({ spec: { validation: { deployment: "Required" } } }),
      plans: new Map([planRead(plan)]),
      rollouts: [validated as RuntimeRollout],
    })
    expect(readyCondition(required, decide(required), { _tag: "Ready" })).toMatchObject({ status: "True", reason: "RolledOut" })
    expect(readyCondition(required, decide(required), { _tag: "Blip", dueMs: 1 })).toMatchObject({ status: "True", reason: "RolledOut" })
    expect(readyCondition(base, decide(base), { _tag: "Ready" })).toMatchObject({ status: "True", reason: "ValidationDisabled" })
  })

  it("watches the active plan only when nothing else speaks first: not while a rollout is open, ended without success, paused, suspended or deleting", () => {
    expect(watchedPlan(base, decide(base))?.desiredStateDigest).toBe(plan.desiredStateDigest)
    const open = observed({
      plans: new Map([planRead(plan)]),
      rollouts: [rolledOut, rollout("cluster-aaaa-2", plan.desiredStateDigest, { created: "2026-12-02T11:30:00Z" })],
    })
    expect(watchedPlan(open, decide(open))).toBeUndefined()
    for (const spec of [{ paused: true }, { suspendEngine: true }]) {
      const o = observed({ rt: runtime({ spec }), plans: new Map([planRead(plan)]), rollouts: [rolledOut] })
      expect(watchedPlan(o, decide(o))).toBeUndefined()
    }
    const deleting = observed({
      rt: runtime({ metadata: { deletionTimestamp: "2026-12-02T11:59:00Z" } }),
      plans: new Map([planRead(plan)]),
      rollouts: [rolledOut],
    })
    expect(watchedPlan(deleting, decide(deleting))).toBeUndefined()
  })

  it("remembers when each release was first seen not ready, and forgets one that recovered", async () => {
    const memory = makeNotReadySince()
    const run = (ms: number, keys: string[]) =>
      Effect.runPromise(TestClock.setTime(ms).pipe(Effect.andThen(memory.observe(keys)), Effect.provide(TestClock.layer())))
    expect([...(await run(1_000, ["p/a"]))]).toEqual([["p/a", 1_000]])
    expect([...(await run(5_000, ["p/a", "p/b"]))]).toEqual([
      ["p/a", 1_000],
      ["p/b", 5_000],
    ])
    expect([...(await run(9_000, ["p/b"]))]).toEqual([["p/b", 5_000]])
    expect([...(await run(12_000, ["p/a"]))]).toEqual([["p/a", 12_000]])
  })

  it("starts a pass only for an Application change the planner reads: not Argo CD's reconciledAt or operation timestamps", () => {
    const a = app(gpu, {
      reconciledAt: "2026-12-02T12:00:00Z",
      operationState: { phase: "Succeeded", finishedAt: "2026-12-02T11:00:00Z", syncResult: { revision: gpu.chart.digest } },
    })
    const later = {
      ...a,
      metadata: { ...a.metadata, resourceVersion: "9" },
      status: { ...a.status, reconciledAt: "2026-12-02T12:03:00Z", operationState: { ...a.status!.operationState, finishedAt: "2026-12-02T11:59:00Z" } },
    }
    expect(unchangedForPlanner(watchedProjection(a), watchedProjection(later))).toBe(true)
    expect(unchangedForPlanner(watchedProjection(a), watchedProjection(nodeDown.find((x) => x.metadata.name === "gpu-operator")!))).toBe(false)
    const relabelled = { ...a, metadata: { ...a.metadata, labels: { [LABEL_RUNTIME_UID]: "other" } } }
    expect(unchangedForPlanner(watchedProjection(a), watchedProjection(relabelled))).toBe(false)
    expect(Object.keys(watchedProjection(a))).toEqual(["apiVersion", "kind", "metadata", "watched"])
  })
})

describe("planner: an open rollout's stall and the engine's reason on the runtime's Stalled and Ready", () => {
  const target = planOf(V0_11)
  const NAME = "cluster-aaaaaaaaaaaa-1"
  const open = (conditions: unknown[], approved = true) => rollout(NAME, target.desiredStateDigest, { approved, conditions })
  const statusOf = (r: RuntimeRollout, rt = runtime()) => {
    const o = observed({ rt, plans: new Map([planRead(target)]), rollouts: [r] })
    const d = decide(o)
    expect(d.open?.metadata.name).toBe(NAME)
    return { ready: readyCondition(o, d), stalled: stalledCondition(o, d), planned: plannedCondition(d) }
  }
  const step = "step 2/4 gpu-operator (Install)"

  it.each([
    "AwaitingAcknowledgement",
    "InventoryDrift",
    "MovedReleaseMissing",
    "ForeignObject",
    "NamespaceMissing",
    "StepUnknown",
    "EngineSuspensionRefused",
    "PlanUnreadable",
  ])("Progressing=False/%s: Stalled with the same reason, naming the rollout and the step; cleared once the rollout moves on", (reason) => {
    const stalled = { ...cond("Progressing", "False", reason), message: `${step}: what the step executor says` }
    const s = statusOf(open([cond("Approved", "True", "ApprovedByUser"), stalled]))
    expect(s.stalled).toEqual({ type: "Stalled", status: "True", reason, message: `rollout ${NAME} ${step}: what the step executor says` })
    // Ready's RollingOut form for a stalled rollout (operator.md §3.2): rollout <name> stalled: <message>.
    expect(s.ready).toMatchObject({
      status: "False",
      reason: "RollingOut",
      message: `rollout ${NAME} stalled: ${reason}: ${step}: what the step executor says`,
    })
    const moving = { ...cond("Progressing", "True", "StepInProgress"), message: `${step}: waiting for Argo CD` }
    expect(statusOf(open([cond("Approved", "True", "ApprovedByUser"), moving])).stalled).toMatchObject({ status: "False", reason: "NotStalled" })
  })

  it.each(["Paused", "EngineSuspended", "AwaitingValidationReady", "EngineMissing"])(
    "Progressing=False/%s is no rollout stall (a person's choice, or the runtime's own condition says it)",
    (reason) => {
      expect(statusOf(open([cond("Approved", "True", "ApprovedByUser"), cond("Progressing", "False", reason)])).stalled).toMatchObject({
        status: "False",
        reason: "NotStalled",
      })
    },
  )

  it("a stale Progressing (reported for an older generation) is no stall", () => {
    expect(statusOf(open([cond("Progressing", "False", "InventoryDrift", 0)])).stalled).toMatchObject({ status: "False" })
  })

  it("Approved=False/AwaitingApproval: Stalled AwaitingApproval with the approve command; Ready RollingOut awaiting approval; cleared once approved", () => {
    const waiting = { ...cond("Approved", "False", "AwaitingApproval"), message: "no approval yet; approvers: group gpu-admins" }
    const s = statusOf(open([waiting], false))
    expect(s.stalled).toEqual({
      type: "Stalled",
      status: "True",
      reason: "AwaitingApproval",
      message: `rollout ${NAME} awaiting approval (kubectl aicr approve ${NAME} --reason "…"): no approval yet; approvers: group gpu-admins`,
    })
    expect(s.ready).toMatchObject({ status: "False", reason: "RollingOut", message: expect.stringMatching(new RegExp(`^rollout ${NAME} awaiting approval`)) })
    expect(statusOf(open([cond("Approved", "True", "ApprovedByUser")])).stalled).toMatchObject({ status: "False", reason: "NotStalled" })
    // Not yet looked at by the approval guard: no claim either way.
    expect(statusOf(open([], false)).stalled).toMatchObject({ status: "False", reason: "NotStalled" })
  })

  it("Approved=False/AwaitingAcknowledgement: Stalled AwaitingAcknowledgement naming the rollout", () => {
    const ack = { ...cond("Approved", "False", "AwaitingAcknowledgement"), message: "step 2/4 gpu-operator waits for kubectl aicr acknowledge" }
    expect(statusOf(open([ack])).stalled).toMatchObject({
      status: "True",
      reason: "AwaitingAcknowledgement",
      message: `rollout ${NAME}: step 2/4 gpu-operator waits for kubectl aicr acknowledge`,
    })
  })

  const withEngine = (reason: string, message: string) => {
    const rt = runtime()
    return {
      ...rt,
      status: { ...rt.status, conditions: [...(rt.status?.conditions ?? []), { ...cond("EngineAvailable", "False", reason), message }] },
    } as ClusterRuntime
  }
  it.each(["EngineMissing", "ProjectMissing", "Unauthorized"])(
    "EngineAvailable=False/%s: Ready=False and Stalled=True with the same reason and message, before the rollout's own wait",
    (reason) => {
      const message = `what the step executor found (${reason})`
      const s = statusOf(open([cond("Approved", "True", "ApprovedByUser"), cond("Progressing", "False", reason)]), withEngine(reason, message))
      expect(s.ready).toEqual({ type: "Ready", status: "False", reason, message })
      expect(s.stalled).toEqual({ type: "Stalled", status: "True", reason, message })
    },
  )

  it("EngineAvailable=False/EngineNotResponding: Stalled only (not a Ready reason); Ready stays RollingOut", () => {
    const s = statusOf(
      open([cond("Approved", "True", "ApprovedByUser"), cond("Progressing", "False", "EngineNotResponding")]),
      withEngine("EngineNotResponding", "Argo CD has not compared for 10m"),
    )
    expect(s.stalled).toMatchObject({ status: "True", reason: "EngineNotResponding", message: "Argo CD has not compared for 10m" })
    expect(s.ready).toMatchObject({ status: "False", reason: "RollingOut" })
  })

  it("EngineAvailable=True or not reported: no engine reason", () => {
    const rt = runtime()
    const ready = {
      ...rt,
      status: { ...rt.status, conditions: [...(rt.status?.conditions ?? []), cond("EngineAvailable", "True", "EngineReady")] },
    } as ClusterRuntime
    for (const r of [ready, runtime()])
      expect(statusOf(open([cond("Approved", "True", "ApprovedByUser")]), r).stalled).toMatchObject({ status: "False", reason: "NotStalled" })
  })
})

describe("planner: spec.paused", () => {
  it("a paused runtime creates no rollout and starts no assessment: Planned=False/Paused, Ready=False/Paused, not Stalled; cleared, the rollout is created", () => {
    const target = planOf(V0_11)
    const active = planOf(V0_10)
    const rt = runtime({ spec: { paused: true }, plans: { active: active.desiredStateDigest } })
    const o = observed({
      rt,
      status: rt.status?.plans,
      plans: new Map([planRead(active)]),
      rollouts: [rollout("cluster-aaaaaaaaaaaa-1", active.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })],
    })
    const d = decide(o)
    expect(d.create).toBeUndefined()
    expect(d.needs).toBeUndefined()
    expect(d.open).toBeUndefined()
    expect(d.target).toBe(target.desiredStateDigest)
    expect(plannedCondition(d)).toMatchObject({ status: "False", reason: "Paused", message: expect.stringContaining("spec.paused is set") })
    expect(readyCondition(o, d)).toMatchObject({ status: "False", reason: "Paused" })
    expect(stalledCondition(o, d)).toMatchObject({ status: "False", reason: "NotStalled" })
    const resumed = runtime({ plans: { active: active.desiredStateDigest } })
    const r = decide({ ...o, runtime: resumed, upgradeCheck: undefined })
    expect(r.create?.rollout.spec).toMatchObject({ kind: "Upgrade", fromDigest: active.desiredStateDigest, toDigest: target.desiredStateDigest })
    expect(plannedCondition(r)).toMatchObject({ status: "True", reason: "PlanComputed" })
  })
})
