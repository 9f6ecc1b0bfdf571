/**
 * Leader election on a `coordination.k8s.io/v1` Lease, the client-go algorithm: a candidate acquires an absent,
 * released or expired lease; the leader renews every `retryPeriod` and gives up if it cannot renew within
 * `renewDeadline`; every write carries the lease's resourceVersion (optimistic concurrency), so two candidates can
 * never both win. Expiry is judged on the *local* clock from when this candidate last saw the record change, so
 * clock skew between candidates does not matter.
 *
 * Defaults follow operator.md §4.1 / controller-runtime: lease 15 s, renew deadline 10 s, retry 2 s.
 * Closing the scope stops campaigning and, when leading and `releaseOnCancel` (default), releases the lease at once
 * (holder cleared, duration 1 s) so a successor takes over without waiting for expiry.
 */
import { Core, type KubeObject } from "@aicr/api"
import { Clock, Deferred, Duration, Effect, Fiber, Option, Random, Result, type Scope } from "effect"
import { hostname } from "node:os"
import { randomUUID } from "node:crypto"
import type { KubeError } from "./errors"
import { Kube, type KubeShape } from "./kube"

export interface LeaderElectionOptions {
  /** Lease name, by convention `aicr-<controller>`. */
  readonly name: string
  /** Lease namespace: the operator namespace. */
  readonly namespace: string
  /** This candidate's identity; default `<hostname>_<uuid>`. */
  readonly identity?: string | undefined
  readonly leaseDuration?: Duration.Input | undefined
  readonly renewDeadline?: Duration.Input | undefined
  readonly retryPeriod?: Duration.Input | undefined
  /** Release the lease when the scope closes while leading (default true). False simulates a crash. */
  readonly releaseOnCancel?: boolean | undefined
  readonly onStartedLeading?: Effect.Effect<void> | undefined
  readonly onStoppedLeading?: Effect.Effect<void> | undefined
}

export interface LeaderElector {
  readonly identity: string
  readonly isLeader: () => boolean
  /** Completes when this candidate becomes leader. */
  readonly awaitLeadership: Effect.Effect<void>
  /** Completes when leadership, once held, is lost (renewal failed) or released. */
  readonly awaitLost: Effect.Effect<void>
}

interface LeaseSpec {
  readonly holderIdentity?: string | undefined
  readonly leaseDurationSeconds?: number | undefined
  readonly acquireTime?: string | undefined
  readonly renewTime?: string | undefined
  readonly leaseTransitions?: number | undefined
}
type Lease = KubeObject & { readonly spec?: LeaseSpec }

/** MicroTime: RFC 3339 with exactly six fractional digits, as the API server writes it. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

export const runLeaderElection = (options: LeaderElectionOptions): Effect.Effect<LeaderElector, never, Kube | Scope.Scope> =>
  Effect.gen(function* () {
    const kube: KubeShape = yield* Kube
    const identity = options.identity ?? `${hostname()}_${randomUUID()}`
    const leaseMs = Duration.toMillis(options.leaseDuration ?? "15 seconds")
    const renewMs = Duration.toMillis(options.renewDeadline ?? "10 seconds")
    const retryMs = Duration.toMillis(options.retryPeriod ?? "2 seconds")
    const key = `${options.namespace}/${options.name}`
    const leading = yield* Deferred.make<void>()
    const lost = yield* Deferred.make<void>()
    let isLeader = false
    let observed: { spec: string; at: number } | undefined

    const leaseBody = (spec: LeaseSpec, rv?: string): Lease => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: options.name, namespace: options.namespace, ...(rv ? { resourceVersion: rv } : {}) },
      spec,
    })

    /** One attempt; true when this candidate holds the lease afterwards. Conflicts and transport errors are a plain "no". */
    const tryAcquireOrRenew: Effect.Effect<boolean> = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const attempt: Effect.Effect<boolean, KubeError> = Effect.gen(function* () {
        const found = yield* kube.get<Lease>(Core.Lease, key)
        const fresh: LeaseSpec = {
          holderIdentity: identity,
          leaseDurationSeconds: Math.ceil(leaseMs / 1000),
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        }
        if (Option.isNone(found)) {
          yield* kube.create(Core.Lease, leaseBody(fresh), { fieldManager: identity })
          observed = { spec: JSON.stringify(fresh), at: now }
          return true
        }
        const lease = found.value
        const spec = lease.spec ?? {}
        const specJson = JSON.stringify(spec)
        if (observed === undefined || observed.spec !== specJson) observed = { spec: specJson, at: now }
        const holder = spec.holderIdentity ?? ""
        const expiresAt = observed.at + (spec.leaseDurationSeconds ?? 0) * 1000
        if (holder !== "" && holder !== identity && expiresAt > now) return false
        const next: LeaseSpec =
          holder === identity
            ? { ...fresh, acquireTime: spec.acquireTime ?? fresh.acquireTime, leaseTransitions: spec.leaseTransitions ?? 0 }
            : { ...fresh, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }
        yield* kube.replace(Core.Lease, leaseBody(next, lease.metadata.resourceVersion), { fieldManager: identity })
        observed = { spec: JSON.stringify(next), at: now }
        return true
      })
      const r = yield* Effect.result(attempt)
      if (Result.isFailure(r)) {
        if (r.failure.reason._tag !== "Conflict" && r.failure.reason._tag !== "AlreadyExists")
          yield* Effect.logDebug("Lease attempt failed", { err: r.failure.message })
        return false
      }
      return r.success
    })

    const jitteredRetry = Random.next.pipe(Effect.flatMap((r) => Effect.sleep(Math.round(retryMs * (1 + 0.2 * r)))))

    const release: Effect.Effect<void> = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const r = yield* Effect.result(
        Effect.gen(function* () {
          const found = yield* kube.get<Lease>(Core.Lease, key)
          if (Option.isNone(found) || found.value.spec?.holderIdentity !== identity) return
          const spec = found.value.spec
          yield* kube.replace(
            Core.Lease,
            leaseBody(
              {
                holderIdentity: "",
                leaseDurationSeconds: 1,
                acquireTime: microTime(now),
                renewTime: microTime(now),
                leaseTransitions: spec.leaseTransitions ?? 0,
              },
              found.value.metadata.resourceVersion,
            ),
            { fieldManager: identity },
          )
        }),
      )
      if (Result.isFailure(r)) yield* Effect.logWarning("Releasing the lease failed", { err: r.failure.message })
      else yield* Effect.logInfo("Released leadership")
    })

    const stopLeading = Effect.gen(function* () {
      if (!isLeader) return
      isLeader = false
      yield* Deferred.succeed(lost, undefined)
      if (options.onStoppedLeading) yield* options.onStoppedLeading
    })

    const campaign: Effect.Effect<void> = Effect.gen(function* () {
      while (!(yield* tryAcquireOrRenew)) yield* jitteredRetry
      isLeader = true
      yield* Effect.logInfo("Acquired leadership")
      yield* Deferred.succeed(leading, undefined)
      if (options.onStartedLeading) yield* options.onStartedLeading
      for (;;) {
        yield* Effect.sleep(retryMs)
        // Retry every retryPeriod until renewed; give up when renewDeadline passes (a hanging request included).
        const round = Effect.gen(function* () {
          while (!(yield* tryAcquireOrRenew)) yield* Effect.sleep(retryMs)
        })
        const renewed = yield* Effect.timeoutOption(round, renewMs)
        if (Option.isNone(renewed)) {
          yield* Effect.logWarning("Lost leadership: could not renew the lease within the renew deadline", { renewDeadlineMs: renewMs })
          yield* stopLeading
          return
        }
      }
    })

    const fiber = yield* Effect.forkScoped(campaign.pipe(Effect.annotateLogs({ Lease: key, identity })))
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* Fiber.interrupt(fiber)
        if (isLeader && (options.releaseOnCancel ?? true)) yield* release
        yield* stopLeading
      }),
    )

    return {
      identity,
      isLeader: () => isLeader,
      awaitLeadership: Deferred.await(leading),
      awaitLost: Deferred.await(lost),
    } satisfies LeaderElector
  })
