// The kubelet API's containerLogs endpoint for the pods the process kubelet runs, so `kubectl logs` and the
// pods/log subresource work: the API server proxies GET /containerLogs/<ns>/<pod>/<container> to the node's
// kubelet endpoint, which kwok publishes as 127.0.0.1:<this port> for every fake node. Pods kwok fakes have no logs.
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { createServer, type Server } from "node:https"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

export interface LogQuery {
  readonly tailLines?: number
  readonly limitBytes?: number
}

/** The part of a log the query selects: the last tailLines lines, then at most limitBytes bytes. */
export const selectLog = (text: string, q: LogQuery): string => {
  let out = text
  if (q.tailLines !== undefined) {
    const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n")
    out = q.tailLines <= 0 ? "" : lines.slice(-q.tailLines).join("\n") + (text ? "\n" : "")
  }
  if (q.limitBytes !== undefined) out = Buffer.from(out).subarray(0, q.limitBytes).toString()
  return out
}

/** The newest pod directory of namespace/pod under the kubelet's pods/ (one per pod UID). */
const podDir = (podsDir: string, ns: string, pod: string): string | undefined => {
  if (!existsSync(podsDir)) return undefined
  const prefix = `${ns}_${pod}_`
  const dirs = readdirSync(podsDir).filter((d) => d.startsWith(prefix))
  return dirs.map((d) => join(podsDir, d)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
}

export const serveContainerLogs = (opts: {
  port: number
  certFile: string
  keyFile: string
  podsDir: string
  isRunning: (ns: string, pod: string) => boolean
}): Promise<Server> => {
  const server = createServer({ cert: readFileSync(opts.certFile), key: readFileSync(opts.keyFile) }, (req, res) => {
    const url = new URL(req.url ?? "/", "https://kubelet")
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname)
    if (req.method !== "GET" || !m) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`the process kubelet serves only /containerLogs/<namespace>/<pod>/<container>\n`)
      return
    }
    const [ns, pod, container] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), decodeURIComponent(m[3]!)]
    const dir = podDir(opts.podsDir, ns, pod)
    const file = dir && join(dir, "logs", `${container}.log`)
    if (!file || !existsSync(file)) {
      res
        .writeHead(404, { "content-type": "text/plain" })
        .end(`no logs for container "${container}" of pod ${ns}/${pod} (only pods the process kubelet runs have logs)\n`)
      return
    }
    const num = (k: string) => (url.searchParams.has(k) ? Number(url.searchParams.get(k)) : undefined)
    const q: LogQuery = { tailLines: num("tailLines"), limitBytes: num("limitBytes") }
    res.writeHead(200, { "content-type": "text/plain" })
    const text = readFileSync(file, "utf8")
    res.write(selectLog(text, q))
    if (url.searchParams.get("follow") !== "true" || q.limitBytes !== undefined) {
      res.end()
      return
    }
    // follow: stream what gets appended until the pod's processes ended.
    void (async () => {
      let offset = Buffer.byteLength(text)
      while (!res.destroyed) {
        const size = statSync(file).size
        if (size > offset) {
          await new Promise<void>((resolve) =>
            createReadStream(file, { start: offset, end: size - 1 })
              .on("end", resolve)
              .pipe(res, { end: false }),
          )
          offset = size
        } else if (!opts.isRunning(ns, pod)) break
        else await sleep(200)
      }
      res.end()
    })()
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(opts.port, "127.0.0.1", () => resolve(server))
  })
}
