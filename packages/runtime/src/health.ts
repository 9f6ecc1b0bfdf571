/**
 * The probe and metrics endpoints (operator.md §4.1): `/healthz` and `/readyz` on :8081, `/metrics` on :8080.
 * `/readyz` turns 200 once every informer has synced; with leader election on it does *not* wait for leadership,
 * so a standby replica is ready too (controller-runtime behaviour).
 */
import { Effect, type Scope } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { Registry } from "prom-client"

export interface Check {
  readonly name: string
  readonly ok: () => boolean
}

export interface ServerHandle {
  readonly port: number
  readonly server: Server
}

/** Parse `:8080`, `127.0.0.1:8080`, `8080` or `0` (disabled when `"0"` or empty, as controller-runtime). */
export const parseBindAddress = (addr: string): { host?: string; port: number } | undefined => {
  if (addr === "" || addr === "0") return undefined
  const i = addr.lastIndexOf(":")
  const host = i > 0 ? addr.slice(0, i) : undefined
  const port = Number(i >= 0 ? addr.slice(i + 1) : addr)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid bind address "${addr}"`)
  return host === undefined ? { port } : { host, port }
}

/** Start an HTTP server for the scope's lifetime. Port 0 picks a free port (see `port`). */
export const serve = (
  bind: { readonly host?: string | undefined; readonly port: number },
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
): Effect.Effect<ServerHandle, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<ServerHandle, Error>((resume) => {
      const server = createServer((req, res) => {
        Promise.resolve(handler(req, res)).catch((e) => {
          res.statusCode = 500
          res.end(String(e))
        })
      })
      server.once("error", (e) => resume(Effect.fail(e)))
      server.listen(bind.port, bind.host, () => resume(Effect.succeed({ server, port: (server.address() as AddressInfo).port })))
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      }),
  )

const check = (res: ServerResponse, checks: ReadonlyArray<Check>, verbose: boolean) => {
  const failed = checks.filter((c) => !c.ok())
  res.statusCode = failed.length === 0 ? 200 : 500
  res.setHeader("content-type", "text/plain; charset=utf-8")
  if (!verbose) return res.end(failed.length === 0 ? "ok" : `failed: ${failed.map((c) => c.name).join(", ")}`)
  res.end(
    checks.map((c) => `[${c.ok() ? "+" : "-"}]${c.name} ${c.ok() ? "ok" : "failed"}`).join("\n") +
      `\n${failed.length === 0 ? "healthz check passed" : "check failed"}\n`,
  )
}

/** `/healthz` (liveness) and `/readyz` (readiness); `?verbose` lists each check. */
export const healthServer = (
  bind: { readonly host?: string | undefined; readonly port: number },
  probes: { readonly live: ReadonlyArray<Check>; readonly ready: ReadonlyArray<Check> },
) =>
  serve(bind, (req, res) => {
    const url = new URL(req.url ?? "/", "http://x")
    const verbose = url.searchParams.has("verbose")
    if (url.pathname === "/healthz" || url.pathname === "/livez") return void check(res, probes.live, verbose)
    if (url.pathname === "/readyz") return void check(res, probes.ready, verbose)
    res.statusCode = 404
    res.end("not found")
  })

/** `/metrics` in the Prometheus text format. */
export const metricsServer = (bind: { readonly host?: string | undefined; readonly port: number }, registry: Registry) =>
  serve(bind, async (req, res) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== "/metrics") {
      res.statusCode = 404
      return void res.end("not found")
    }
    res.setHeader("content-type", registry.contentType)
    res.end(await registry.metrics())
  })
