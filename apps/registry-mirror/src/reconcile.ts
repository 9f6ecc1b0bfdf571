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
import { type EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { endFailed, Requeue, type RetryAfterTransientFailure, singleton } from "@aicr/runtime"
import { Effect } from "effect"
import { act, type Registry } from "./act"
import type { MirrorConfig } from "./config"
import { contract } from "./contract"
import { decide } from "./decide"
import { gather } from "./gather"
import { report } from "./status"
import { type LastVerification, remember } from "./verify"

export const room = roomOn(contract, ClusterRuntimeKind)

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
    // One Warning per transition into a terminal failure (errors.ts); waiting for a resolution is no failure.
    return yield* endFailed(outcome, {
      object: runtime,
      applied,
      action: "Mirror",
      what: "Mirroring",
      warns: (o) => o.class === "terminal" && o.condition.status === "False" && o.condition.reason !== "AwaitingResolution",
    })
  })

export const reconcile = (
  key: ObjectKey,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | Registry | MirrorConfig | LastVerification> =>
  Effect.flatMap(Kube, (kube) => singleton({ get: (k) => kube.get<ClusterRuntime>(ClusterRuntimeKind, k), pass })(key)).pipe(
    Effect.withSpan("registry-mirror.reconcile"),
  )
