// applyStatus through a room against the real kube-apiserver: the body holds only the room, a body outside the room
// dies before any request, and an unchanged status makes no request at all.
import type { KubeObject, Room } from "@aicr/api"
import { RoomViolation, type WireCondition } from "../src/index"
import { readAuditEvents } from "@aicr/testing/harness"
import { WidgetKind } from "@aicr/testing"
import { Cause, Effect, Exit, Option } from "effect"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { installWidgetCrd, liveKube, unique } from "./support"

const info = inject("harness")

const alpha: Room = { controller: "alpha", fieldManager: "aicr-alpha", kind: WidgetKind, conditions: ["Alpha", "AlphaReady"], statusKeys: ["alpha"] }
const beta: Room = { controller: "beta", fieldManager: "aicr-beta", kind: WidgetKind, conditions: ["Beta"], statusKeys: ["beta"] }
const cond = (type: string, status: WireCondition["status"], generation = 1): WireCondition => ({
  type,
  status,
  observedGeneration: generation,
  lastTransitionTime: "2026-12-02T10:00:00Z",
  reason: status === "True" ? "Done" : "Waiting",
  message: `${type} is ${status}`,
})
type Widget = KubeObject & { status?: { conditions?: ReadonlyArray<WireCondition>; alpha?: unknown; beta?: unknown } }

describe("applyStatus on the real API server", () => {
  beforeAll(() => installWidgetCrd(info))

  it("writes two rooms on one object with their own field managers", async () => {
    const { kube } = liveKube(info)
    const name = unique("rooms")
    const w = await Effect.runPromise(kube.create<Widget>(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name } }))
    const a = await Effect.runPromise(kube.applyStatus(alpha, w, { conditions: [cond("Alpha", "True"), cond("AlphaReady", "Unknown")], alpha: { n: 1 } }))
    const b = await Effect.runPromise(kube.applyStatus(beta, a.object, { conditions: [cond("Beta", "False")], beta: { n: 2 } }))
    expect(a.applied && b.applied).toBe(true)
    expect(b.object.status?.conditions?.map((c) => `${c.type}=${c.status}`).sort()).toEqual(["Alpha=True", "AlphaReady=Unknown", "Beta=False"])
    expect(b.object.status).toMatchObject({ alpha: { n: 1 }, beta: { n: 2 } })
    const managers = (
      (b.object.metadata as { managedFields?: ReadonlyArray<{ manager: string; subresource?: string; operation: string }> }).managedFields ?? []
    )
      .filter((m) => m.subresource === "status")
      .map((m) => `${m.manager}/${m.operation}`)
      .sort()
    expect(managers).toEqual(["aicr-alpha/Apply", "aicr-beta/Apply"])
  })

  it("makes no request when the object already carries exactly the values (resourceVersion unchanged, no audit event)", async () => {
    const { kube, requests } = liveKube(info)
    const name = unique("noop")
    const w = await Effect.runPromise(kube.create<Widget>(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name } }))
    const status = { conditions: [cond("Alpha", "True"), cond("AlphaReady", "False")], alpha: { n: 1, steps: ["a", "b"] } }
    const first = await Effect.runPromise(kube.applyStatus(alpha, w, status))
    expect(first.applied).toBe(true)
    const live = Option.getOrThrow(await Effect.runPromise(kube.get<Widget>(WidgetKind, name)))
    const before = requests.length
    const second = await Effect.runPromise(kube.applyStatus(alpha, live, status))
    expect(second).toEqual({ applied: false, object: live })
    expect(requests.length).toBe(before)
    const after = Option.getOrThrow(await Effect.runPromise(kube.get<Widget>(WidgetKind, name)))
    expect(after.metadata.resourceVersion).toBe(live.metadata.resourceVersion)
    expect(readAuditEvents(info, { verb: "patch", resource: "widgets", name })).toHaveLength(1)
  })

  it("dies with RoomViolation, before any request, on a body outside the room", async () => {
    const { kube, requests } = liveKube(info)
    const name = unique("violation")
    const w = await Effect.runPromise(kube.create<Widget>(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name } }))
    const before = requests.length
    for (const status of [
      { conditions: [cond("Alpha", "True"), cond("AlphaReady", "True"), cond("Beta", "True")] },
      { conditions: [cond("Alpha", "True"), cond("AlphaReady", "True")], beta: { n: 1 } },
      { conditions: [cond("Alpha", "True")] },
    ]) {
      const exit = await Effect.runPromiseExit(kube.applyStatus(alpha, w, status))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toBeInstanceOf(RoomViolation)
    }
    expect(requests.length).toBe(before)
  })

  it("surfaces another room's condition with a different value as FieldManagerConflict", async () => {
    const { kube } = liveKube(info)
    const name = unique("trespass")
    const w = await Effect.runPromise(kube.create<Widget>(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name } }))
    await Effect.runPromise(kube.applyStatus(beta, w, { conditions: [cond("Beta", "True")] }))
    const rogue: Room = { ...alpha, conditions: ["Alpha", "Beta"] }
    const err = await Effect.runPromise(Effect.flip(kube.applyStatus(rogue, w, { conditions: [cond("Alpha", "True"), cond("Beta", "False")] })))
    expect(err.reason._tag).toBe("FieldManagerConflict")
  })
})
