import { Core, type KubeObject } from "@aicr/api"
import { it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeFakeKube } from "@aicr/testing"
import { runLeaderElection, type LeaderElectionOptions } from "../src/index"

const settle = Effect.gen(function* () {
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow
})

type Lease = KubeObject & { spec: { holderIdentity: string; leaseTransitions: number; leaseDurationSeconds: number } }

const candidate = (fake: ReturnType<typeof makeFakeKube>, identity: string, extra: Partial<LeaderElectionOptions> = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const elector = yield* runLeaderElection({ name: "aicr-test", namespace: "aicr-system", identity, ...extra }).pipe(
      Effect.provide(fake.layer),
      Scope.provide(scope),
    )
    return { elector, stop: Scope.close(scope, Exit.void) }
  })

describe("leader election", () => {
  it.effect("two candidates: exactly one leads, and the lease names it", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const a = yield* candidate(fake, "a")
      const b = yield* candidate(fake, "b")
      yield* settle
      for (let i = 0; i < 10; i++) {
        yield* TestClock.adjust("2 seconds")
        yield* settle
        expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1)
      }
      const lease = fake.peek<Lease>(Core.Lease, "aicr-system/aicr-test")!
      expect(lease.spec.holderIdentity).toBe(a.elector.isLeader() ? "a" : "b")
      expect(lease.spec.leaseDurationSeconds).toBe(15)
      yield* a.stop
      yield* b.stop
    }),
  )

  it.effect("a leader that stops renewing without releasing is replaced after the lease duration, not before", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const a = yield* candidate(fake, "a", { releaseOnCancel: false })
      yield* settle
      expect(a.elector.isLeader()).toBe(true)
      const b = yield* candidate(fake, "b")
      yield* settle
      yield* a.stop // crash: no release
      for (let t = 0; t < 14; t += 2) {
        yield* TestClock.adjust("2 seconds")
        yield* settle
        expect(b.elector.isLeader()).toBe(false)
      }
      for (let t = 0; t < 6; t += 2) {
        yield* TestClock.adjust("2 seconds")
        yield* settle
      }
      expect(b.elector.isLeader()).toBe(true)
      expect(fake.peek<Lease>(Core.Lease, "aicr-system/aicr-test")!.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 })
      yield* b.stop
    }),
  )

  it.effect("a graceful stop releases the lease, so the other candidate takes over on its next retry", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const a = yield* candidate(fake, "a")
      yield* settle
      const b = yield* candidate(fake, "b")
      yield* settle
      yield* a.stop
      expect(a.elector.isLeader()).toBe(false)
      expect(fake.peek<Lease>(Core.Lease, "aicr-system/aicr-test")!.spec.holderIdentity).toBe("")
      yield* TestClock.adjust("3 seconds")
      yield* settle
      expect(b.elector.isLeader()).toBe(true)
      yield* b.stop
    }),
  )

  it.effect("a leader that cannot renew within the renew deadline steps down and signals it", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      let stopped = 0
      const a = yield* candidate(fake, "a", { onStoppedLeading: Effect.sync(() => void stopped++) })
      yield* settle
      expect(a.elector.isLeader()).toBe(true)
      fake.failNext("Unavailable", { verb: "get", times: 100 })
      for (let t = 0; t < 14; t += 2) {
        yield* TestClock.adjust("2 seconds")
        yield* settle
      }
      expect(a.elector.isLeader()).toBe(false)
      expect(stopped).toBe(1)
      yield* a.elector.awaitLost
      yield* a.stop
      expect(stopped).toBe(1)
    }),
  )

  it.effect("writes the lease with optimistic concurrency: a stale resourceVersion loses the race", () =>
    Effect.gen(function* () {
      const fake = makeFakeKube()
      const a = yield* candidate(fake, "a")
      yield* settle
      const replaces = fake.writes.filter((w) => w.verb === "replace")
      yield* TestClock.adjust("2 seconds")
      yield* settle
      const renew = fake.writes.filter((w) => w.verb === "replace").slice(replaces.length)
      expect(renew).toHaveLength(1)
      expect((renew[0]!.body as KubeObject).metadata.resourceVersion).toBeDefined()
      yield* a.stop
    }),
  )
})
