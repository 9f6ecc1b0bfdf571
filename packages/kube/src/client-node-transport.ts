/**
 * The fallback backend: client-node's `KubeConfig` for authentication and TLS (exec plugins, OIDC, auth providers,
 * proxies) and undici's `fetch`. Loaded lazily, so processes that do not need it never pay for it in memory.
 *
 * Gotcha: client-node 2.0.1 builds a *new* undici Agent in every `applySecurityAuthentication` call. We take the
 * headers from each call (tokens rotate) but keep the first dispatcher, so connections are pooled and reused.
 */
import { KubeConfig, RequestContext, type HttpMethod } from "@kubernetes/client-node"
import { fetch, type Dispatcher } from "undici"
import type { ConfigSource } from "./kubeconfig"
import type { Open } from "./transport"

export const loadKubeConfig = (source: ConfigSource): KubeConfig => {
  const kc = new KubeConfig()
  if (source.inCluster) kc.loadFromCluster()
  else if (source.kubeconfigPath) kc.loadFromFile(source.kubeconfigPath)
  else kc.loadFromDefault()
  if (source.context) kc.setCurrentContext(source.context)
  return kc
}

export const clientNodeOpen = (source: ConfigSource): { server: string; open: Open } => {
  const kc = loadKubeConfig(source)
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new Error("kubeconfig has no current cluster")
  const server = cluster.server.replace(/\/+$/, "")
  let dispatcher: Dispatcher | undefined
  let known = false
  const open: Open = async (method, path, headers, body, signal) => {
    const ctx = new RequestContext(server + path, method as HttpMethod)
    await kc.applySecurityAuthentication(ctx)
    if (!known) {
      dispatcher = ctx.getDispatcher() as Dispatcher | undefined
      known = true
    }
    const res = await fetch(server + path, { method, headers: { ...ctx.getHeaders(), ...headers }, dispatcher, body, signal })
    const h: Record<string, string> = {}
    res.headers.forEach((v, k) => (h[k] = v))
    const empty: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: async function* () {} }
    return { status: res.status, headers: h, body: (res.body as AsyncIterable<Uint8Array> | null) ?? empty }
  }
  return { server, open }
}
