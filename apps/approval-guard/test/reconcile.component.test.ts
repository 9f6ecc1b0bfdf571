// reconcile() against FakeKube and an in-memory access check: the writes it makes, for the properties every
// component suite proves (design/style.md §B.7), plus expiry at the exact instant and acknowledgements.
import { type KubeObject, RuntimeRolloutKind, type RuntimeRollout } from "@aicr/api"
import { eventRecorderLayer, type Informer, KubeError } from "@aicr/kube"
import { Expectations, makeExpectations } from "@aicr/runtime"
import { makeFakeKube, settle } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { Access, type AccessShape, type Approvers } from "../src/access"
import { Caches, type GuardCaches, makeCaches } from "../src/caches"
import { GuardConfig } from "../src/config"
import { contract } from "../src/contract"
import { reconcile } from "../src/reconcile"
import { aRollout, anApproval, at, awaitingAck, type RolloutState, T0 } from "./support/fixtures"

const NAME = "cluster-3f2a9c1d0e4b-1"

const setup = (state: RolloutState = {}, o: { approvers?: Approvers; allowed?: boolean; fail?: KubeError; broken?: { on: boolean } } = {}) => {
  const fake = makeFakeKube({ listMapKeys: { "RuntimeRollout.operator.aicr.run": { "status.conditions": "type", "spec.acknowledgements": "step" } } })
  fake.seed(RuntimeRolloutKind, aRollout(state))
  let asked = 0
  const access: AccessShape = {
    approvers: () => (o.fail ? Effect.fail(o.fail) : Effect.succeed(o.approvers ?? { users: ["bob"], groups: ["aicr-approvers"], serviceAccounts: [] })),
    mayApprove: () => (o.broken?.on === true ? Effect.die(new Error("access check exploded")) : Effect.sync(() => (asked++, o.allowed ?? true))),
  }
  const events = eventRecorderLayer({ controller: "operator.aicr.run/approval-guard", instance: "test" }).pipe(Layer.provide(fake.layer))
  // The guard's caches on FakeKube, made by the first pass; each pass starts once they show what the test wrote.
  let caches: GuardCaches | undefined
  const expectations = makeExpectations()
  const ready = Effect.gen(function* () {
    caches ??= (yield* makeCaches("aicr-operator-approver").pipe(Effect.provide(fake.layer))).caches
    yield* settle(fake, [caches.rollouts, caches.bindings] as ReadonlyArray<Informer<KubeObject>>)
    return caches
  })
  const run = ready.pipe(
    Effect.flatMap((c) =>
      reconcile(NAME).pipe(
        Effect.provide(Layer.mergeAll(fake.layer, events)),
        Effect.provideService(Access, access),
        Effect.provideService(GuardConfig, { approverRole: "aicr-operator-approver", operatorNamespaces: ["aicr-system", "aicr-validation"] }),
        Effect.provideService(Caches, c),
        Effect.provideService(Expectations, expectations),
      ),
    ),
    Effect.exit,
  )
  const rollout = () => fake.peek<RuntimeRollout>(RuntimeRolloutKind, NAME)!
  const approved = () => rollout().status?.conditions?.find((c) => c.type === "Approved")
  const statusWrites = () => fake.writesTo(RuntimeRolloutKind, NAME).filter((w) => w.subresource === "status")
  const warnings = () => fake.writes.filter((w) => w.kind === "Event" && w.verb === "create").map((w) => (w.body as { reason: string }).reason)
  const patchSpec = (spec: Record<string, unknown>) => fake.kube.patch(RuntimeRolloutKind, NAME, { type: "merge", body: { spec } })
  return { fake, run, rollout, approved, statusWrites, warnings, patchSpec, asked: () => asked }
}

const at0 = <A, E, R>(body: Effect.Effect<A, E, R>) => TestClock.setTime(T0).pipe(Effect.andThen(body))
const after = (ms: number) => Exit.succeed({ _tag: "After", delay: Duration.millis(ms) })

describe("approval-guard reconcile", () => {
  it.effect("first visit: Approved=False/AwaitingApproval naming the approvers, requeued at the deadline exactly", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        expect(yield* t.run).toEqual(after(60 * 60_000))
        expect(t.approved()).toMatchObject({ status: "False", reason: "AwaitingApproval", observedGeneration: 1, lastTransitionTime: "2026-12-02T10:00:00Z" })
        expect(t.approved()!.message).toContain(
          "May approve: users bob; groups aicr-approvers (ClusterRole aicr-operator-approver). alice requested this change and may not approve it.",
        )
        expect(t.rollout().status!.approval).toEqual({})
      }),
    ),
  )

  it.effect("idempotence: a second pass with nothing changed writes nothing", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ spec: { approval: anApproval() } })
        yield* t.run
        t.fake.clearWrites()
        yield* TestClock.adjust("10 minutes")
        expect(yield* t.run).toEqual(after(21 * 60_000))
        expect(t.fake.writes).toHaveLength(0)
      }),
    ),
  )

  it.effect("room: the apply carries only Approved and status.approval, as aicr-approval-guard, without force", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({
          status: {
            conditions: [{ type: "Progressing", status: "False", reason: "AwaitingApproval", message: "", lastTransitionTime: at(0), observedGeneration: 1 }],
          },
        })
        yield* t.run
        const [w] = t.statusWrites()
        expect(w).toMatchObject({ verb: "apply", manager: contract.fieldManager, force: false, result: "ok" })
        const body = w!.body as { status: Record<string, unknown> }
        expect(Object.keys(body.status).sort()).toEqual(["approval", "conditions"])
        expect((body.status["conditions"] as Array<{ type: string }>).map((c) => c.type)).toEqual(["Approved"])
        expect(
          t
            .rollout()
            .status!.conditions!.map((c) => c.type)
            .sort(),
        ).toEqual(["Approved", "Progressing"])
        expect(t.fake.writes.filter((x) => x.kind === "RuntimeRollout").every((x) => x.subresource === "status")).toBe(true)
      }),
    ),
  )

  it.effect("an approval turns Approved True until it expires; at that instant it ends RolloutExpired with a Warning", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.patchSpec({ approval: anApproval() })
        expect(yield* t.run).toEqual(after(31 * 60_000))
        expect(t.approved()).toMatchObject({ status: "True", reason: "ApprovedByUser", observedGeneration: 2 })
        expect(t.rollout().status!.approval).toEqual({ approvedBy: "approver", validUntil: at(31) })
        expect(t.asked()).toBe(1)
        yield* TestClock.adjust(31 * 60_000 - 1)
        expect(yield* t.run).toEqual(after(1))
        expect(t.approved()!.status).toBe("True")
        yield* TestClock.adjust(1)
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.approved()).toMatchObject({ status: "False", reason: "RolloutExpired", lastTransitionTime: at(31) })
        expect(t.warnings()).toEqual(["RolloutExpired"])
      }),
    ),
  )

  it.effect("an unapproved rollout ends RolloutExpired at its deadline", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* TestClock.adjust("60 minutes")
        yield* t.run
        // False → False: the reason changes, the transition time stays (conditions convention).
        expect(t.approved()).toMatchObject({ status: "False", reason: "RolloutExpired", lastTransitionTime: at(0) })
      }),
    ),
  )

  it.effect("a revocation mid-rollout turns Approved False/RolloutRevoked", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ spec: { approval: anApproval() } })
        yield* t.run
        yield* t.patchSpec({ revocation: { revokedBy: "bob", reason: "incident", revokedAt: at(2) } })
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.approved()).toMatchObject({ status: "False", reason: "RolloutRevoked", message: expect.stringContaining("Revoked by bob: incident") })
      }),
    ),
  )

  it.effect("a step waiting for acknowledgement holds the rollout; its acknowledgement releases it", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ spec: { approval: anApproval() }, status: { steps: { total: 2, done: 1, items: [awaitingAck("gpu-operator")] } } })
        yield* t.run
        expect(t.approved()).toMatchObject({ status: "False", reason: "AwaitingAcknowledgement" })
        expect(t.rollout().status!.approval!.pendingAcknowledgements).toEqual(["gpu-operator"])
        yield* t.patchSpec({ acknowledgements: [{ step: "gpu-operator", acknowledgedBy: "bob", at: at(3) }] })
        yield* t.run
        expect(t.approved()).toMatchObject({ status: "True", reason: "ApprovedByUser" })
        expect(t.rollout().status!.approval).toEqual({ approvedBy: "approver", validUntil: at(31) })
      }),
    ),
  )

  it.effect("an approver the authorizer does not allow is refused, with a Warning", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ spec: { approval: anApproval() } }, { allowed: false })
        expect(yield* t.run).toEqual(after(60 * 60_000))
        expect(t.approved()).toMatchObject({ status: "False", reason: "ApprovalRefused", message: expect.stringContaining("does not hold the verb approve") })
        expect(t.warnings()).toEqual(["ApprovalRefused"])
      }),
    ),
  )

  it.effect("error mapping: a failed read of the approver bindings fails the pass (driver backoff) and writes nothing", () =>
    at0(
      Effect.gen(function* () {
        const fail = new KubeError({
          reason: { _tag: "Unavailable", code: 503, message: "down", causes: [] },
          verb: "GET",
          path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        })
        const t = setup({}, { fail })
        const exit = yield* t.run
        expect(Exit.isFailure(exit)).toBe(true)
        expect(t.statusWrites()).toHaveLength(0)
      }),
    ),
  )

  it.effect("a rollout that ended keeps its Approved, even past the approval's expiry", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ spec: { approval: anApproval() } })
        yield* t.run
        yield* t.fake.kube.patch(RuntimeRolloutKind, NAME, { type: "merge", body: { metadata: { labels: { "operator.aicr.run/outcome": "Succeeded" } } } })
        yield* TestClock.adjust("2 hours")
        t.fake.clearWrites()
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.approved()).toMatchObject({ status: "True", reason: "ApprovedByUser" })
        expect(t.fake.writes).toHaveLength(0)
      }),
    ),
  )

  it.effect("reads come from the caches: a pass makes no get or list", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ spec: { approval: anApproval() } })
        yield* t.run
        yield* TestClock.adjust("1 minute")
        const reads = () => t.fake.requests.get + t.fake.requests.list
        const before = reads()
        yield* t.run
        expect(reads()).toBe(before)
      }),
    ),
  )

  it.effect("a defect writes Approved Unknown/InternalError (status.approval kept) and one Warning per transition; the next good pass clears it", () =>
    at0(
      Effect.gen(function* () {
        const broken = { on: false }
        const t = setup({ spec: { approval: anApproval() } }, { broken })
        yield* t.run
        const room = t.rollout().status!.approval
        broken.on = true
        for (let i = 0; i < 2; i++) {
          const exit = yield* t.run
          expect(Exit.isFailure(exit) && String(exit.cause)).toContain("InternalError")
          expect(t.approved()).toMatchObject({ status: "Unknown", reason: "InternalError", message: "Please check controller logs for errors" })
          expect(t.rollout().status!.approval).toEqual(room)
        }
        expect(t.warnings()).toEqual(["InternalError"])
        broken.on = false
        yield* t.run
        expect(t.approved()).toMatchObject({ status: "True", reason: "ApprovedByUser" })
      }),
    ),
  )

  it.effect("a rollout that is gone needs nothing", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.fake.kube.delete(RuntimeRolloutKind, NAME)
        t.fake.clearWrites()
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.fake.writes).toHaveLength(0)
      }),
    ),
  )
})
