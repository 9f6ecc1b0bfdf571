import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { healthServer, metricsServer, parseBindAddress } from "./health"
import { makeMetrics } from "./metrics"

describe("health and metrics endpoints", () => {
  it("serves /healthz always and /readyz only once every readiness check passes", async () => {
    let synced = false
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { port } = yield* healthServer(
            { host: "127.0.0.1", port: 0 },
            { live: [{ name: "ping", ok: () => true }], ready: [{ name: "informer-Widget", ok: () => synced }] },
          )
          const get = (p: string) =>
            Effect.promise(async () => {
              const r = await fetch(`http://127.0.0.1:${port}${p}`)
              return { code: r.status, body: await r.text() }
            })
          expect(yield* get("/healthz")).toEqual({ code: 200, body: "ok" })
          expect(yield* get("/readyz")).toEqual({ code: 500, body: "failed: informer-Widget" })
          synced = true
          expect((yield* get("/readyz")).code).toBe(200)
          expect((yield* get("/readyz?verbose")).body).toContain("[+]informer-Widget ok")
          expect((yield* get("/nope")).code).toBe(404)
        }),
      ),
    )
  })

  it("serves controller-runtime metric names on /metrics", async () => {
    const metrics = makeMetrics()
    metrics.registerController("approval-guard", 2)
    metrics.reconciled("approval-guard", "success", 0.02)
    const wq = metrics.workqueue("approval-guard")
    wq.add?.()
    wq.depth?.(3)
    metrics.leader("aicr-approval-guard", true)
    metrics.request("PATCH", 409)
    const text = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { port } = yield* metricsServer({ host: "127.0.0.1", port: 0 }, metrics.registry)
          return yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text()))
        }),
      ),
    )
    for (const line of [
      'controller_runtime_reconcile_total{controller="approval-guard",result="success"} 1',
      'controller_runtime_reconcile_errors_total{controller="approval-guard"} 0',
      'controller_runtime_reconcile_time_seconds_count{controller="approval-guard"} 1',
      'controller_runtime_max_concurrent_reconciles{controller="approval-guard"} 2',
      'workqueue_depth{name="approval-guard"} 3',
      'workqueue_adds_total{name="approval-guard"} 1',
      'workqueue_retries_total{name="approval-guard"} 0',
      'leader_election_master_status{name="aicr-approval-guard"} 1',
      'rest_client_requests_total{method="PATCH",code="409"} 1',
    ])
      expect(text).toContain(line)
    expect(text).toContain("# TYPE workqueue_queue_duration_seconds histogram")
    expect(text).toContain("# TYPE workqueue_work_duration_seconds histogram")
  })

  it.each([
    [":8080", { port: 8080 }],
    ["127.0.0.1:9090", { host: "127.0.0.1", port: 9090 }],
    ["8081", { port: 8081 }],
    ["0", undefined],
    ["", undefined],
  ])("parses bind address %j", (addr, want) => expect(parseBindAddress(addr)).toEqual(want))
})
