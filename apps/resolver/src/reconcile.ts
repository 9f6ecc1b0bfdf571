/**
 * resolver: discovers the node groups of `spec.placement` and resolves the current inputs into a recipe and a
 * helm bundle by running the pinned AICR as Jobs.
 *
 * Owns:   conditions `Discovered`, `Resolved`; `status.discovery`, `status.resolution` on ClusterRuntime `cluster`;
 *         AICR Jobs (and the ConfigMaps and Secrets they own) and the content ConfigMaps it publishes.
 * Reads:  the runtime's spec, Nodes, its own Jobs, their pods and output ConfigMaps.
 * Leaves alone: every other condition and status key; it never mirrors, plans or rolls out.
 *
 * One pass: gather → decide → act → report → apply (gather.ts, decide.ts, act.ts, status.ts; errors.ts maps every
 * failure to its outcome).
 */
import { ClusterRuntimeKind, type ClusterRuntime, type ObjectKey } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { type EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { logDefect, Requeue, RetryAfterTransientFailure, singleton, warnOnTransition } from "@aicr/runtime"
import { Clock, Effect } from "effect"
import { act } from "./act"
import type { ResolverConfig } from "./config"
import { contract } from "./contract"
import { decide } from "./decide"
import { gather } from "./gather"
import type { BundleStore, Nodes } from "./services"
import { report, reportInternalError, resolvedCondition } from "./status"

export const room = roomOn(contract, ClusterRuntimeKind)

/** Reasons that are waiting, not failing: no Warning event. */
const QUIET = new Set(["Resolving", "Discovering", "InputsResolved", "NodeGroupsDiscovered"])

type Services = Kube | EventRecorder | Nodes | BundleStore | ResolverConfig

/** One pass over the runtime `cluster` (the frame, `singleton`, reads it and guards the name). */
const pass = (runtime: ClusterRuntime): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Services> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const done = yield* Effect.gen(function* () {
      const observed = yield* gather(runtime)
      const decision = decide(observed)
      yield* Effect.logDebug("Decided", { decision: decision._tag })
      return { observed, outcome: yield* act(observed, decision) }
    }).pipe(Effect.catchDefect((defect) => Effect.succeed({ defect })))
    if ("defect" in done) {
      // A bug or anything untyped: InternalError on both conditions, the detail in the log; API server errors are
      // not caught here (no status write, the driver backs off; a Conflict requeues silently).
      yield* logDefect("Resolution failed unexpectedly", done.defect)
      yield* kube.applyStatus(room, runtime, reportInternalError(runtime, yield* Clock.currentTimeMillis))
      return Requeue.after("1 minute")
    }
    const { observed, outcome } = done
    const { applied } = yield* kube.applyStatus(room, runtime, report(observed, outcome))
    const resolved = resolvedCondition(observed, outcome)
    if (applied) yield* Effect.logInfo("Status", { outcome: outcome._tag, resolved: resolved.reason, message: resolved.message })
    // One Warning per transition into a failure (a pass that changes nothing emits nothing); waiting is no failure.
    if (resolved.status === "False" && !QUIET.has(resolved.reason))
      yield* warnOnTransition(runtime, applied, { reason: resolved.reason, action: "Resolve", note: resolved.message })
    if (outcome._tag === "Failed" && outcome.class === "transient")
      return yield* Effect.fail(new RetryAfterTransientFailure({ reason: resolved.reason, message: outcome.retry ?? resolved.message }))
    return Requeue.onChange
  })

export const reconcile = (key: ObjectKey): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Services> =>
  Effect.flatMap(Kube, (kube) => singleton({ get: (k) => kube.get<ClusterRuntime>(ClusterRuntimeKind, k), pass })(key)).pipe(
    Effect.withSpan("resolver.reconcile"),
  )
