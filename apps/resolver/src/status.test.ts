import { type ClusterRuntime, Discovered, Resolved } from "@aicr/api"
import { Requeue } from "@aicr/runtime"
import { describe, expect, it } from "vitest"
import type { Pass } from "./resolve"
import { report, reportInternalError } from "./status"

const T0 = Date.parse("2026-12-02T10:00:00Z")
const runtime = (status?: ClusterRuntime["status"]): ClusterRuntime =>
  ({
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster", generation: 3 },
    spec: {},
    ...(status ? { status } : {}),
  }) as ClusterRuntime
const pass = (p: Partial<Pass>): Pass => ({
  discovered: Discovered.true("NodeGroupsDiscovered", "system: 2 node(s)"),
  resolved: Resolved.false("Resolving", "Resolving input abc: recipe Job x started"),
  discovery: { system: { nodeCount: 2, nodes: ["a", "b"] } },
  resolution: undefined,
  requeue: Requeue.onChange,
  ...p,
})

describe("report", () => {
  it.each([
    ["first visit, nothing resolved yet: both conditions, discovery only", pass({}), ["Discovered", "Resolved"], ["conditions", "discovery"]],
    [
      "resolved: both rooms",
      pass({ resolved: Resolved.true("InputsResolved", "Resolved input abc"), resolution: { inputDigest: `sha256:${"a".repeat(64)}`, releases: 13 } }),
      ["Discovered", "Resolved"],
      ["conditions", "discovery", "resolution"],
    ],
  ])("%s", (_n, p, types, keys) => {
    const w = report(runtime(), p, T0) as unknown as Record<string, unknown> & {
      conditions: Array<{ type: string; observedGeneration: number; lastTransitionTime: string }>
    }
    expect(w.conditions.map((c) => c.type).sort()).toEqual(types)
    expect(w.conditions.every((c) => c.observedGeneration === 3 && c.lastTransitionTime === "2026-12-02T10:00:00Z")).toBe(true)
    expect(Object.keys(w).sort()).toEqual(keys)
  })

  it("an unchanged status keeps its transition times; a changed one moves them", () => {
    type Conds = NonNullable<NonNullable<ClusterRuntime["status"]>["conditions"]>
    const conds = (w: unknown) => (w as { conditions: Conds }).conditions
    const first = conds(report(runtime(), pass({}), T0))
    expect(conds(report(runtime({ conditions: first }), pass({}), T0 + 60_000))).toEqual(first)
    const flipped = conds(report(runtime({ conditions: first }), pass({ resolved: Resolved.true("InputsResolved", "ok") }), T0 + 60_000))
    expect(flipped.find((c) => c.type === "Resolved")!.lastTransitionTime).toBe("2026-12-02T10:01:00Z")
    expect(flipped.find((c) => c.type === "Discovered")!.lastTransitionTime).toBe("2026-12-02T10:00:00Z")
  })

  it("an internal error: both Unknown/InternalError, the rooms kept as they were", () => {
    const w = reportInternalError(runtime({ discovery: { system: { nodeCount: 1 } }, resolution: { releases: 13 } }), T0) as unknown as Record<
      string,
      unknown
    > & { conditions: Array<{ status: string; reason: string; message: string }> }
    expect(w.conditions.map((c) => [c.status, c.reason, c.message])).toEqual([
      ["Unknown", "InternalError", "Please check controller logs for errors"],
      ["Unknown", "InternalError", "Please check controller logs for errors"],
    ])
    expect(w).toMatchObject({ discovery: { system: { nodeCount: 1 } }, resolution: { releases: 13 } })
  })
})
