/**
 * A small kubeconfig / in-cluster loader for the light transport. It understands what our controllers and tests use:
 * the in-cluster service account (token re-read from its file, so rotated bound tokens are picked up), and kubeconfig
 * users with `token`, `tokenFile`, client certificates, basic auth and `as` impersonation, with CA data or files and
 * `insecure-skip-tls-verify`. Anything else (exec plugins, auth providers, proxies, several KUBECONFIG files)
 * returns `undefined` and the caller falls back to client-node's `KubeConfig`.
 */
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, isAbsolute, join } from "node:path"

export interface Connection {
  readonly server: string
  readonly tls: {
    readonly ca?: string | Buffer | undefined
    readonly cert?: string | Buffer | undefined
    readonly key?: string | Buffer | undefined
    readonly rejectUnauthorized: boolean
    readonly servername?: string | undefined
  }
  /** Authentication headers; called per request (token files are re-read at most once a minute). */
  readonly headers: () => Record<string, string>
}

export interface ConfigSource {
  readonly kubeconfigPath?: string | undefined
  readonly inCluster?: boolean | undefined
  readonly context?: string | undefined
}

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

const tokenFrom = (file: string): (() => string) => {
  let cached = "",
    readAt = -Infinity
  return () => {
    if (performance.now() - readAt > 60_000) {
      cached = readFileSync(file, "utf8").trim()
      readAt = performance.now()
    }
    return cached
  }
}

const inCluster = (): Connection => {
  const host = process.env["KUBERNETES_SERVICE_HOST"]
  const port = process.env["KUBERNETES_SERVICE_PORT"] ?? "443"
  if (!host) throw new Error("in-cluster config: KUBERNETES_SERVICE_HOST is not set")
  const token = tokenFrom(join(SA_DIR, "token"))
  return {
    server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    tls: { ca: readFileSync(join(SA_DIR, "ca.crt")), rejectUnauthorized: true },
    headers: () => ({ authorization: `Bearer ${token()}` }),
  }
}

type Named<T> = ReadonlyArray<{ readonly name: string } & T>
interface RawConfig {
  readonly "current-context"?: string
  readonly clusters?: Named<{ readonly cluster: Record<string, unknown> }>
  readonly users?: Named<{ readonly user: Record<string, unknown> }>
  readonly contexts?: Named<{ readonly context: { readonly cluster: string; readonly user: string } }>
}

/** Parse kubeconfig text: JSON directly, YAML through the `yaml` package (loaded only when needed; see ./yaml). */
const parse = async (text: string): Promise<RawConfig> => {
  const t = text.trimStart()
  if (t.startsWith("{")) return JSON.parse(t) as RawConfig
  const { parse: parseYaml } = await import("./yaml")
  return parseYaml(text) as RawConfig
}

const SUPPORTED_USER_KEYS = new Set([
  "token",
  "tokenFile",
  "client-certificate",
  "client-certificate-data",
  "client-key",
  "client-key-data",
  "username",
  "password",
  "as",
])
const SUPPORTED_CLUSTER_KEYS = new Set([
  "server",
  "certificate-authority",
  "certificate-authority-data",
  "insecure-skip-tls-verify",
  "tls-server-name",
  "extensions",
])

/** `undefined` when the source needs client-node (unsupported auth or several KUBECONFIG files). */
export const loadConnection = async (source: ConfigSource): Promise<Connection | undefined> => {
  if (source.inCluster) return inCluster()
  const env = process.env["KUBECONFIG"]
  if (!source.kubeconfigPath && env?.includes(":")) return undefined
  const path = source.kubeconfigPath || env || join(homedir(), ".kube", "config")
  const raw = await parse(readFileSync(path, "utf8"))
  const ctxName = source.context ?? raw["current-context"]
  const ctx = raw.contexts?.find((c) => c.name === ctxName)?.context
  if (!ctx) throw new Error(`kubeconfig ${path}: no context "${ctxName}"`)
  const cluster = raw.clusters?.find((c) => c.name === ctx.cluster)?.cluster
  const user = raw.users?.find((u) => u.name === ctx.user)?.user ?? {}
  if (!cluster) throw new Error(`kubeconfig ${path}: no cluster "${ctx.cluster}"`)
  if (Object.keys(user).some((k) => !SUPPORTED_USER_KEYS.has(k)) || Object.keys(cluster).some((k) => !SUPPORTED_CLUSTER_KEYS.has(k))) return undefined
  const file = (p: unknown) => readFileSync(isAbsolute(String(p)) ? String(p) : join(dirname(path), String(p)))
  const data = (inline: unknown, fileRef: unknown) => (inline ? Buffer.from(String(inline), "base64") : fileRef ? file(fileRef) : undefined)
  const token = user["token"]
    ? () => String(user["token"])
    : user["tokenFile"]
      ? tokenFrom(isAbsolute(String(user["tokenFile"])) ? String(user["tokenFile"]) : join(dirname(path), String(user["tokenFile"])))
      : undefined
  const basic = user["username"] ? `Basic ${Buffer.from(`${String(user["username"])}:${String(user["password"] ?? "")}`).toString("base64")}` : undefined
  const impersonate = user["as"] ? String(user["as"]) : undefined
  return {
    server: String(cluster["server"]).replace(/\/+$/, ""),
    tls: {
      ca: data(cluster["certificate-authority-data"], cluster["certificate-authority"]),
      cert: data(user["client-certificate-data"], user["client-certificate"]),
      key: data(user["client-key-data"], user["client-key"]),
      rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
      servername: cluster["tls-server-name"] ? String(cluster["tls-server-name"]) : undefined,
    },
    headers: () => ({
      ...(token ? { authorization: `Bearer ${token()}` } : basic ? { authorization: basic } : {}),
      ...(impersonate ? { "impersonate-user": impersonate } : {}),
    }),
  }
}
