import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probeOnce, probePort, runProber } from "./probes"

let server: Server
let port = 0
let healthy = true
beforeAll(async () => {
  server = createServer((req, res) => res.writeHead(req.url === "/readyz" && healthy ? 200 : 503).end(req.headers["x-probe"] ?? ""))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const target = (container: unknown = { name: "c", ports: [{ name: "health", containerPort: 0 }] }) => ({
  podIP: "127.0.0.1",
  container,
  pid: process.pid,
  uid: 0,
  gid: 0,
})

describe("process kubelet: probes", () => {
  it("httpGet succeeds on 2xx/3xx at the pod IP, by port number or name", async () => {
    expect(await probeOnce({ httpGet: { path: "/readyz", port } }, target())).toEqual({ ok: true })
    expect(await probeOnce({ httpGet: { path: "/readyz", port: "health" } }, target({ name: "c", ports: [{ name: "health", containerPort: port }] }))).toEqual({
      ok: true,
    })
    expect(await probeOnce({ httpGet: { path: "/nope", port } }, target())).toEqual({ ok: false, message: "HTTP probe failed with statuscode: 503" })
    expect(() => probePort("metrics", { name: "c", ports: [] })).toThrow(/port metrics is not a named port of container c/)
  })

  it("tcpSocket succeeds when a connection opens and fails when refused", async () => {
    expect(await probeOnce({ tcpSocket: { port } }, target())).toEqual({ ok: true })
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const p = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    expect((await probeOnce({ tcpSocket: { port: p } }, target())).ok).toBe(false)
  })

  it("reports readiness once successThreshold passes and loss after failureThreshold failures in a row", async () => {
    const changes: boolean[] = []
    const abort = new AbortController()
    healthy = true
    const done = runProber(
      { httpGet: { path: "/readyz", port }, periodSeconds: 0.05, successThreshold: 2, failureThreshold: 2 },
      () => target(),
      (ok) => {
        changes.push(ok)
        if (changes.length === 1) healthy = false
        else abort.abort()
      },
      abort.signal,
    )
    await done
    expect(changes).toEqual([true, false])
  })
})
