import { ANNOTATION_EDITED_BY, ANNOTATION_RETRY, type ClusterRuntime, LABEL_OUTCOME, type Plan, type RuntimeRollout, sha256 } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { assessWithoutUpgradeCheck, blockedBy, parseUpgradeCheck, versionJump } from "./assess"
import { composePlan, readContent } from "./compose"
import { decide } from "./decide"
import type { Observed, PlanRead } from "./gather"
import { planSteps } from "./steps"
import { readyCondition, stalledCondition } from "./status"

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
    componentRefs: comps.map((c) => ({ name: c.name, namespace: c.namespace, chart: c.name, version: c.version, source: c.source ?? "https://charts.example", dependencyRefs: c.deps })),
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

const planOf = (comps: Comp[], values: Record<string, string> = {}): Plan => {
  const c = readContent(content(comps, values))
  if (!c.ok) throw new Error(c.why)
  const p = composePlan({ runtimeUID: UID, resolution: { inputDigest: digest("in"), aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" } }, mirror: mirrorOf(comps), contentConfigMap: "aicr-content-x", content: c.value, project: "aicr", now: "2026-12-02T11:00:00Z" })
  if (!p.ok) throw new Error(p.why)
  return p.value
}

const cond = (type: string, status: "True" | "False" | "Unknown", reason: string, generation = 1) => ({ type, status, reason, message: `${type} ${reason}`, observedGeneration: generation, lastTransitionTime: "2026-12-02T10:00:00Z" })

const runtime = (extra: { annotations?: Record<string, string>; spec?: Record<string, unknown>; plans?: Record<string, unknown> } = {}): ClusterRuntime => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "ClusterRuntime",
  metadata: { name: "cluster", uid: UID, generation: 1, annotations: { [ANNOTATION_EDITED_BY]: "alice", ...extra.annotations } },
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
    namespace: "aicr-system",
    project: "aicr",
    windowMs: 0,
    deadlineMs: 86_400_000,
    now: NOW,
    ...o,
  }
}

const rollout = (name: string, toDigest: string, extra: { labels?: Record<string, string>; approved?: boolean; conditions?: unknown[]; fromDigest?: string; created?: string } = {}): RuntimeRollout => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "RuntimeRollout",
  metadata: { name, generation: 1, creationTimestamp: extra.created ?? "2026-12-02T11:00:00Z", labels: extra.labels ?? {} },
  spec: {
    runtimeUID: UID,
    toDigest,
    ...(extra.fromDigest ? { fromDigest: extra.fromDigest } : {}),
    kind: extra.fromDigest ? "Upgrade" : "Install",
    deadline: "2026-12-03T11:00:00Z",
    requiresApproval: true,
    ...(extra.approved ? { approval: { approvedBy: "bob", reason: "ok", approvedAt: "2026-12-02T11:10:00Z", expiresAt: "2026-12-02T17:00:00Z", toDigest } } : {}),
  },
  ...(extra.conditions ? { status: { conditions: extra.conditions as never } } : {}),
})

describe("planner: composing the plan", () => {
  it("pins every release to the mirrored chart digest, in deployment order, and the same inputs give the same digest", () => {
    const a = planOf(V0_11)
    const b = planOf(V0_11)
    expect(a.desiredStateDigest).toBe(b.desiredStateDigest)
    expect(a.releases.map((r) => [r.name, r.order])).toEqual([["cert-manager", 0], ["gpu-operator", 1], ["kai-scheduler", 2], ["nvsentinel", 3]])
    expect(a.releases[2]).toMatchObject({ chart: { ref: "127.0.0.1:5000/aicr/cluster/charts/kai-scheduler:v0.13.0", digest: digest("kai-scheduler@v0.13.0") }, upstream: { version: "v0.13.0" }, dependsOn: ["gpu-operator"] })
  })

  it("changes the digest when a values file changes, and not when only the creation time does", () => {
    expect(planOf(V0_11, { "gpu-operator": "driver: {enabled: false}\n" }).desiredStateDigest).not.toBe(planOf(V0_11).desiredStateDigest)
  })

  it("adds a <release>-manifests wrapper release after a chart that carries manifests", () => {
    const c = readContent(content(V0_11))
    if (!c.ok) throw new Error(c.why)
    const p = composePlan({ runtimeUID: UID, resolution: {}, mirror: mirrorOf(V0_11, { "gpu-operator-manifests": `r/wrappers/gpu-operator:0.0.0-aicr-1@${digest("w")}` }), contentConfigMap: "c", content: c.value, project: "aicr", now: "t" })
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
      expect.objectContaining({ component: "kai-scheduler", change: "version", from: "v0.12.17", to: "v0.13.0", verdict: "unknown", reason: "no-upgrade-check", jump: "1 minor", breaking: true, failsRun: true }),
      expect.objectContaining({ component: "nvsentinel", change: "version", from: "v0.10.0", to: "v1.1.0", verdict: "unknown", jump: "1 major", breaking: true }),
    ])
    expect(a.components[0]!.explanation).toContain("AICR v0.11.1 has no upgrade-check")
    expect(a.components.some((c) => c.verdict === "safe")).toBe(false)
    expect(a.summary).toEqual({ components: 2, failing: 2 })
  })

  it("says why nothing is rated: no upgrade-check in 0.x; not run yet for a 1.x AICR (its capabilities say it has one)", () => {
    expect(assessWithoutUpgradeCheck(planOf(V0_10), planOf(V0_11), "v1.3.0").components[0]!.explanation).toContain("AICR v1.3.0 has upgrade-check, but this operator does not run it yet")
    expect(assessWithoutUpgradeCheck(planOf(V0_10), planOf(V0_11), "v1.3.0").components.every((c) => c.verdict !== "safe")).toBe(true)
  })

  it("a first install lists every component as added, with no verdict", () => {
    const a = assessWithoutUpgradeCheck(undefined, planOf(V0_11), "v0.11.1")
    expect(a.components.map((c) => [c.component, c.change, c.verdict])).toEqual(V0_11.map((c) => [c.name, "added", undefined]))
  })

  it("a values-only change and a namespace move are unknown too", () => {
    const moved = V0_11.map((c) => (c.name === "cert-manager" ? { ...c, namespace: "certs" } : c))
    const a = assessWithoutUpgradeCheck(planOf(V0_11), planOf(moved, { "gpu-operator": "x: 1\n" }), "v0.11.1")
    expect(a.components.map((c) => [c.component, c.change, c.verdict])).toEqual([["cert-manager", "identity", "unknown"], ["gpu-operator", "values", "unknown"]])
  })
})

describe("planner: AICR 1.x upgrade-check reports (fixtures shaped after the documented JSON report, aicr-newer.md §1.4)", () => {
  const report = (rows: unknown[]) => JSON.stringify({ from: "a", to: "b", deployer: "argocd", components: rows, summary: { components: rows.length, failing: 1 }, atRisk: { scanned: false } })
  it("keeps AICR's verdicts, steps and flags, and tolerates missing optional keys", () => {
    const r = parseUpgradeCheck(
      report([
        { component: "alpha", change: "version", from: "1.2.0", to: "1.2.3", verdict: "safe", reason: "recorded", jump: "3 patches", breaking: false, downgrade: false, failsRun: false },
        { component: "beta", change: "version", from: "0.17.2", to: "0.18.1", verdict: "manual", reason: "recorded", steps: [{ id: "rename-crs", description: "Rename the CRs" }], breaking: true, failsRun: true },
        { component: "gamma", change: "added", to: "0.4.0" },
      ]),
      { aicrVersion: "v1.3.0", toDigest: digest("t") },
    )
    expect(r.ok && r.value.components.map((c) => [c.component, c.verdict, c.failsRun])).toEqual([["alpha", "safe", false], ["beta", "manual", true], ["gamma", undefined, false]])
    expect(r.ok && r.value.assessedBy).toBe("aicr upgrade-check")
  })
  it("fails closed on an unknown verdict or change kind", () => {
    const r = parseUpgradeCheck(report([{ component: "x", change: "teleported", verdict: "safe" }, { component: "y", change: "version", verdict: "probably-fine" }]), { aicrVersion: "v1.3.0", toDigest: digest("t") })
    expect(r.ok && r.value.components.map((c) => [c.verdict, c.failsRun])).toEqual([["unknown", true], ["unknown", true]])
  })
  it("blocked rows block the transition", () => {
    const r = parseUpgradeCheck(report([{ component: "kappa", change: "version", from: "3.2.0", to: "4.0.0", verdict: "blocked", reason: "multiple-boundaries" }]), { aicrVersion: "v1.3.0", toDigest: digest("t") })
    expect(r.ok && blockedBy(r.value).map((b) => b.component)).toEqual(["kappa"])
  })
  it("refuses a report that is not the schema", () => {
    expect(parseUpgradeCheck("{}", { aicrVersion: "v1", toDigest: digest("t") }).ok).toBe(false)
  })
})

describe("planner: steps", () => {
  it("installs and upgrades in dependency order, removes in reverse order, and skips unchanged releases", () => {
    const from = planOf([...V0_10, { name: "old-a", namespace: "x", version: "1.0.0" }, { name: "old-b", namespace: "x", version: "1.0.0", deps: ["old-a"] }])
    const to = planOf([...V0_11, { name: "new", namespace: "n", version: "0.1.0" }])
    const steps = planSteps(from, to, assessWithoutUpgradeCheck(from, to, "v0.11.1"))
    expect(steps.map((s) => `${s.action} ${s.release}${s.verdict ? ` ${s.verdict}` : ""}`)).toEqual(["Upgrade kai-scheduler unknown", "Upgrade nvsentinel unknown", "Install new", "Remove old-b", "Remove old-a"])
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
    const later = decide(observed({ windowMs: 600_000, now: NOW + 300_000, rt: runtime({ plans: { target: target.desiredStateDigest, targetSince: new Date(NOW).toISOString() } }) }))
    expect(later.plan).toMatchObject({ _tag: "Stabilizing", until: NOW + 600_000 })
    const other = decide(observed({ windowMs: 600_000, now: NOW + 300_000, rt: runtime({ plans: { target: digest("older"), targetSince: new Date(NOW).toISOString() } }) }))
    expect(other.plan).toMatchObject({ _tag: "Stabilizing", until: NOW + 900_000 })
  })

  it("creates an Install rollout awaiting approval once the window passed, requested by the runtime's last editor", () => {
    const d = decide(observed({ plans: new Map([planRead(target)]) }))
    expect(d.writePlan).toBeUndefined()
    const r = d.create!.rollout
    expect(r.metadata.name).toMatch(/^cluster-[a-f0-9]{12}-1$/)
    expect(r.spec).toMatchObject({ kind: "Install", toDigest: target.desiredStateDigest, requiresApproval: true, requestedBy: "alice", deadline: "2026-12-03T12:00:00.000Z" })
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
    expect(stalledCondition(observed(), e)).toMatchObject({ status: "True", reason: "RolloutFailed", message: expect.stringContaining("operator.aicr.run/retry=cluster-dddddddddddd-1") })
  })

  it("ignores stale rollout conditions", () => {
    const stale = rollout("cluster-eeeeeeeeeeee-1", target.desiredStateDigest, { approved: true, conditions: [cond("Progressing", "True", "StepsCompleted", 0)] })
    expect(decide(observed({ plans: new Map([planRead(target)]), rollouts: [stale] })).closes).toEqual([])
  })

  it("a retry needs the annotation naming the ended rollout, and makes the next attempt", () => {
    const failed = rollout("cluster-ffffffffffff-1", target.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Expired" } })
    expect(decide(observed({ plans: new Map([planRead(target)]), rollouts: [failed] })).create).toBeUndefined()
    const d = decide(observed({ rt: runtime({ annotations: { [ANNOTATION_RETRY]: "cluster-ffffffffffff-1" } }), plans: new Map([planRead(target)]), rollouts: [failed] }))
    expect(d.create?.rollout.metadata.name).toMatch(/-2$/)
  })

  it("a pin targets the earlier plan as a Rollback; a pin to a missing plan is PlanUnreadable", () => {
    const earlier = planOf(V0_10)
    const done = rollout("cluster-aaaaaaaaaaaa-2", target.desiredStateDigest, { labels: { [LABEL_OUTCOME]: "Succeeded" } })
    const d = decide(observed({ rt: runtime({ spec: { pin: { desiredStateDigest: earlier.desiredStateDigest } } }), plans: new Map([planRead(target), planRead(earlier)]), rollouts: [done] }))
    expect(d.create?.rollout.spec).toMatchObject({ kind: "Rollback", fromDigest: target.desiredStateDigest, toDigest: earlier.desiredStateDigest })
    const missing = decide(observed({ rt: runtime({ spec: { pin: { desiredStateDigest: digest("gone") } } }) }))
    expect(missing.plan).toMatchObject({ _tag: "Blocked", reason: "PlanUnreadable", message: expect.stringContaining("does not exist") })
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
    ["an Application the suspension does not hold on", true, { applications: 3, suspended: 2, suspensionRefused: refused }, "EngineSuspensionRefused", "EngineSuspensionRefused"],
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
  it("names the rollout's step only once it is approved", async () => {
    const { runtimeStatus } = await import("./status")
    const target = planOf(V0_11)
    const o = observed({ plans: new Map([planRead(target)]) })
    const waiting = { ...rollout("cluster-aaaaaaaaaaaa-1", target.desiredStateDigest), status: { steps: { total: 4, done: 0, current: "1/4 cert-manager (Install)" } } } as RuntimeRollout
    const d = { ...decide(o), open: waiting }
    expect(runtimeStatus(o, d).plans).toMatchObject({ rollout: { name: "cluster-aaaaaaaaaaaa-1" } })
    expect((runtimeStatus(o, d).plans as { rollout: { step?: string } }).rollout.step).toBeUndefined()
    const approved = { ...waiting, spec: { ...waiting.spec, approval: { approvedBy: "bob", reason: "ok", approvedAt: "t", expiresAt: "t", toDigest: target.desiredStateDigest } } } as RuntimeRollout
    expect((runtimeStatus(o, { ...d, open: approved }).plans as { rollout: { step?: string } }).rollout.step).toBe("1/4 cert-manager (Install)")
  })
})
