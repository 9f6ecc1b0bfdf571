/**
 * resolver: discovers the node groups of `spec.placement` and resolves the current inputs into a recipe and a
 * helm bundle by running the pinned AICR as Jobs.
 *
 * Owns:   conditions `Discovered`, `Resolved`; `status.discovery`, `status.resolution` on ClusterRuntime `cluster`;
 *         AICR Jobs (and the ConfigMaps and Secrets they own) and the content ConfigMaps it publishes.
 * Reads:  the runtime's spec, Nodes, its own Jobs, their pods and output ConfigMaps.
 * Leaves alone: every other condition and status key; it never mirrors, plans or rolls out.
 */
import { ClusterRuntimeKind, type ClusterRuntime, type ObjectKey } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { Requeue, singleton } from "@aicr/runtime"
import { Clock, Data, Effect, Exit, Option } from "effect"
import type { ResolverConfig } from "./config"
import { contract } from "./contract"
import { resolvePass } from "./resolve"
import type { BundleStore, Nodes } from "./services"
import { report, reportInternalError } from "./status"

export const room = roomOn(contract, ClusterRuntimeKind)

/** A transient failure after its condition was written: the driver's backoff retries the key. */
export class RetryAfterTransientFailure extends Data.TaggedError("RetryAfterTransientFailure")<{ readonly message: string }> {}

/** Reasons that are waiting, not failing: no Warning event. */
const QUIET = new Set(["Resolving", "Discovering", "InputsResolved", "NodeGroupsDiscovered"])

/** One pass over the runtime `cluster` (the frame, `singleton`, reads it and guards the name). */
const pass = (
  runtime: ClusterRuntime,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | Nodes | BundleStore | ResolverConfig> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const exit = yield* Effect.exit(resolvePass(runtime))
    const now = yield* Clock.currentTimeMillis
    if (Exit.isFailure(exit)) {
      const error = Exit.findErrorOption(exit)
      // API server errors: no status write, the driver backs off (a Conflict requeues silently).
      if (Option.isSome(error)) return yield* Effect.fail(error.value)
      yield* Effect.logError("Resolution failed unexpectedly", { cause: String(exit.cause) })
      yield* kube.applyStatus(room, runtime, reportInternalError(runtime, now))
      return Requeue.after("1 minute")
    }
    const pass = exit.value
    const { applied } = yield* kube.applyStatus(room, runtime, report(runtime, pass, now))
    if (applied) yield* Effect.logInfo("Status", { discovered: pass.discovered.reason, resolved: pass.resolved.reason, message: pass.resolved.message })
    if (applied && pass.resolved.status === "False" && !QUIET.has(pass.resolved.reason)) {
      yield* (yield* EventRecorder).event(runtime, { type: "Warning", reason: pass.resolved.reason, action: "Resolve", note: pass.resolved.message })
    }
    if (pass.transient !== undefined) return yield* Effect.fail(new RetryAfterTransientFailure({ message: pass.transient }))
    return pass.requeue
  })

export const reconcile = (
  key: ObjectKey,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | Nodes | BundleStore | ResolverConfig> =>
  Effect.flatMap(Kube, (kube) => singleton({ get: (k) => kube.get<ClusterRuntime>(ClusterRuntimeKind, k), pass })(key)).pipe(
    Effect.withSpan("resolver.reconcile"),
  )
