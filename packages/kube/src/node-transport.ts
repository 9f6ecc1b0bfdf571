/** The default backend: `node:https` (or `node:http`) with one keep-alive agent per connection. */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { Connection } from "./kubeconfig"
import type { Open } from "./transport"

export const nodeOpen = (conn: Connection): Open => {
  const url = new URL(conn.server)
  const secure = url.protocol === "https:"
  const agent = secure
    ? new HttpsAgent({
        keepAlive: true,
        maxSockets: 32,
        ca: conn.tls.ca,
        cert: conn.tls.cert,
        key: conn.tls.key,
        rejectUnauthorized: conn.tls.rejectUnauthorized,
        servername: conn.tls.servername,
      })
    : new HttpAgent({ keepAlive: true, maxSockets: 32 })
  const send = secure ? httpsRequest : httpRequest
  const prefix = url.pathname.replace(/\/+$/, "")
  return (method, path, headers, body, signal) =>
    new Promise((resolve, reject) => {
      const req = send(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port || (secure ? 443 : 80),
          path: prefix + path,
          method,
          agent,
          signal,
          headers: { ...headers, ...conn.headers(), ...(body === undefined ? {} : { "content-length": Buffer.byteLength(body) }) },
        },
        (res: IncomingMessage) => {
          const h: Record<string, string> = {}
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(", ") : v
          resolve({ status: res.statusCode ?? 0, headers: h, body: res })
        },
      )
      req.on("error", reject)
      req.end(body)
    })
}
