/**
 * registry-mirror: copies every chart, wrapper and the bundle of the current resolution into the runtime registry.
 *
 * Owns:   condition `Mirrored`; `status.mirror` on ClusterRuntime `cluster`.
 * Reads:  `Resolved` (via `current` only), `status.resolution`, the content ConfigMap it names.
 * Leaves alone: everything else. It never deletes or overwrites registry content, and never plans or rolls out
 *         (the planner reads `Mirrored` and `status.mirror`). It checks the tags it recorded at start and every
 *         `--verify-interval` (verify.ts): a moved tag is `Conflict`, a gone one is mirrored again.
 */
import { ClusterRuntimeKind, type ClusterRuntime, type ObjectKey } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { Requeue, singleton } from "@aicr/runtime"
import { Data, Effect } from "effect"
import { act, type Registry } from "./act"
import type { MirrorConfig } from "./config"
import { contract } from "./contract"
import { decide } from "./decide"
import { gather } from "./gather"
import { report } from "./status"
import { type LastVerification, remember } from "./verify"

export const room = roomOn(contract, ClusterRuntimeKind)

/** A transient failure after its condition was written: the driver's backoff retries the key. */
export class RetryAfterTransientFailure extends Data.TaggedError("RetryAfterTransientFailure")<{
  readonly reason: string
  readonly message: string
}> {}

/** One pass over the runtime `cluster` (the frame, `singleton`, reads it and guards the name). */
const pass = (
  runtime: ClusterRuntime,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | Registry | MirrorConfig | LastVerification> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const observed = yield* gather(runtime)
    const decision = decide(observed)
    yield* Effect.logDebug("Decided", { decision: decision._tag })
    const outcome = yield* act(decision)
    const { applied } = yield* kube.applyStatus(room, runtime, report(observed, outcome))
    if (applied) yield* Effect.logDebug("Applied status")

    // A complete mirror is checked again in the registry after the verify interval (verify.ts): a registry has no watch.
    if (outcome._tag === "Mirrored") yield* remember(outcome.result.inputDigest, observed.now, true)
    if (outcome._tag === "Mirrored" || outcome._tag === "UpToDate") return Requeue.after(observed.verifyIntervalMs)
    if (outcome._tag !== "Failed") return Requeue.onChange
    if (outcome.class === "defect")
      yield* Effect.logError("Mirroring failed unexpectedly", { err: String(outcome.error), stack: (outcome.error as Error | undefined)?.stack })
    if (outcome.class === "terminal") {
      yield* Effect.logInfo("Mirroring stopped", { reason: outcome.condition.reason, message: outcome.condition.message })
      // One Warning per transition into a failure (a pass that changes nothing emits nothing); waiting is no failure.
      if (applied && outcome.condition.status === "False" && outcome.condition.reason !== "AwaitingResolution") {
        yield* (yield* EventRecorder).event(runtime, { type: "Warning", reason: outcome.condition.reason, action: "Mirror", note: outcome.condition.message })
      }
      return outcome.requeue
    }
    return yield* Effect.fail(
      new RetryAfterTransientFailure({
        reason: outcome.condition.reason,
        message: (outcome.error as { message?: string }).message ?? outcome.condition.message,
      }),
    )
  })

export const reconcile = (
  key: ObjectKey,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | Registry | MirrorConfig | LastVerification> =>
  Effect.flatMap(Kube, (kube) => singleton({ get: (k) => kube.get<ClusterRuntime>(ClusterRuntimeKind, k), pass })(key)).pipe(
    Effect.withSpan("registry-mirror.reconcile"),
  )
