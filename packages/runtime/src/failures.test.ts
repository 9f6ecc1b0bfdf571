// How a failed pass ends, the part every controller shares: the classing of a cause by an app's table, the defect path
// of `failedPass` (report, one Warning per transition, InternalError), and `endFailed` for controllers whose failures
// are conditions. The Warning Events go to a recorder that keeps them.
import type { KubeObject } from "@aicr/api"
import { EventRecorder, type EventSpec, isTransient, type KubeError, kubeErrorFromStatus } from "@aicr/kube"
import { Cause, Data, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  classify,
  endFailed,
  type ErrorTable,
  failedOutcome,
  failedPass,
  InternalError,
  outcomeOf,
  type PassFailureClass,
  RetryAfterTransientFailure,
} from "./failures"
import { Requeue } from "./requeue"

class RegistryDownError extends Data.TaggedError("RegistryDownError")<{ readonly message: string }> {}
class TagMovedError extends Data.TaggedError("TagMovedError")<{ readonly tag: string; readonly message: string }> {}
type AppError = RegistryDownError | TagMovedError

/** A table by `isTransient` (an app spells each reason out, as a `KubeErrorClasses`). */
const classOf = (e: KubeError): PassFailureClass => (isTransient(e) ? "transient" : "defect")
const unavailable = kubeErrorFromStatus("GET", "/api/v1/nodes", 503, { reason: "ServiceUnavailable", message: "etcd is down" })
const forbidden = kubeErrorFromStatus("PATCH", "/apis/x/v1/things/a/status", 403, { reason: "Forbidden", message: "no RBAC" })

const obj: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cluster", uid: "u1", resourceVersion: "1" } }

/** Runs `effect` with a recorder that keeps every event it is given. */
const run = <A, E>(effect: Effect.Effect<A, E, EventRecorder>) => {
  const events: EventSpec[] = []
  const recorder = Layer.succeed(EventRecorder)({ event: (_o, spec) => Effect.sync(() => void events.push(spec)) })
  return Effect.runPromise(Effect.exit(effect.pipe(Effect.provide(recorder)))).then((exit) => ({ exit, events }))
}

describe("classify", () => {
  it("is transient only for a failure the table says is transient", () => {
    expect(classify(Cause.fail(unavailable), classOf)).toEqual({ class: "transient", error: unavailable })
    const defect = classify(Cause.fail(forbidden), classOf)
    expect(defect.class).toBe("defect")
    expect(defect.class === "defect" && defect.message).toBe(forbidden.message)
  })

  it("is a defect for a thrown exception, and for a transient failure that also died", () => {
    const died = classify(Cause.die(new TypeError("x is undefined")) as Cause.Cause<typeof unavailable>, classOf)
    expect(died.class === "defect" && died.message).toBe("x is undefined")
    const both = classify(Cause.combine(Cause.fail(unavailable), Cause.die(new Error("boom"))), classOf)
    expect(both.class).toBe("defect")
  })
})

describe("outcomeOf", () => {
  it("takes the row of the error's tag, with the error's own type", () => {
    const rows: ErrorTable<AppError, string> = {
      RegistryDownError: (e) => `retry: ${e.message}`,
      TagMovedError: (e) => `moved: ${e.tag}`,
    }
    expect(outcomeOf(rows, new TagMovedError({ tag: "r:1", message: "m" }) as AppError)).toBe("moved: r:1")
    expect(outcomeOf(rows, new RegistryDownError({ message: "503" }) as AppError)).toBe("retry: 503")
  })
})

describe("failedPass", () => {
  const options = (applied: boolean, reports: Array<string>, failReport = false) => ({
    classOf,
    log: "Pass failed unexpectedly",
    report: Effect.suspend(() => {
      reports.push("InternalError")
      return failReport ? Effect.fail(forbidden) : Effect.succeed(applied)
    }),
    warning: { object: obj, action: "Reconcile", note: "The controller failed unexpectedly" },
  })

  it("hands a transient failure back to the driver as it is, reporting nothing", async () => {
    const reports: string[] = []
    const { exit, events } = await run(failedPass(Cause.fail(unavailable), options(true, reports)))
    expect(exit).toEqual(Exit.fail(unavailable))
    expect({ reports, events }).toEqual({ reports: [], events: [] })
  })

  it("reports a defect, warns once on the transition, and fails with InternalError", async () => {
    const reports: string[] = []
    const first = await run(failedPass(Cause.fail(forbidden), options(true, reports)))
    expect(first.exit).toEqual(Exit.fail(new InternalError({ message: forbidden.message })))
    expect(first.events).toEqual([
      { type: "Warning", reason: "InternalError", action: "Reconcile", note: `The controller failed unexpectedly: ${forbidden.message}` },
    ])
    // The same defect again: the report changes nothing (applied false), so no second Warning.
    const again = await run(failedPass(Cause.die(new Error("boom")), options(false, reports)))
    expect(again.exit).toEqual(Exit.fail(new InternalError({ message: "boom" })))
    expect(again.events).toEqual([])
    expect(reports).toEqual(["InternalError", "InternalError"])
  })

  it("still fails with InternalError when the report itself fails", async () => {
    const reports: string[] = []
    const { exit, events } = await run(failedPass(Cause.die(new Error("boom")), options(true, reports, true)))
    expect(exit).toEqual(Exit.fail(new InternalError({ message: "boom" })))
    expect({ reports, events }).toEqual({ reports: ["InternalError"], events: [] })
  })

  it("leaves an interruption one", async () => {
    const { exit } = await run(failedPass(Cause.interrupt(1) as Cause.Cause<typeof unavailable>, options(true, [])))
    expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
  })
})

describe("endFailed", () => {
  const condition = (reason: string, message: string) => ({ status: "False", reason, message })
  const rows = (klass: PassFailureClass | "terminal", e: AppError) =>
    failedOutcome(klass, condition(e._tag.replace(/Error$/u, ""), `${e._tag}: ${e.message}`), e, Requeue.after("10 minutes"))

  it("terminal: warns on the transition only and waits for the outcome's requeue", async () => {
    const outcome = rows("terminal", new TagMovedError({ tag: "r:1", message: "the tag moved" }))
    const changed = await run(endFailed(outcome, { object: obj, applied: true, action: "Mirror", what: "Mirroring" }))
    expect(changed.exit).toEqual(Exit.succeed(Requeue.after("10 minutes")))
    expect(changed.events).toEqual([{ type: "Warning", reason: "TagMoved", action: "Mirror", note: "TagMovedError: the tag moved" }])
    const same = await run(endFailed(outcome, { object: obj, applied: false, action: "Mirror", what: "Mirroring" }))
    expect(same).toEqual({ exit: Exit.succeed(Requeue.after("10 minutes")), events: [] })
  })

  it("transient: fails with RetryAfterTransientFailure carrying the error's own message; `warns` can keep it quiet", async () => {
    const outcome = rows("transient", new RegistryDownError({ message: "HTTP 503" }))
    const loud = await run(endFailed(outcome, { object: obj, applied: true, action: "Mirror", what: "Mirroring" }))
    expect(loud.exit).toEqual(Exit.fail(new RetryAfterTransientFailure({ reason: "RegistryDown", message: "HTTP 503" })))
    expect(loud.events.map((e) => e.reason)).toEqual(["RegistryDown"])
    const quiet = await run(endFailed(outcome, { object: obj, applied: true, action: "Mirror", what: "Mirroring", warns: (o) => o.class === "terminal" }))
    expect(quiet.events).toEqual([])
  })

  it("defect: no Warning Event (the detail goes to the log), the driver backs off", async () => {
    const outcome = failedOutcome(
      "defect",
      { status: "Unknown", reason: "InternalError", message: "Please check controller logs for errors" },
      new Error("bug"),
    )
    const { exit, events } = await run(endFailed(outcome, { object: obj, applied: true, action: "Mirror", what: "Mirroring" }))
    expect(exit).toEqual(Exit.fail(new RetryAfterTransientFailure({ reason: "InternalError", message: "bug" })))
    expect(events).toEqual([])
  })

  it("without an object (nothing to report on) emits nothing", async () => {
    const outcome = rows("terminal", new TagMovedError({ tag: "r:1", message: "moved" }))
    const { events } = await run(endFailed(outcome, { object: undefined, applied: true, action: "Mirror", what: "Mirroring" }))
    expect(events).toEqual([])
  })
})
