/**
 * `settle`: wait until informers on a FakeKube have delivered everything it holds, so a reconcile that reads from
 * caches sees the state the test just wrote (on a real API server the watch delivers it a few milliseconds later).
 * It sends a bookmark at FakeKube's current resourceVersion and yields until every synced informer's resourceVersion
 * reached it (an informer whose list failed and was tolerated holds nothing to wait for).
 */
import type { KubeObject } from "@aicr/api"
import type { Informer } from "@aicr/kube"
import { Effect } from "effect"
import type { FakeKube } from "./fake-kube"

export const settle = (fake: FakeKube, informers: ReadonlyArray<Informer<KubeObject>>): Effect.Effect<void> =>
  Effect.gen(function* () {
    const target = Number(fake.resourceVersion())
    const done = (i: Informer<KubeObject>) => i.hasSynced() && (i.listError() !== undefined || Number(i.resourceVersion() || "0") >= target)
    for (let round = 0; round < 10_000; round++) {
      if (informers.every(done)) return
      fake.bookmark()
      yield* Effect.yieldNow
    }
    return yield* Effect.die(
      new Error(
        `informers did not reach resourceVersion ${target}: ${informers
          .filter((i) => !done(i))
          .map((i) => `${i.kind.kind} at ${i.resourceVersion()}`)
          .join(", ")}`,
      ),
    )
  })
