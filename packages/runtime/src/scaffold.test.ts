// informersFor's work-queue sources against a stub Kube that lists fixed objects and never sends a watch event: each
// watch mapping turns an event into the root keys the contract says.
import { LABEL_OUTCOME, type KubeObject, type ResourceKind } from "@aicr/api"
import { approvalGuard } from "@aicr/contracts"
import { Kube, type KubeShape } from "@aicr/kube"
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { informersFor, openOnFirstUse } from "./scaffold"

const rollout = (name: string, outcome?: string): KubeObject => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "RuntimeRollout",
  metadata: { name, uid: `uid-${name}`, resourceVersion: "1", ...(outcome !== undefined ? { labels: { [LABEL_OUTCOME]: outcome } } : {}) },
})
const binding: KubeObject = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name: "approvers", uid: "uid-b", resourceVersion: "2" },
}

/** Lists `objects` of their kind; every watch waits forever (the informers stay synced with the list). */
const stubKube = (objects: ReadonlyArray<KubeObject>): Layer.Layer<Kube> =>
  Layer.succeed(Kube)({
    list: (kind: ResourceKind) => Effect.succeed({ items: objects.filter((o) => o.kind === kind.kind), resourceVersion: "10" }),
    watch: () => Effect.never,
  } as unknown as KubeShape)

describe("informersFor", () => {
  it.effect("open-rollouts: a ClusterRoleBinding event maps to every rollout without an outcome label, and to none once all are closed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const run = (objects: ReadonlyArray<KubeObject>) =>
          Effect.gen(function* () {
            const informers = yield* informersFor(approvalGuard)
            yield* Effect.forEach(informers.all, ({ informer }) => informer.awaitSynced, { discard: true })
            const source = informers.sources.find((s) => s.informer.kind.kind === "ClusterRoleBinding")!
            return source.toKeys({ type: "add", object: binding })
          }).pipe(Effect.provide(stubKube(objects)))
        expect([...(yield* run([rollout("r-open-1"), rollout("r-closed", "Succeeded"), rollout("r-open-2"), binding]))].sort()).toEqual([
          "r-open-1",
          "r-open-2",
        ])
        expect(yield* run([rollout("r-closed", "Expired"), binding])).toEqual([])
      }),
    ),
  )
})

describe("openOnFirstUse", () => {
  it("opens nothing until used, opens once, retries a failed open, and closes what it opened with the scope", async () => {
    let opens = 0
    let closes = 0
    let fail = true
    const log = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const client = yield* openOnFirstUse(async () => {
            opens++
            if (fail) throw new Error("registry down")
            return { id: opens, close: async () => void closes++ }
          })
          const before = opens
          const first = yield* Effect.exit(client)
          fail = false
          const a = yield* client
          const b = yield* client
          return { before, failed: first._tag === "Failure", a: a.id, b: b.id, closesInScope: closes }
        }),
      ),
    )
    expect(log).toEqual({ before: 0, failed: true, a: 2, b: 2, closesInScope: 0 })
    expect({ opens, closes }).toEqual({ opens: 2, closes: 1 })
  })

  it("closes nothing when it was never used", async () => {
    let opens = 0
    await Effect.runPromise(Effect.scoped(openOnFirstUse(async () => (opens++, { close: async () => undefined })).pipe(Effect.asVoid)))
    expect(opens).toBe(0)
  })
})
