import { capabilitiesOf, DEFAULT_JOB_SETTINGS, versionGate } from "@aicr/aicr"
import type { ClusterRuntime } from "@aicr/api"
import { describe, expect, it } from "vitest"
import type { ResolverSettings } from "./config"
import { discover } from "./discovery"
import { AicrJobFailedError, BundleUnreadableError, defectOutcome, DiscoveryFailedError, toOutcome } from "./errors"
import type { Observed } from "./gather"
import { type Outcome, report, reportInternalError } from "./status"

const T0 = Date.parse("2026-12-02T10:00:00Z")
const caps = capabilitiesOf("v1.1.2")!
const settings: ResolverSettings = {
  caps,
  version: "v1.1.2",
  gate: versionGate(caps, { prerelease: false, outsideRange: false }),
  jobs: { ...DEFAULT_JOB_SETTINGS, image: "ghcr.io/nvidia/aicr:v1.1.2" },
  namespace: "aicr-system",
  registry: { host: "registry.example", prefix: "aicr" },
  plainHttp: [],
  dockerConfig: undefined,
  allowedNamespaces: ["gpu-operator"],
}
const runtime = (status?: ClusterRuntime["status"]): ClusterRuntime =>
  ({
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster", generation: 3 },
    spec: {},
    ...(status ? { status } : {}),
  }) as ClusterRuntime
const placement = { system: { nodeSelector: { group: "system" } } }
const nodes = ["a", "b"].map((name) => ({ metadata: { name, labels: { group: "system" } } }))
const observed = (r: ClusterRuntime = runtime(), now = T0): Observed => ({
  runtime: r,
  settings,
  discovery: discover(placement, nodes),
  previous: r.status?.discovery,
  resolution: r.status?.resolution,
  pin: { version: settings.version, image: settings.jobs.image },
  now,
})
const resolving: Outcome = { _tag: "Resolving", message: "Resolving input abc: recipe Job x started", known: {} }
const DIGEST = `sha256:${"a".repeat(64)}`

type Write = Record<string, unknown> & {
  conditions: Array<{ type: string; status: string; reason: string; message: string; observedGeneration: number; lastTransitionTime: string }>
}
const write = (o: Observed, outcome: Outcome) => report(o, outcome) as unknown as Write
const cond = (w: Write, type: string) => w.conditions.find((c) => c.type === type)!

describe("report", () => {
  it.each([
    ["first visit, nothing resolved yet: both conditions, discovery only", resolving, ["Discovered", "Resolved"], ["conditions", "discovery"]],
    [
      "resolved: both rooms",
      { _tag: "Resolved", resolution: { inputDigest: DIGEST, releases: 13 }, known: {} } satisfies Outcome,
      ["Discovered", "Resolved"],
      ["conditions", "discovery", "resolution"],
    ],
  ])("%s", (_n, outcome, types, keys) => {
    const w = write(observed(), outcome as Outcome)
    expect(w.conditions.map((c) => c.type).sort()).toEqual(types)
    expect(w.conditions.every((c) => c.observedGeneration === 3 && c.lastTransitionTime === "2026-12-02T10:00:00Z")).toBe(true)
    expect(Object.keys(w).sort()).toEqual(keys)
  })

  it("an unchanged status keeps its transition times; a changed one moves them", () => {
    type Conds = NonNullable<NonNullable<ClusterRuntime["status"]>["conditions"]>
    const first = write(observed(), resolving).conditions as unknown as Conds
    expect(write(observed(runtime({ conditions: first }), T0 + 60_000), resolving).conditions).toEqual(first)
    const flipped = write(observed(runtime({ conditions: first }), T0 + 60_000), {
      _tag: "Resolved",
      resolution: { inputDigest: DIGEST, releases: 13 },
      known: {},
    })
    expect(cond(flipped, "Resolved").lastTransitionTime).toBe("2026-12-02T10:01:00Z")
    expect(cond(flipped, "Discovered").lastTransitionTime).toBe("2026-12-02T10:00:00Z")
  })

  it("a discovery failure sets both conditions with its reason; a resolution failure leaves Discovered True", () => {
    const d = write(observed(), { ...toOutcome(new DiscoveryFailedError({ reason: "NodeGroupEmpty", message: "No node matches x" }), ""), known: {} })
    expect([cond(d, "Discovered"), cond(d, "Resolved")].map((c) => [c.status, c.reason, c.message])).toEqual([
      ["False", "NodeGroupEmpty", "No node matches x"],
      ["False", "NodeGroupEmpty", "No node matches x"],
    ])
    const r = write(observed(), {
      ...toOutcome(new BundleUnreadableError({ kind: "transient", digest: DIGEST, message: "connect ECONNREFUSED" }), "Resolving input aaaaaaaaaaaa"),
      known: { criteria: { accelerator: "h100" } },
    })
    expect([cond(r, "Discovered"), cond(r, "Resolved")].map((c) => [c.status, c.reason, c.message])).toEqual([
      ["True", "NodeGroupsDiscovered", "system: 2 node(s); the snapshot confirms h100"],
      ["False", "Resolving", "Resolving input aaaaaaaaaaaa: retrying after a transient failure: [SERVICE_UNAVAILABLE] connect ECONNREFUSED"],
    ])
  })

  it("a snapshot taken in this pass is recorded in status.discovery", () => {
    const w = write(observed(), { ...resolving, known: { snapshot: { criteria: { accelerator: "h100", os: undefined }, digest: DIGEST, takenAt: T0 } } })
    expect(w["discovery"]).toEqual({
      system: { nodeCount: 2, nodes: ["a", "b"] },
      criteria: { accelerator: "h100" },
      snapshot: { digest: DIGEST, takenAt: "2026-12-02T10:00:00Z" },
    })
  })

  it("an internal error: both Unknown/InternalError, the rooms kept as they were", () => {
    const status = { discovery: { system: { nodeCount: 1 } }, resolution: { releases: 13 } }
    for (const w of [
      reportInternalError(runtime(status), T0) as unknown as Write,
      write(observed(runtime(status)), { ...defectOutcome(new Error("bug")), known: {} }),
    ]) {
      expect(w.conditions.map((c) => [c.status, c.reason, c.message])).toEqual([
        ["Unknown", "InternalError", "Please check controller logs for errors"],
        ["Unknown", "InternalError", "Please check controller logs for errors"],
      ])
      expect(w).toMatchObject(status)
    }
  })
})

describe("errorsToOutcome", () => {
  it.each([
    ["a failed snapshot Job: its reason on both conditions, terminal", "Snapshot", false, "terminal", "AICRInternal", "AICRInternal"],
    ["a transient snapshot failure: the same reasons, retried", "Snapshot", true, "transient", "AICRInternal", "AICRInternal"],
    ["a transient recipe failure: Resolving, retried", "Recipe", true, "transient", undefined, "Resolving"],
    ["a refused bundle Job is the registry's refusal", "Bundle", false, "terminal", undefined, "Unauthorized"],
    ["a refused recipe Job keeps AICR's reason", "Recipe", false, "terminal", undefined, "AICRUnauthorized"],
  ] as const)("%s", (_n, job, transient, klass, discovered, resolved) => {
    const reason = resolved === "Resolving" || job === "Snapshot" ? "AICRInternal" : "AICRUnauthorized"
    const o = toOutcome(new AicrJobFailedError({ job, reason, transient, message: `${job} Job x failed` }), "Resolving input abc")
    expect(o.class).toBe(klass)
    expect(o.discovered?.reason).toBe(discovered)
    expect(o.resolved.reason).toBe(resolved)
    expect(o.retry).toBe(transient ? `${job} Job x failed` : undefined)
  })
})
