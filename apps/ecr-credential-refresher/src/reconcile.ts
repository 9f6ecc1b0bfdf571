/**
 * ecr-credential-refresher: keeps the registry credentials Argo CD and the operator's pushing components use.
 *
 * Owns:   condition `RegistryCredentialsReady`; `status.credentials` on ClusterRuntime `cluster`; with `aws`, the
 *         repo-creds Secret (Argo CD namespace) and the docker-config Secret (operator namespace), by name.
 * Reads:  those two Secrets by name; ECR (`ecr:GetAuthorizationToken`) through the SDK's default credential chain.
 * Leaves alone: everything else. With `static` it writes no Secret; it never creates per-run Job Secrets (their
 *         creators copy the docker-config Secret) and never touches `argocd-cm`.
 */
import { ClusterRuntimeKind, type ClusterRuntime, type ObjectKey, SINGLETON_NAME } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { type EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { endFailed, Requeue, type RetryAfterTransientFailure } from "@aicr/runtime"
import { Effect, Option } from "effect"
import { act, type Ecr, type MintState } from "./act"
import type { RefresherConfig } from "./config"
import { contract } from "./contract"
import { decide } from "./decide"
import { gather } from "./gather"
import { report, requeueOf } from "./status"

export const room = roomOn(contract, ClusterRuntimeKind)

/**
 * One pass: gather, decide, act, then, when the runtime `cluster` exists, its status and one Warning per transition
 * into a failure. Without a runtime the Secrets are still kept (the install guide reads the repo-creds Secret's
 * expiry before it creates the runtime, ADR 20261203-credentials-before-runtime); failures then go to the log only.
 */
const pass = (
  runtime: ClusterRuntime | undefined,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | Ecr | MintState | RefresherConfig> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const observed = yield* gather(runtime)
    const decision = decide(observed)
    yield* Effect.logDebug("Decided", { decision: decision._tag, runtime: runtime !== undefined })
    const outcome = yield* act(observed, decision)
    const applied = runtime === undefined ? false : (yield* kube.applyStatus(room, runtime, report(observed, outcome))).applied
    if (applied) yield* Effect.logDebug("Applied status")

    if (outcome._tag !== "Failed") return requeueOf(observed, outcome)
    // One Warning per transition into a failure; a pass that changes nothing emits nothing. Terminal: look again when
    // errors.ts says; transient and defect: the driver's backoff.
    return yield* endFailed(outcome, { object: runtime, applied, action: "RefreshCredentials", what: "Refreshing credentials" })
  })

/**
 * The key `cluster` only (any other name is never acted on, spec §3.2); the runtime read from the API server's view
 * the Kube layer serves. Unlike `singleton`, a missing runtime still gets a pass: the app enqueues `cluster` at start.
 */
export const reconcile = (
  key: ObjectKey,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | Ecr | MintState | RefresherConfig> =>
  key !== SINGLETON_NAME
    ? Effect.succeed(Requeue.never)
    : Effect.flatMap(Kube, (kube) => kube.get<ClusterRuntime>(ClusterRuntimeKind, key)).pipe(
        Effect.flatMap((found) => pass(Option.getOrUndefined(found))),
        Effect.withSpan("ecr-credential-refresher.reconcile"),
      )
