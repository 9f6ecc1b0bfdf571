// Server-side-apply ownership of listType=map conditions against the real kube-apiserver (design/style.md §B.7),
// with the very scenario table FakeKube runs in its unit tests.
import type { KubeObject } from "@aicr/api"
import { Effect, Exit, Option } from "effect"
import { writeAsDecided } from "../src/guarded"
import type { KubeShape } from "../src/kube"
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
    const run = (k: typeof kube) =>
      Effect.gen(function* () {
        yield* k.create(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name } })
        yield* k.apply(
          WidgetKind,
          { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name }, status: { conditions: [cond("True")] } },
          { fieldManager: "aicr-alpha", subresource: "status" },
        )
        return yield* Effect.flip(
          k.apply(
            WidgetKind,
            { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name }, status: { conditions: [cond("False")] } },
            { fieldManager: "aicr-beta", subresource: "status" },
          ),
        )
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

  it("writeAsDecided: a write decided on a view that has moved is refused, the same on FakeKube", async () => {
    const { kube } = liveKube(info, { backend })
    const fake = makeFakeKube()
    const name = unique("ssa-decided")
    type Widget = { apiVersion: string; kind: string; metadata: { name: string; resourceVersion?: string }; spec: { size: number; color: string } }
    const widget = (size: number, color = "red"): Widget => ({ apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name }, spec: { size, color } })
    const run = (k: KubeShape) =>
      Effect.gen(function* () {
        const outcome = <A>(e: Effect.Effect<A, { reason: { _tag: string } }>) =>
          Effect.exit(e).pipe(
            Effect.map((x) =>
              Exit.isSuccess(x)
                ? "ok"
                : Exit.isFailure(x)
                  ? (String(x.cause).match(/(AlreadyExists|FieldManagerConflict|Conflict)/u)?.[1] ?? "other")
                  : "other",
            ),
          )
        const write = (size: number, seen: { resourceVersion: string } | undefined, color?: string) =>
          writeAsDecided(k, WidgetKind, widget(size, color), seen, { fieldManager: "aicr-decider" })
        const created = yield* write(1, undefined)
        const out: string[] = []
        // Decided on "absent" again (a cache that had not seen the create): refused.
        out.push(yield* outcome(write(1, undefined)))
        // Decided on the created object: its fields are the manager's Update entry; the apply goes (with force on that entry only).
        const at1 = { resourceVersion: created.metadata.resourceVersion! }
        out.push(yield* outcome(write(2, at1)))
        const read = Effect.map(k.get<Widget & KubeObject>(WidgetKind, name), Option.getOrThrow)
        const live = yield* read
        out.push(`size ${live.spec.size}`)
        // Decided on the view before that write: refused, nothing changes.
        out.push(yield* outcome(write(3, at1)))
        // Another manager's field is never taken, even when the view is current.
        const other = yield* k.apply(WidgetKind, { ...widget(2, "blue"), metadata: { name } }, { fieldManager: "someone-else", force: true })
        out.push(yield* outcome(write(4, { resourceVersion: other.metadata.resourceVersion! }, "green")))
        const last = yield* read
        out.push(`size ${last.spec.size} color ${last.spec.color}`)
        return out
      })
    const real = await Effect.runPromise(run(kube))
    expect(real).toEqual(["AlreadyExists", "ok", "size 2", "Conflict", "FieldManagerConflict", "size 2 color blue"])
    expect(await Effect.runPromise(run(fake.kube))).toEqual(real)
  })
})
