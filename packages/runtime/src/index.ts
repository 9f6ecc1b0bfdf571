/**
 * @aicr/runtime — work queue, rate limiting, the reconcile driver, health/metrics endpoints, graceful shutdown and
 * the `main` helper every controller's `main.ts` calls.
 */
export { Requeue } from "./requeue"
export { makeKeyedBackoff, makeTokenBucket, type BackoffOptions, type KeyedBackoff, type TokenBucket, type TokenBucketOptions } from "./ratelimit"
export { makeWorkQueue, type WorkQueue, type WorkQueueMetrics, type WorkQueueOptions } from "./workqueue"
export { runController, self, mapped, type ControllerHandle, type ControllerOptions, type Source } from "./controller"
export { makeMetrics, type Metrics, type ReconcileResult } from "./metrics"
export { conditionMetricsOf, registerConditionMetrics, STATUS_FIELDS, type StatusField } from "./condition-metrics"
export { healthServer, metricsServer, parseBindAddress, serve, type Check, type ServerHandle } from "./health"
export { parseConfig, parseDurationMs, parseJobSeconds, readAppFlags, type AppFlags, type RuntimeConfig } from "./config"
export { Expectations, makeExpectations, reached, type ExpectationsShape } from "./expectations"
export { makeStatusPacer, MESSAGE_INTERVAL_DEFAULT, StatusPacer, type StatusPacerShape } from "./pacer"
export { main, runApp, LeadershipLost, type AppContext, type AppController, type AppSpec, type RunOptions } from "./main"
export {
  appSettings,
  type ContractInformers,
  crdScope,
  fromCache,
  informersFor,
  lazy,
  openOnFirstUse,
  rooted,
  type RootedOptions,
  singleton,
  type WatchScope,
} from "./scaffold"
export {
  classify,
  endFailed,
  type EndFailedOptions,
  type ErrorTable,
  type FailedOutcome,
  failedOutcome,
  type Failure,
  type FailureClass,
  failedPass,
  type FailedPassOptions,
  InternalError,
  kubeClassOf,
  type KubeErrorClasses,
  logDefect,
  outcomeOf,
  type PassFailureClass,
  type ReportedCondition,
  RetryAfterTransientFailure,
  warnOnTransition,
} from "./failures"
export {
  answerOf,
  callInProcess,
  callProcess,
  type CallAnswer,
  type CallDecoder,
  ProcessCallError,
  serveCall,
  siblingProcess,
  type TaggedErrorClasses,
  taggedErrorFromWire,
  taggedErrorToWire,
} from "./process-call"
