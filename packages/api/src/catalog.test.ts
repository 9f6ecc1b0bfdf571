import type { AnyConditionDef } from "@aicr/conditions"
import { describe, expect, it } from "vitest"
import { conditionsOf, statusRoomsOf } from "./catalog"
import { namedIn, tierTestFiles } from "./named-in-tests"
import { ClusterRuntimeConditions, Mirrored, Ready, Resolved, Stalled } from "./clusterruntime-conditions"
import { ClusterRuntimeKind, RuntimeRolloutKind } from "./resource"
import { RuntimeRolloutConditions } from "./runtimerollout-conditions"

const reasons = (def: AnyConditionDef, status: "True" | "False" | "Unknown") => Object.keys(def.reasons[status] ?? {})
const ALL: ReadonlyArray<AnyConditionDef> = [...ClusterRuntimeConditions, ...RuntimeRolloutConditions]

/** operator.md §3.2: the [D]/[C] reason vocabulary, by runbook. */
const DOCUMENTED = {
  discovery: ["NodeGroupEmpty", "PlacementOverlap", "AcceleratedGroupHeterogeneous", "SnapshotIncomplete", "CriteriaConflict"],
  render: ["OverridePathUnknown", "InvalidOverride", "InvalidPlacement", "NamespaceNotAllowed", "ChartSourceUnsupported", "ContentTooLarge", "Conflict"],
  aicrJob: ["AICRInvalidRequest", "AICRNotFound", "AICRUnauthorized", "AICRInternal", "AICRTimeout"],
  credentials: ["RegistryCredentialsUnavailable", "Unauthorized", "RegistryCredentialsStale"],
  version: ["AICRVersionMismatch", "AICRArtifactUnsupported"],
  engine: ["EngineMissing", "ProjectMissing", "Unauthorized"],
  approval: ["AwaitingApproval", "AwaitingAcknowledgement"],
  blocked: ["TransitionBlocked"],
  stalled: ["InventoryDrift", "StepUnknown", "MovedReleaseMissing", "EngineSuspensionRefused"],
  ended: ["RolloutFailed", "RolloutExpired", "RolloutRevoked", "ForeignObject"],
  adoption: ["OrphanedObjectsPresent", "AdoptionBlocked"],
  validation: ["ValidationUnavailable"],
  plans: ["PlanUnreadable"],
}

describe("ClusterRuntime condition catalog", () => {
  it("gives Ready exactly the documented reasons", () => {
    expect([reasons(Ready, "True"), reasons(Ready, "False")]).toEqual([
      ["RolledOut", "ValidationDisabled"],
      [
        "RollingOut",
        "NotReady",
        "NoActivePlan",
        "Paused",
        "EngineSuspended",
        "EngineSuspensionRefused",
        "EngineMissing",
        "ProjectMissing",
        "Unauthorized",
        "PlanUnreadable",
        "Deleting",
      ],
    ])
  })

  it("gives Resolved Resolving plus every discovery, render, AICR, version and credential reason", () => {
    const want = ["Resolving", ...DOCUMENTED.discovery, ...DOCUMENTED.render, ...DOCUMENTED.aicrJob, ...DOCUMENTED.version, ...DOCUMENTED.credentials]
    expect(new Set(reasons(Resolved, "False"))).toEqual(new Set(want))
  })

  it.each(Object.entries(DOCUMENTED))("lets Stalled carry every documented %s reason", (_, list) => {
    for (const r of list) expect(Stalled.allows("True", r), r).toBe(true)
  })

  it("lets Stalled carry every False reason of the conditions it summarises, except in-progress ones and Planned's Paused (a person's choice)", () => {
    const inProgress = new Set(["Resolving", "Mirroring", "Discovering", "AwaitingResolution", "Stabilizing", "Assessing", "Deleting", "Paused"])
    for (const def of ClusterRuntimeConditions.filter((d) => d !== Ready && d !== Stalled)) {
      for (const r of reasons(def, "False").filter((x) => !inProgress.has(x))) expect(Stalled.allows("True", r), `${def.type}/${r}`).toBe(true)
    }
  })

  it("reports registry outages on Mirrored with the documented credential reasons", () => {
    for (const r of DOCUMENTED.credentials) expect(Mirrored.allows("False", r)).toBe(true)
  })
})

/**
 * Documented reasons that no component, int or e2e test names with a condition carrying them yet. The list only
 * shrinks: the test below fails when a reason here becomes named (remove it) or one not here is named by no test.
 */
const NOT_REACHED_YET: ReadonlyArray<string> = []

describe("documented reasons in the tests", () => {
  const tests = tierTestFiles()
  const unnamed = [...new Set(Object.values(DOCUMENTED).flat())]
    .filter((r) => !ALL.some((d) => (["True", "False", "Unknown"] as const).some((st) => d.allows(st, r) && namedIn(tests, d.type, r).length > 0)))
    .sort()

  it("every documented reason is named, with a condition that carries it, by a component, int or e2e test, except the listed ones", () => {
    expect(tests.length).toBeGreaterThan(20)
    expect(unnamed).toEqual([...NOT_REACHED_YET].sort())
  })
})

describe("every condition definition", () => {
  it.each(ALL.map((d) => [d.type, d] as const))("%s has the standard Unknown reasons NotYetObserved and InternalError", (_, def) => {
    expect(reasons(def, "Unknown")).toEqual(expect.arrayContaining(["NotYetObserved", "InternalError"]))
  })

  it.each([
    ["Ready", "planner"],
    ["Stalled", "planner"],
    ["Planned", "planner"],
    ["Discovered", "resolver"],
    ["Resolved", "resolver"],
    ["Mirrored", "registry-mirror"],
    ["EngineAvailable", "step-executor"],
    ["RegistryCredentialsReady", "ecr-credential-refresher"],
    ["Approved", "approval-guard"],
    ["Progressing", "step-executor"],
    ["ValidationReady", "validation-gate"],
    ["Validated", "validation-gate"],
    ["Succeeded", "planner"],
  ])("%s is owned by %s, as architecture.md's rooms table says", (type, owner) => {
    expect(ALL.find((d) => d.type === type)?.owner).toBe(owner)
  })

  it("has condition types unique across both kinds", () => {
    expect(new Set(ALL.map((d) => d.type)).size).toBe(ALL.length)
  })
})

describe("kind lookups", () => {
  it.each([
    {
      name: "ClusterRuntime has one room per controller room in architecture.md",
      kind: ClusterRuntimeKind,
      want: ["discovery", "resolution", "mirror", "plans", "engine", "credentials"],
    },
    {
      name: "RuntimeRollout has the planner's, approval-guard's, step-executor's and validation-gate's rooms",
      kind: RuntimeRolloutKind,
      want: ["assessment", "approval", "steps", "validation"],
    },
  ])("$name", ({ kind, want }) => {
    expect(statusRoomsOf(kind)).toEqual(want)
  })

  it("returns the condition catalog of each kind", () => {
    expect([conditionsOf(ClusterRuntimeKind).length, conditionsOf(RuntimeRolloutKind).length]).toEqual([8, 5])
  })
})
