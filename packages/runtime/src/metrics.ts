/**
 * Prometheus metrics with controller-runtime's names, so existing dashboards and alerts work unchanged:
 * `controller_runtime_reconcile_total{controller,result}`, `controller_runtime_reconcile_errors_total`,
 * `controller_runtime_reconcile_time_seconds`, `workqueue_*{name}`, `leader_election_master_status{name}`, and
 * `rest_client_requests_total{code,method}`. Each process owns one `Registry` (no global state, so tests can
 * build as many as they like).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client"
import type { WorkQueueMetrics } from "./workqueue"

export type ReconcileResult = "success" | "error" | "requeue" | "requeue_after"

const exponential = (start: number, factor: number, count: number) => Array.from({ length: count }, (_, i) => start * factor ** i)

export const makeMetrics = (options: { readonly processMetrics?: boolean } = {}) => {
  const registry = new Registry()
  if (options.processMetrics) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const reconcileTotal = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"] as const,
    registers,
  })
  const reconcileErrors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers,
  })
  const reconcileTime = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"] as const,
    registers,
    buckets: [
      0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9,
      10, 15, 20, 25, 30, 40, 50, 60,
    ],
  })
  const activeWorkers = new Gauge({
    name: "controller_runtime_active_workers",
    help: "Number of currently used workers per controller",
    labelNames: ["controller"] as const,
    registers,
  })
  const maxConcurrent = new Gauge({
    name: "controller_runtime_max_concurrent_reconciles",
    help: "Maximum number of concurrent reconciles per controller",
    labelNames: ["controller"] as const,
    registers,
  })
  const depth = new Gauge({ name: "workqueue_depth", help: "Current depth of workqueue", labelNames: ["name"] as const, registers })
  const adds = new Counter({ name: "workqueue_adds_total", help: "Total number of adds handled by workqueue", labelNames: ["name"] as const, registers })
  const retries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames: ["name"] as const,
    registers,
  })
  const latencyBuckets = exponential(1e-8, 10, 11)
  const queueDuration = new Histogram({
    name: "workqueue_queue_duration_seconds",
    help: "How long in seconds an item stays in workqueue before being requested",
    labelNames: ["name"] as const,
    buckets: latencyBuckets,
    registers,
  })
  const workDuration = new Histogram({
    name: "workqueue_work_duration_seconds",
    help: "How long in seconds processing an item from workqueue takes",
    labelNames: ["name"] as const,
    buckets: latencyBuckets,
    registers,
  })
  const leader = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
    labelNames: ["name"] as const,
    registers,
  })
  const requests = new Counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code and method",
    labelNames: ["code", "method"] as const,
    registers,
  })

  return {
    registry,
    reconciled: (controller: string, result: ReconcileResult, seconds: number) => {
      reconcileTotal.inc({ controller, result })
      reconcileTime.observe({ controller }, seconds)
      if (result === "error") reconcileErrors.inc({ controller })
    },
    /** Initialise a controller's series at zero so dashboards see them before the first reconcile. */
    registerController: (controller: string, workers: number) => {
      for (const result of ["success", "error", "requeue", "requeue_after"] as const) reconcileTotal.inc({ controller, result }, 0)
      reconcileErrors.inc({ controller }, 0)
      maxConcurrent.set({ controller }, workers)
      activeWorkers.set({ controller }, 0)
    },
    activeWorkers: (controller: string, delta: number) => activeWorkers.inc({ controller }, delta),
    workqueue: (name: string): WorkQueueMetrics => {
      adds.inc({ name }, 0)
      retries.inc({ name }, 0)
      depth.set({ name }, 0)
      return {
        depth: (n) => depth.set({ name }, n),
        add: () => adds.inc({ name }),
        retry: () => retries.inc({ name }),
        queueDuration: (s) => queueDuration.observe({ name }, s),
        workDuration: (s) => workDuration.observe({ name }, s),
      }
    },
    leader: (name: string, isLeader: boolean) => leader.set({ name }, isLeader ? 1 : 0),
    request: (method: string, code: number) => requests.inc({ method, code: code === 0 ? "<error>" : String(code) }),
  }
}

export type Metrics = ReturnType<typeof makeMetrics>
