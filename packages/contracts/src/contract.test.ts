import { Approved, ClusterRuntimeKind, Core, EngineAvailable, Progressing, RuntimeRolloutKind } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { Contract, roomOn, roomsOf, toRoom, Watch, type Contract as C } from "./contract"
import { stepExecutor } from "./step-executor"

const base: C = {
  controller: "approval-guard",
  fieldManager: "aicr-approval-guard",
  reconciles: RuntimeRolloutKind,
  watches: [Watch.self(RuntimeRolloutKind)],
  reads: { conditions: [], kinds: [Core.ConfigMap] },
  writes: [{ kind: RuntimeRolloutKind, conditions: [Approved], statusKeys: ["approval"] }],
  creates: [],
}

describe("Contract.make", () => {
  it("accepts a well-formed contract as it is", () => {
    expect(Contract.make(base)).toBe(base)
  })

  it.each([
    {
      name: "refuses a field manager other than aicr-<controller>",
      change: { fieldManager: "approval-guard" },
      want: /field manager must be aicr-approval-guard/,
    },
    {
      name: "refuses a contract that does not watch its root kind",
      change: { watches: [Watch.self(ClusterRuntimeKind)] },
      want: /must watch its root kind RuntimeRollout/,
    },
    {
      name: "refuses two write entries for one kind",
      change: { writes: [...base.writes, { kind: RuntimeRolloutKind, conditions: [], statusKeys: ["x"] }] },
      want: /one write entry per kind/,
    },
    {
      name: "refuses a condition listed twice",
      change: { writes: [{ kind: RuntimeRolloutKind, conditions: [Approved, Approved], statusKeys: [] }] },
      want: /listed twice/,
    },
    {
      name: "refuses conditions as a status key",
      change: { writes: [{ kind: RuntimeRolloutKind, conditions: [], statusKeys: ["conditions"] }] },
      want: /not as a status key/,
    },
  ])("$name", ({ change, want }) => {
    expect(() => Contract.make({ ...base, ...change })).toThrow(want)
  })
})

describe("rooms", () => {
  it("turns a write entry into the Room packages/kube enforces", () => {
    expect(toRoom(base, base.writes[0]!)).toEqual({
      controller: "approval-guard",
      fieldManager: "aicr-approval-guard",
      kind: RuntimeRolloutKind,
      conditions: ["Approved"],
      statusKeys: ["approval"],
    })
  })

  it("gives the step-executor one room on each of the two objects it writes", () => {
    expect(roomsOf(stepExecutor).map((r) => [r.kind.kind, r.conditions, r.statusKeys])).toEqual([
      ["RuntimeRollout", [Progressing.type], ["steps"]],
      ["ClusterRuntime", [EngineAvailable.type], ["engine"]],
    ])
    expect(roomOn(stepExecutor, ClusterRuntimeKind).statusKeys).toEqual(["engine"])
  })

  it("refuses to name a room on a kind the contract does not write", () => {
    expect(() => roomOn(base, ClusterRuntimeKind)).toThrow(/writes no status on ClusterRuntime/)
  })
})
