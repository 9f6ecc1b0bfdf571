/**
 * The composition root every controller shares, so an app's `main.ts` is a few lines:
 *
 * @example
 * main({
 *   name: "approval-guard",
 *   setup: () => Effect.gen(function* () {
 *     const rollouts = yield* makeInformer<RuntimeRollout>({ kind: RuntimeRolloutKind })
 *     return [{ name: "approval-guard", kind: RuntimeRolloutKind, sources: [self(rollouts)], reconcile }]
 *   }),
 * })
 *
 * What it does: logging (pino bridge), the live `Kube` with a client-side token bucket and request metrics, the
 * event recorder, `/metrics` and `/healthz` `/readyz` servers, informers (via `setup`), leader election on
 * `aicr-<name>`, then the controllers once leading. SIGTERM/SIGINT: stop taking work, let in-flight reconciles
 * finish (bounded by the graceful-shutdown timeout, default 30 s), release the lease, exit 0. Losing the lease
 * exits 1 so the Deployment restarts the process without ever running two leaders.
 */
import { eventRecorderLayer, Kube, type KubeShape, layer as kubeLayer, runLeaderElection, type EventRecorder } from "@aicr/kube"
import { Logging } from "@aicr/logging"
import { Data, Effect, Layer, type Scope } from "effect"
import { parseConfig, type RuntimeConfig } from "./config"
import { conditionMetricsOf } from "./condition-metrics"
import { runController, type ControllerOptions } from "./controller"
import { healthServer, metricsServer, parseBindAddress } from "./health"
import { makeMetrics, type Metrics } from "./metrics"
import { makeTokenBucket } from "./ratelimit"

export class LeadershipLost extends Data.TaggedError("LeadershipLost")<{ readonly lease: string }> {}

export interface AppContext {
  readonly config: RuntimeConfig
  /** `aicr-<name>`: the SSA field manager and user agent. */
  readonly fieldManager: string
  readonly metrics: Metrics
}

export type AppController = Omit<ControllerOptions<unknown, Kube | EventRecorder>, "metrics">

export interface AppSpec<E> {
  /** Controller name, e.g. `approval-guard`. */
  readonly name: string
  /** Create informers and describe the controllers. Runs before leader election, so caches warm up on standbys too. */
  readonly setup: (ctx: AppContext) => Effect.Effect<ReadonlyArray<AppController>, E, Kube | EventRecorder | Scope.Scope>
}

export interface RunOptions {
  /**
   * Wraps the live `Kube` the whole process uses (tests only: e.g. a watch that delivers late, to stop the process
   * between a write and its cache seeing it). Never set by `main`.
   */
  readonly wrapKube?: ((kube: KubeShape) => KubeShape) | undefined
}

/** The whole process as an Effect (tests run it in-process); completes only by interruption or `LeadershipLost`. */
export const runApp = <E>(
  spec: AppSpec<E>,
  config: RuntimeConfig = parseConfig(spec.name),
  options: RunOptions = {},
): Effect.Effect<never, E | LeadershipLost | Error> => {
  const fieldManager = `aicr-${spec.name}`
  const metrics = makeMetrics({ processMetrics: true })
  const bucket = makeTokenBucket({ qps: config.kubeApiQps, burst: config.kubeApiBurst })
  const live = kubeLayer({
    kubeconfigPath: config.kubeconfig,
    inCluster: config.inCluster,
    userAgent: fieldManager,
    throttle: bucket.take,
    onResponse: (r) => metrics.request(r.method, r.code),
  })
  const wrap = options.wrapKube
  const kube = wrap === undefined ? live : Layer.effect(Kube)(Effect.map(Kube, wrap)).pipe(Layer.provide(live))
  const events = eventRecorderLayer({ controller: `operator.aicr.run/${spec.name}`, instance: config.identity }).pipe(Layer.provide(kube))
  const logging = Logging.live({ app: spec.name, level: config.logLevel })

  const program = Effect.gen(function* () {
    const ctx: AppContext = { config, fieldManager, metrics }
    const metricsBind = parseBindAddress(config.metricsBindAddress)
    if (metricsBind) yield* metricsServer(metricsBind, metrics.registry)
    const controllers = yield* spec.setup(ctx)
    const informers = controllers.flatMap((c) => c.sources.map((s) => s.informer))
    conditionMetricsOf(metrics.registry, spec.name, informers) // the status it owns, from these caches at each scrape
    const healthBind = parseBindAddress(config.healthProbeBindAddress)
    if (healthBind) {
      yield* healthServer(healthBind, {
        live: [{ name: "ping", ok: () => true }],
        ready: informers.map((i) => ({ name: `informer-${i.kind.kind}`, ok: i.hasSynced })),
      })
    }
    let lost: Effect.Effect<never, LeadershipLost> = Effect.never
    if (config.leaderElect) {
      const lease = `${config.leaderElectionNamespace}/${config.leaderElectionId}`
      metrics.leader(config.leaderElectionId, false)
      const elector = yield* runLeaderElection({
        name: config.leaderElectionId,
        namespace: config.leaderElectionNamespace,
        identity: config.identity,
        leaseDuration: config.leaseDurationMs,
        renewDeadline: config.renewDeadlineMs,
        retryPeriod: config.retryPeriodMs,
        onStartedLeading: Effect.sync(() => metrics.leader(config.leaderElectionId, true)),
        onStoppedLeading: Effect.sync(() => metrics.leader(config.leaderElectionId, false)),
      })
      yield* Effect.logInfo("Waiting for leadership", { Lease: lease, identity: elector.identity })
      yield* elector.awaitLeadership
      lost = elector.awaitLost.pipe(Effect.andThen(Effect.fail(new LeadershipLost({ lease }))))
    }
    for (const c of controllers) {
      yield* runController({ ...c, metrics, gracefulShutdown: c.gracefulShutdown ?? config.gracefulShutdownMs })
    }
    return yield* lost
  })

  return Effect.scoped(program).pipe(
    Effect.annotateLogs({ identity: config.identity }),
    Effect.provide(Layer.mergeAll(kube, events)),
    Effect.provide(logging),
  ) as Effect.Effect<never, E | LeadershipLost | Error>
}

/**
 * Run an app as the process: handles SIGTERM/SIGINT (graceful shutdown, exit 0), exits 1 on lost leadership or a
 * startup failure, and forces exit if shutdown overruns the graceful period by 5 s.
 */
export const main = <E>(spec: AppSpec<E>, config: RuntimeConfig = parseConfig(spec.name)): void => {
  const fiber = Effect.runFork(runApp(spec, config))
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    process.stderr.write(`${JSON.stringify({ level: "info", app: spec.name, msg: "Shutting down", signal })}\n`)
    setTimeout(() => process.exit(1), config.gracefulShutdownMs + 5_000).unref()
    fiber.interruptUnsafe()
  }
  process.once("SIGTERM", () => stop("SIGTERM"))
  process.once("SIGINT", () => stop("SIGINT"))
  fiber.addObserver((exit) => {
    const failed = exit._tag === "Failure" && !stopping
    if (failed) process.stderr.write(`${JSON.stringify({ level: "fatal", app: spec.name, msg: "Exiting", cause: String(exit.cause) })}\n`)
    process.exit(failed ? 1 : 0)
  })
}
