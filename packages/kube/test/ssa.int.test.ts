// Server-side-apply ownership of listType=map conditions against the real kube-apiserver (design/style.md §B.7),
// with the very scenario table FakeKube runs in its unit tests.
import { Effect } from "effect"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { runSsaScenario, ssaScenarios, WidgetKind, makeFakeKube } from "@aicr/testing"
import { installWidgetCrd, liveKube, unique } from "./support"

const info = inject("harness")

describe.each(["node", "client-node"] as const)("server-side apply on the real API server (%s backend)", (backend) => {
  beforeAll(() => installWidgetCrd(info))

  it.each(ssaScenarios.map((s, i) => ({ ...s, i })))("$name", async (scenario) => {
    const { kube } = liveKube(info, { backend })
    const outcome = await Effect.runPromise(runSsaScenario(kube, scenario, unique(`ssa-${backend}-${scenario.i}`)))
    expect(outcome).toEqual(scenario.want)
  })

  it("names the conflicting field and manager exactly as FakeKube does", async () => {
    const { kube } = liveKube(info, { backend })
    const fake = makeFakeKube()
    const name = unique("ssa-cause")
    const cond = (status: string) => ({ type: "Alpha", status, reason: "R", message: "m", lastTransitionTime: "2026-12-02T10:00:00Z" })
    const run = (k: typeof kube) => Effect.gen(function* () {
      yield* k.create(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name } })
      yield* k.apply(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name }, status: { conditions: [cond("True")] } }, { fieldManager: "aicr-alpha", subresource: "status" })
      return yield* Effect.flip(k.apply(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name }, status: { conditions: [cond("False")] } }, { fieldManager: "aicr-beta", subresource: "status" }))
    })
    const real = await Effect.runPromise(run(kube))
    const faked = await Effect.runPromise(run(fake.kube))
    expect(real.reason._tag).toBe("FieldManagerConflict")
    expect(real.reason.code).toBe(409)
    expect(real.reason.causes.map((c) => [c.reason, c.field])).toEqual([["FieldManagerConflict", '.status.conditions[type="Alpha"].status']])
    expect(faked.reason.causes.map((c) => [c.reason, c.field])).toEqual(real.reason.causes.map((c) => [c.reason, c.field]))
    expect(real.reason.causes[0]!.message).toContain('conflict with "aicr-alpha"')
    expect(faked.reason.causes[0]!.message).toContain('conflict with "aicr-alpha"')
  })
})
