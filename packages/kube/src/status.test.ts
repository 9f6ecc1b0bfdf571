import type { KubeObject, Room } from "@aicr/api"
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { RoomViolation, buildStatusApply, jsonEqual, makeApplyStatus, onlyMessagesChange, statusUnchanged } from "./status"
import type { WireCondition } from "./types"

const Widget = { group: "test.aicr.run", version: "v1", kind: "Widget", plural: "widgets", namespaced: false } as const
const room: Room = { controller: "alpha", fieldManager: "aicr-alpha", kind: Widget, conditions: ["Alpha", "AlphaReady"], statusKeys: ["alpha"] }
const cond = (type: string, status: WireCondition["status"] = "True", extra: Partial<WireCondition> = {}): WireCondition => ({
  type,
  status,
  reason: "Because",
  message: "Reason",
  lastTransitionTime: "2026-12-02T10:00:00Z",
  observedGeneration: 1,
  ...extra,
})
const widget = (status?: Record<string, unknown>): KubeObject & { status?: unknown } => ({
  apiVersion: "test.aicr.run/v1",
  kind: "Widget",
  metadata: { name: "w1", generation: 1, resourceVersion: "7" },
  ...(status ? { status } : {}),
})

describe("buildStatusApply", () => {
  it("builds an SSA body with exactly the room's conditions and status keys", () => {
    const body = buildStatusApply(room, widget(), { conditions: [cond("Alpha"), cond("AlphaReady", "False")], alpha: { digest: "sha256:1" } })
    expect(body).toEqual({
      apiVersion: "test.aicr.run/v1",
      kind: "Widget",
      metadata: { name: "w1" },
      status: { conditions: [cond("Alpha"), cond("AlphaReady", "False")], alpha: { digest: "sha256:1" } },
    })
  })

  it.each([
    { name: "refuses a condition type outside the room", status: { conditions: [cond("Alpha"), cond("AlphaReady"), cond("Beta")] }, detail: "condition Beta" },
    { name: "refuses a status key outside the room", status: { conditions: [cond("Alpha"), cond("AlphaReady")], beta: {} }, detail: "status.beta" },
    { name: "refuses a missing owned condition (omission would delete it)", status: { conditions: [cond("Alpha")] }, detail: "AlphaReady missing" },
    { name: "refuses a repeated condition type", status: { conditions: [cond("Alpha"), cond("Alpha"), cond("AlphaReady")] }, detail: "appears twice" },
    {
      name: "refuses a bare observedGeneration (no single owner)",
      status: { conditions: [cond("Alpha"), cond("AlphaReady")], observedGeneration: 3 },
      detail: "status.observedGeneration",
    },
  ])("$name", ({ status, detail }) => {
    expect(() => buildStatusApply(room, widget(), status)).toThrow(RoomViolation)
    expect(() => buildStatusApply(room, widget(), status)).toThrow(detail)
  })

  it("refuses an object of another kind", () => {
    expect(() => buildStatusApply(room, { ...widget(), kind: "Gadget" }, { conditions: [cond("Alpha"), cond("AlphaReady")] })).toThrow(RoomViolation)
  })
})

describe("onlyMessagesChange", () => {
  const live = widget({
    conditions: [cond("Alpha"), cond("AlphaReady")],
    alpha: { state: "Waiting", items: [{ state: "Waiting", message: "sync OutOfSync" }] },
  })
  const write = (alpha: Record<string, unknown>, ready: Partial<WireCondition> = {}) => ({
    conditions: [cond("Alpha"), cond("AlphaReady", "True", ready)],
    alpha,
  })
  it.each([
    {
      name: "is true when only a condition's message differs",
      status: write({ state: "Waiting", items: [{ state: "Waiting", message: "sync OutOfSync" }] }, { message: "health Progressing" }),
      want: true,
    },
    {
      name: "is true when only a message inside the room's key differs",
      status: write({ state: "Waiting", items: [{ state: "Waiting", message: "health Progressing" }] }),
      want: true,
    },
    {
      name: "is false when nothing differs (no write at all)",
      status: write({ state: "Waiting", items: [{ state: "Waiting", message: "sync OutOfSync" }] }),
      want: false,
    },
    {
      name: "is false when a state in the room's key differs too",
      status: write({ state: "Ready", items: [{ state: "Waiting", message: "health Progressing" }] }),
      want: false,
    },
    {
      name: "is false when a condition's reason differs too",
      status: write({ state: "Waiting", items: [{ state: "Waiting", message: "sync OutOfSync" }] }, { reason: "Other", message: "x" }),
      want: false,
    },
    {
      name: "is false when a message appears where there was none and a field goes",
      status: write({ state: "Waiting", items: [{ message: "x" }] }),
      want: false,
    },
  ])("$name", ({ status, want }) => {
    expect(onlyMessagesChange(room, live, status)).toBe(want)
  })

  it("also leaves out the informational fields it is given, by their path under status", () => {
    const counted = widget({ conditions: [cond("Alpha"), cond("AlphaReady")], alpha: { state: "Waiting", count: 1 } })
    expect(onlyMessagesChange(room, counted, write({ state: "Waiting", count: 2 }), ["alpha.count"])).toBe(true)
    expect(onlyMessagesChange(room, counted, write({ state: "Waiting", count: 2 }))).toBe(false)
    expect(onlyMessagesChange(room, counted, write({ state: "Ready", count: 2 }), ["alpha.count"])).toBe(false)
  })

  it("is false on a first visit (the conditions themselves are new)", () => {
    expect(onlyMessagesChange(room, widget(), write({ state: "Waiting" }))).toBe(false)
  })
})

describe("statusUnchanged", () => {
  const write = { conditions: [cond("Alpha"), cond("AlphaReady")], alpha: { digest: "d", steps: [1, 2] } }
  const body = buildStatusApply(room, widget(), write)
  it.each([
    {
      name: "is true when the live object carries exactly the values (other rooms ignored, key order ignored)",
      live: { conditions: [cond("Beta"), cond("AlphaReady"), cond("Alpha")], alpha: { steps: [1, 2], digest: "d" }, beta: { x: 1 } },
      want: true,
    },
    { name: "is false on a first visit", live: undefined, want: false },
    {
      name: "is false when a condition's reason differs",
      live: { conditions: [cond("Alpha", "True", { reason: "Other" }), cond("AlphaReady")], alpha: { digest: "d", steps: [1, 2] } },
      want: false,
    },
    {
      name: "is false when observedGeneration differs",
      live: { conditions: [cond("Alpha", "True", { observedGeneration: 2 }), cond("AlphaReady")], alpha: { digest: "d", steps: [1, 2] } },
      want: false,
    },
    {
      name: "is false when the room key carries an extra field (the apply would delete it)",
      live: { conditions: [cond("Alpha"), cond("AlphaReady")], alpha: { digest: "d", steps: [1, 2], old: true } },
      want: false,
    },
    {
      name: "is false when array order differs",
      live: { conditions: [cond("Alpha"), cond("AlphaReady")], alpha: { digest: "d", steps: [2, 1] } },
      want: false,
    },
  ])("$name", ({ live, want }) => {
    expect(statusUnchanged(room, widget(live), body)).toBe(want)
  })

  it("is false when a room key we now omit is still on the live object", () => {
    const b = buildStatusApply(room, widget(), { conditions: [cond("Alpha"), cond("AlphaReady")] })
    expect(statusUnchanged(room, widget({ conditions: [cond("Alpha"), cond("AlphaReady")], alpha: { digest: "d" } }), b)).toBe(false)
  })
})

describe("makeApplyStatus", () => {
  const calls: Array<unknown> = []
  const applyStatus = makeApplyStatus(<T extends KubeObject>(_kind: unknown, obj: unknown, options: unknown) => {
    calls.push({ obj, options })
    return Effect.succeed(obj as T)
  })

  it("applies with the room's field manager, force off, on the status subresource", () => {
    calls.length = 0
    const r = Effect.runSync(applyStatus(room, widget(), { conditions: [cond("Alpha"), cond("AlphaReady")] }))
    expect(r.applied).toBe(true)
    expect(calls).toEqual([
      { obj: expect.objectContaining({ status: expect.anything() }), options: { fieldManager: "aicr-alpha", force: false, subresource: "status" } },
    ])
  })

  it("makes no call when nothing changed", () => {
    calls.length = 0
    const live = widget({ conditions: [cond("Alpha"), cond("AlphaReady")] })
    const r = Effect.runSync(applyStatus(room, live, { conditions: [cond("Alpha"), cond("AlphaReady")] }))
    expect(r).toEqual({ applied: false, object: live })
    expect(calls).toEqual([])
  })

  it("dies with RoomViolation (a defect, not a typed error) outside the room", () => {
    calls.length = 0
    const exit = Effect.runSyncExit(applyStatus(room, widget(), { conditions: [cond("Alpha"), cond("AlphaReady")], beta: 1 }))
    expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
    expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toBeInstanceOf(RoomViolation)
    expect(calls).toEqual([])
  })
})

describe("jsonEqual", () => {
  it.each([
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [{ a: 1, b: undefined }, { a: 1 }, true],
    [[1, 2], [1, 2, 3], false],
    [{ a: "1" }, { a: 1 }, false],
    [null, {}, false],
  ])("%j vs %j → %s", (a, b, want) => expect(jsonEqual(a, b)).toBe(want))
})
