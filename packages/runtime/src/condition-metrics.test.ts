// The condition metrics against prom-client's registry output (the Prometheus text format a scrape returns), from
// caches given as plain lists: what each controller exports is exactly its contract's room, read at scrape time.
import { type KubeObject, ClusterRuntimeKind, type ResourceKind, RuntimeRolloutKind } from "@aicr/api"
import { approvalGuard, CONTRACTS, ecrCredentialRefresher, planner, stepExecutor } from "@aicr/contracts"
import type { Informer } from "@aicr/kube"
import { Registry } from "prom-client"
import { describe, expect, it } from "vitest"
import { conditionMetricsOf, registerConditionMetrics, STATUS_FIELDS } from "./condition-metrics"

/** A cache holding `objects` (mutable, as an informer's cache changes between scrapes). */
const cache = (kind: ResourceKind, objects: KubeObject[]): Informer<KubeObject> => ({ kind, list: () => objects }) as unknown as Informer<KubeObject>

const cond = (type: string, status: string, reason: string, lastTransitionTime = "2026-12-03T10:00:00Z") => ({
  type,
  status,
  reason,
  message: "m",
  lastTransitionTime,
})
const rollout = (name: string, status: Record<string, unknown>): KubeObject =>
  ({ apiVersion: "operator.aicr.run/v1alpha1", kind: "RuntimeRollout", metadata: { name }, status }) as KubeObject
const runtime = (status: Record<string, unknown>): KubeObject =>
  ({ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, status }) as KubeObject

interface Sample {
  readonly labels: Record<string, string>
  readonly value: number
}
/** The samples of one metric in a scrape, parsed from the text format. */
const samples = (text: string, metric: string): Sample[] =>
  text.split("\n").flatMap((line) => {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null || m[1] !== metric) return []
    const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]))
    return [{ labels, value: Number(m[3]) }]
  })
const metricNames = (text: string) =>
  [
    ...new Set(
      text
        .split("\n")
        .filter((l) => l.startsWith("# TYPE "))
        .map((l) => l.split(" ")[2]!),
    ),
  ].sort()

const T = Date.parse("2026-12-03T10:00:00Z") / 1000

describe("condition metrics", () => {
  it("approval-guard exports its Approved condition and the approval's end, and nothing another controller owns on the same object", async () => {
    const registry = new Registry()
    const r1 = rollout("r1", {
      conditions: [cond("Approved", "True", "ApprovedByUser"), cond("Progressing", "True", "StepInProgress"), cond("Succeeded", "False", "InProgress")],
      approval: { approvedBy: "alice", validUntil: "2026-12-03T12:00:00Z" },
      steps: { total: 13, done: 4 },
    })
    registerConditionMetrics(registry, approvalGuard, [cache(RuntimeRolloutKind, [r1])])
    const text = await registry.metrics()
    expect(metricNames(text)).toEqual([
      "aicr_runtimerollout_approval_valid_until_seconds",
      "aicr_status_condition",
      "aicr_status_condition_last_transition_time_seconds",
    ])
    expect(samples(text, "aicr_status_condition")).toEqual([
      { labels: { kind: "RuntimeRollout", name: "r1", type: "Approved", status: "True", reason: "ApprovedByUser" }, value: 1 },
    ])
    expect(samples(text, "aicr_status_condition_last_transition_time_seconds")).toEqual([
      { labels: { kind: "RuntimeRollout", name: "r1", type: "Approved", status: "True", reason: "ApprovedByUser" }, value: T },
    ])
    expect(samples(text, "aicr_runtimerollout_approval_valid_until_seconds")).toEqual([{ labels: { name: "r1" }, value: T + 2 * 3600 }])
  })

  it("reads the cache at each scrape: a changed condition replaces its series, a removed object takes its series with it", async () => {
    const registry = new Registry()
    const objects = [
      rollout("r1", { conditions: [cond("Approved", "False", "AwaitingApproval")] }),
      rollout("r2", { conditions: [cond("Approved", "False", "AwaitingApproval")] }),
    ]
    registerConditionMetrics(registry, approvalGuard, [cache(RuntimeRolloutKind, objects)])
    const approved = async () => samples(await registry.metrics(), "aicr_status_condition").map((s) => `${s.labels.name} ${s.labels.status} ${s.labels.reason}`)
    expect(await approved()).toEqual(["r1 False AwaitingApproval", "r2 False AwaitingApproval"])
    objects[0] = rollout("r1", {
      conditions: [cond("Approved", "True", "ApprovedByUser", "2026-12-03T10:05:00Z")],
      approval: { validUntil: "2026-12-03T11:00:00Z" },
    })
    objects.pop()
    expect(await approved()).toEqual(["r1 True ApprovedByUser"])
    const text = await registry.metrics()
    expect(samples(text, "aicr_status_condition_last_transition_time_seconds").map((s) => s.value)).toEqual([T + 300])
    expect(samples(text, "aicr_runtimerollout_approval_valid_until_seconds")).toEqual([{ labels: { name: "r1" }, value: T + 3600 }])
  })

  it("the refresher exports RegistryCredentialsReady and the credentials' expiry and refresh, not the planner's Ready", async () => {
    const registry = new Registry()
    const rt = runtime({
      conditions: [cond("Ready", "False", "EngineSuspended"), cond("RegistryCredentialsReady", "True", "TokenRefreshed")],
      credentials: { provider: "aws", expiresAt: "2026-12-03T22:00:00Z", refreshedAt: "2026-12-03T10:00:00Z" },
      engine: { applications: 13, suspended: 13 },
    })
    registerConditionMetrics(registry, ecrCredentialRefresher, [cache(ClusterRuntimeKind, [rt])])
    const text = await registry.metrics()
    expect(samples(text, "aicr_status_condition").map((s) => s.labels)).toEqual([
      { kind: "ClusterRuntime", name: "cluster", type: "RegistryCredentialsReady", status: "True", reason: "TokenRefreshed" },
    ])
    expect(samples(text, "aicr_clusterruntime_credentials_expires_at_seconds")).toEqual([{ labels: { name: "cluster" }, value: T + 12 * 3600 }])
    expect(samples(text, "aicr_clusterruntime_credentials_refreshed_at_seconds")).toEqual([{ labels: { name: "cluster" }, value: T }])
    expect(samples(text, "aicr_clusterruntime_engine_suspended_applications")).toEqual([])
  })

  it("the planner exports Ready and Stalled on the runtime and Succeeded on each rollout, with when each last changed", async () => {
    const registry = new Registry()
    const rt = runtime({
      conditions: [
        cond("Ready", "False", "RollingOut", "2026-12-03T09:00:00Z"),
        cond("Stalled", "True", "RolloutFailed"),
        cond("Resolved", "True", "Resolved"),
      ],
    })
    const r1 = rollout("r1", { conditions: [cond("Succeeded", "False", "InProgress"), cond("Approved", "True", "ApprovedByUser")] })
    registerConditionMetrics(registry, planner, [cache(ClusterRuntimeKind, [rt]), cache(RuntimeRolloutKind, [r1])])
    const text = await registry.metrics()
    expect(
      samples(text, "aicr_status_condition_last_transition_time_seconds")
        .map((s) => `${s.labels.kind}/${s.labels.name} ${s.labels.type}=${s.labels.status} ${s.labels.reason} ${s.value - T}`)
        .sort(),
    ).toEqual([
      "ClusterRuntime/cluster Ready=False RollingOut -3600",
      "ClusterRuntime/cluster Stalled=True RolloutFailed 0",
      "RuntimeRollout/r1 Succeeded=False InProgress 0",
    ])
    // The planner owns no status field of STATUS_FIELDS (plans, assessment).
    expect(metricNames(text)).toEqual(["aicr_status_condition", "aicr_status_condition_last_transition_time_seconds"])
  })

  it("the step-executor exports the rollout's steps and the engine's Applications", async () => {
    const registry = new Registry()
    registerConditionMetrics(registry, stepExecutor, [
      cache(ClusterRuntimeKind, [runtime({ engine: { applications: 13, suspended: 2 } })]),
      cache(RuntimeRolloutKind, [rollout("r1", { steps: { total: 13, done: 4 } }), rollout("r2", {})]),
    ])
    const text = await registry.metrics()
    expect(samples(text, "aicr_runtimerollout_steps")).toEqual([{ labels: { name: "r1" }, value: 13 }])
    expect(samples(text, "aicr_runtimerollout_steps_done")).toEqual([{ labels: { name: "r1" }, value: 4 }])
    expect(samples(text, "aicr_clusterruntime_engine_applications")).toEqual([{ labels: { name: "cluster" }, value: 13 }])
    expect(samples(text, "aicr_clusterruntime_engine_suspended_applications")).toEqual([{ labels: { name: "cluster" }, value: 2 }])
    expect(samples(text, "aicr_status_condition")).toEqual([])
  })

  it("counts an object once across several informers of its kind, and skips a time it cannot read", async () => {
    const registry = new Registry()
    const a = rollout("r1", { conditions: [cond("Approved", "False", "AwaitingApproval", "not a time")], approval: { validUntil: "soon" } })
    registerConditionMetrics(registry, approvalGuard, [cache(RuntimeRolloutKind, [a]), cache(RuntimeRolloutKind, [a])])
    const text = await registry.metrics()
    expect(samples(text, "aicr_status_condition")).toHaveLength(1)
    expect(samples(text, "aicr_status_condition_last_transition_time_seconds")).toEqual([])
    expect(samples(text, "aicr_runtimerollout_approval_valid_until_seconds")).toEqual([])
  })

  it("registers nothing for a process whose name is no controller's", async () => {
    const registry = new Registry()
    conditionMetricsOf(registry, "test-controller", [cache(RuntimeRolloutKind, [rollout("r1", { conditions: [cond("Approved", "True", "ApprovedByUser")] })])])
    expect(await registry.metrics()).toBe("\n")
  })

  it("each status field is owned by exactly one controller, so no two processes export the same series", () => {
    for (const f of STATUS_FIELDS) {
      const owners = CONTRACTS.filter((c) => c.writes.some((w) => w.kind.kind === f.kind.kind && w.statusKeys.includes(f.statusKey)))
      expect(
        owners.map((c) => c.controller),
        f.metric,
      ).toHaveLength(1)
    }
  })
})
