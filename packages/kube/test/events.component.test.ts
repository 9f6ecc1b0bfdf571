import type { KubeObject } from "@aicr/api"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeFakeKube } from "@aicr/testing"
import { makeEventRecorder } from "../src/index"

const rollout = { apiVersion: "operator.aicr.run/v1alpha1", kind: "RuntimeRollout", metadata: { name: "r1", uid: "u-1", resourceVersion: "5" } } as KubeObject

describe("event recorder", () => {
  it.effect("creates an events.k8s.io/v1 Event about the object, in `default` for a cluster-scoped object", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const rec = yield* makeEventRecorder({ controller: "operator.aicr.run/approval-guard", instance: "pod-1" }).pipe(Effect.provide(fake.layer))
      yield* rec.event(rollout, { type: "Warning", reason: "RolloutExpired", action: "Approve", note: "The approval expired" })
      expect(fake.writes).toHaveLength(1)
      expect(fake.writes[0]).toMatchObject({ verb: "create", kind: "Event", path: "/apis/events.k8s.io/v1/namespaces/default/events", result: "ok" })
      expect(fake.writes[0]!.body).toMatchObject({
        reportingController: "operator.aicr.run/approval-guard",
        reportingInstance: "pod-1",
        type: "Warning",
        reason: "RolloutExpired",
        action: "Approve",
        regarding: { kind: "RuntimeRollout", name: "r1", uid: "u-1" },
      })
    }),
  )

  it.effect("turns a repeat within the series window into a series update, and a later one into a new Event", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const rec = yield* makeEventRecorder({ controller: "c", instance: "i" }).pipe(Effect.provide(fake.layer))
      const e = { type: "Normal", reason: "ChartMirrored", action: "Mirror", note: "Mirrored 3 charts" } as const
      yield* rec.event(rollout, e)
      yield* TestClock.adjust("1 minute")
      yield* rec.event(rollout, e)
      yield* TestClock.adjust("10 minutes")
      yield* rec.event(rollout, e)
      expect(fake.writes.map((w) => w.verb)).toEqual(["create", "patch", "create"])
      expect(fake.writes[1]!.body).toMatchObject({ series: { count: 2 } })
    }),
  )

  it.effect("never fails the caller when the write fails", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const rec = yield* makeEventRecorder({ controller: "c", instance: "i" }).pipe(Effect.provide(fake.layer))
      fake.failNext("Forbidden")
      yield* rec.event(rollout, { type: "Normal", reason: "R", action: "A", note: "n" })
      expect(fake.writes[0]!.result).toBe("Forbidden")
    }),
  )
})
