// informersFor's work-queue sources against a stub Kube that lists fixed objects and never sends a watch event: each
// watch mapping turns an event into the root keys the contract says.
import { LABEL_OUTCOME, type KubeObject, type ResourceKind } from "@aicr/api"
import { approvalGuard } from "@aicr/contracts"
import { type Informer, Kube, KubeError, type KubeShape, reasonFromStatus } from "@aicr/kube"
import { it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { describe, expect } from "vitest"
import { crdScope, informersFor, openOnFirstUse, servedByCrd } from "./scaffold"

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

describe("servedByCrd", () => {
  const refused = (code: number) => new KubeError({ verb: "GET", path: "/apis/argoproj.io/v1alpha1/applications", reason: reasonFromStatus(code, {}) })
  const CRD = "applications.argoproj.io"

  it("tolerates a kind not served or not readable, and nothing else", () => {
    const { tolerate } = servedByCrd(CRD, () => undefined)
    expect([404, 403, 401, 500, 429].map((code) => tolerate!(refused(code)))).toEqual([true, true, true, false, false])
    expect(crdScope(CRD).fieldSelector).toBe(`metadata.name=${CRD}`)
  })

  it.live("after NotFound, lists again only once the CRD informer holds the CRD; after anything else, at once", () =>
    Effect.gen(function* () {
      const held = new Map<string, KubeObject>()
      const crds = { get: (name: string) => Option.fromNullishOr(held.get(name)) } as unknown as Informer<KubeObject>
      const { retryWhen } = servedByCrd(CRD, () => crds)
      yield* retryWhen!(refused(403))
      const waiting = yield* Effect.forkChild(retryWhen!(refused(404)))
      yield* Effect.sleep("1500 millis")
      expect(waiting.pollUnsafe()).toBeUndefined()
      held.set(CRD, { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: CRD } })
      yield* Fiber.join(waiting)
    }),
  )
})
