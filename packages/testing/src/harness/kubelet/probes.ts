// Container probes as a kubelet runs them: httpGet (2xx/3xx is success; HTTPS without verifying), tcpSocket (a
// connection opens) and exec (the command exits 0, run inside the container's namespaces and root as its user), each
// with its timeout, period, initial delay and success/failure thresholds. A prober reports each transition of its
// probe's verdict; the kubelet turns readiness into the Ready condition and a failed liveness into a restart.
/* eslint-disable @typescript-eslint/no-explicit-any -- raw core/v1 probe objects */
import { execFile } from "node:child_process"
import { connect } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { Agent, request } from "undici"

export interface ProbeTarget {
  /** The pod's IP: httpGet and tcpSocket go there unless the probe names a host. */
  readonly podIP: string
  readonly container: any
  /** The container's process (exec probes enter its namespaces and root). */
  readonly pid: number
  readonly uid: number
  readonly gid: number
}

export interface ProbeOutcome {
  readonly ok: boolean
  readonly message?: string
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } })

/** A probe's port: a number, or the name of one of the container's ports. */
export const probePort = (port: number | string, container: any): number => {
  if (typeof port === "number") return port
  if (/^\d+$/.test(port)) return Number(port)
  const named = (container.ports ?? []).find((p: any) => p.name === port)
  if (!named) throw new Error(`port ${port} is not a named port of container ${container.name}`)
  return named.containerPort
}

/** Runs a probe once. */
export const probeOnce = async (probe: any, t: ProbeTarget): Promise<ProbeOutcome> => {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000
  try {
    if (probe.httpGet) {
      const g = probe.httpGet
      const scheme = String(g.scheme ?? "HTTP").toLowerCase()
      const host = g.host ?? t.podIP
      const url = `${scheme}://${host.includes(":") ? `[${host}]` : host}:${probePort(g.port, t.container)}${g.path ?? "/"}`
      const headers = Object.fromEntries((g.httpHeaders ?? []).map((h: any) => [h.name, h.value]))
      const res = await request(url, {
        headers: { "user-agent": "kube-probe/1.35", ...headers },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        ...(scheme === "https" ? { dispatcher: insecure } : {}),
      })
      await res.body.dump()
      return res.statusCode >= 200 && res.statusCode < 400 ? { ok: true } : { ok: false, message: `HTTP probe failed with statuscode: ${res.statusCode}` }
    }
    if (probe.tcpSocket) {
      const port = probePort(probe.tcpSocket.port, t.container)
      const host = probe.tcpSocket.host ?? t.podIP
      await new Promise<void>((resolve, reject) => {
        const sock = connect({ host, port, timeout: timeoutMs })
        sock.once("connect", () => (sock.destroy(), resolve()))
        sock.once("timeout", () => (sock.destroy(), reject(new Error(`dial tcp ${host}:${port}: i/o timeout`))))
        sock.once("error", reject)
      })
      return { ok: true }
    }
    if (probe.exec) {
      const cmd: string[] = probe.exec.command ?? []
      const ids = t.uid === 0 && t.gid === 0 ? [] : ["--setuid", String(t.uid), "--setgid", String(t.gid)]
      return await new Promise((resolve) => {
        execFile(
          "nsenter",
          ["--target", String(t.pid), "--mount", "--uts", "--root", "--wd", ...ids, "--", ...cmd],
          { timeout: timeoutMs },
          (err, stdout, stderr) => resolve(err ? { ok: false, message: `${(stdout + stderr).trim() || err.message}`.slice(0, 1024) } : { ok: true }),
        )
      })
    }
    return { ok: false, message: "probe has no handler (httpGet, tcpSocket or exec)" }
  } catch (e) {
    return { ok: false, message: e instanceof Error ? e.message : String(e) }
  }
}

/**
 * Runs `probe` until `signal` aborts: first after initialDelaySeconds, then every periodSeconds, reporting each
 * change of verdict once successThreshold successes or failureThreshold failures in a row decided it. `initial` is
 * the verdict before the first decision (a readiness probe starts not ready).
 */
export const runProber = async (
  probe: any,
  target: () => ProbeTarget,
  onChange: (ok: boolean, message?: string) => void,
  signal: AbortSignal,
  initial = false,
): Promise<void> => {
  const success = probe.successThreshold ?? 1
  const failure = probe.failureThreshold ?? 3
  let verdict = initial
  let ok = 0
  let bad = 0
  try {
    await sleep((probe.initialDelaySeconds ?? 0) * 1000, undefined, { signal })
    while (!signal.aborted) {
      const r = await probeOnce(probe, target())
      if (signal.aborted) return
      if (r.ok) {
        ok++
        bad = 0
        if (!verdict && ok >= success) {
          verdict = true
          onChange(true)
        }
      } else {
        bad++
        ok = 0
        if (verdict && bad >= failure) {
          verdict = false
          onChange(false, r.message)
        }
      }
      await sleep((probe.periodSeconds ?? 10) * 1000, undefined, { signal })
    }
  } catch (e) {
    if (!signal.aborted) throw e
  }
}
