/**
 * The two Secrets, pure: Argo CD's repo-creds Secret (Argo CD 3.4's shape: label `argocd.argoproj.io/secret-type:
 * repo-creds`, `type: oci`, `url` = `oci://` + the registry prefix, matching the operator's native OCI sources that pin
 * each chart by digest, `username`/`password`) and the docker-config
 * Secret (`kubernetes.io/dockerconfigjson`) that the operator's pushing components mount. Both carry
 * `operator.aicr.run/token-expires-at`. Builders for `aws`, readers for what gather found, and the static check.
 */
import { ANNOTATION_TOKEN_EXPIRES_AT, type KubeObject } from "@aicr/api"
import { isLoopback, repoCredsUrl, type RegistryRef } from "./registry"

export const ARGOCD_SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
export const DOCKER_CONFIG_TYPE = "kubernetes.io/dockerconfigjson"
export const DOCKER_CONFIG_KEY = ".dockerconfigjson"

export type Secret = KubeObject & {
  readonly type?: string
  readonly data?: Readonly<Record<string, string>>
}

/** A registry login: ECR's is always user `AWS` with the token as password. */
export interface Login {
  readonly username: string
  readonly password: string
  /** RFC 3339, whole seconds. */
  readonly expiresAt: string
}

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64")
const unb64 = (s: string | undefined): string | undefined => (s === undefined ? undefined : Buffer.from(s, "base64").toString("utf8"))

export const dockerConfigJson = (host: string, login: Pick<Login, "username" | "password">): string =>
  JSON.stringify({ auths: { [host]: { username: login.username, password: login.password, auth: b64(`${login.username}:${login.password}`) } } })

/** The repo-creds Secret Argo CD 3.4.2 reads; `insecureOCIForceHttp` only for plain-HTTP (loopback) registries. */
export const repoCredsSecret = (registry: RegistryRef, at: { namespace: string; name: string }, login: Login) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: at.name,
    namespace: at.namespace,
    labels: { [ARGOCD_SECRET_TYPE_LABEL]: "repo-creds", "app.kubernetes.io/managed-by": "aicr-operator" },
    annotations: { [ANNOTATION_TOKEN_EXPIRES_AT]: login.expiresAt },
  },
  type: "Opaque",
  data: {
    url: b64(repoCredsUrl(registry)),
    type: b64("oci"),
    ...(isLoopback(registry.host) ? { insecureOCIForceHttp: b64("true") } : {}),
    username: b64(login.username),
    password: b64(login.password),
  },
})

export const dockerConfigSecret = (registry: RegistryRef, at: { namespace: string; name: string }, login: Login) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: at.name,
    namespace: at.namespace,
    labels: { "app.kubernetes.io/managed-by": "aicr-operator" },
    annotations: { [ANNOTATION_TOKEN_EXPIRES_AT]: login.expiresAt },
  },
  type: DOCKER_CONFIG_TYPE,
  data: { [DOCKER_CONFIG_KEY]: b64(dockerConfigJson(registry.host, login)) },
})

/** The `token-expires-at` annotation as epoch ms, or undefined when absent or not a time. */
export const expiresAtOf = (s: Secret | undefined): number | undefined => {
  const v = s?.metadata.annotations?.[ANNOTATION_TOKEN_EXPIRES_AT]
  const ms = v === undefined ? Number.NaN : Date.parse(v)
  return Number.isFinite(ms) ? ms : undefined
}

/**
 * True when both Secrets hold exactly what this refresher would write for `registry` and an expiry of `expiresAt`
 * (the password is not compared: any password under the right expiry is the one this process minted, or one minted
 * by an earlier leader for the same expiry).
 */
export const secretsCurrent = (registry: RegistryRef, repoCreds: Secret | undefined, dockerConfig: Secret | undefined, expiresAt: string): boolean => {
  if (repoCreds === undefined || dockerConfig === undefined) return false
  if (repoCreds.metadata.labels?.[ARGOCD_SECRET_TYPE_LABEL] !== "repo-creds") return false
  if (repoCreds.metadata.annotations?.[ANNOTATION_TOKEN_EXPIRES_AT] !== expiresAt) return false
  if (dockerConfig.metadata.annotations?.[ANNOTATION_TOKEN_EXPIRES_AT] !== expiresAt) return false
  const d = repoCreds.data ?? {}
  if (unb64(d["url"]) !== repoCredsUrl(registry) || unb64(d["type"]) !== "oci" || d["enableOCI"] !== undefined) return false
  const password = unb64(d["password"])
  if (unb64(d["username"]) === undefined || password === undefined || password === "") return false
  const entry = authFor(dockerConfig, registry.host)
  return dockerConfig.type === DOCKER_CONFIG_TYPE && entry.ok && entry.password === password
}

type AuthEntry = { readonly ok: true; readonly username: string; readonly password: string } | { readonly ok: false; readonly why: string }

/** The docker config's login for `host` (`auth` or `username`/`password`), or why there is none. */
export const authFor = (s: Secret, host: string): AuthEntry => {
  const raw = unb64(s.data?.[DOCKER_CONFIG_KEY])
  if (raw === undefined) return { ok: false, why: `it has no ${DOCKER_CONFIG_KEY} key` }
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return { ok: false, why: `its ${DOCKER_CONFIG_KEY} is not JSON` }
  }
  const auths = (parsed as { auths?: Record<string, { auth?: unknown; username?: unknown; password?: unknown }> } | null)?.auths
  const entry = auths?.[host] ?? auths?.[`https://${host}`] ?? auths?.[`http://${host}`]
  if (entry === undefined) return { ok: false, why: `its auths have no entry for ${host}` }
  if (typeof entry.auth === "string" && entry.auth !== "") {
    const decoded = unb64(entry.auth)!
    const i = decoded.indexOf(":")
    if (i > 0) return { ok: true, username: decoded.slice(0, i), password: decoded.slice(i + 1) }
  }
  if (typeof entry.username === "string" && typeof entry.password === "string" && entry.username !== "" && entry.password !== "") {
    return { ok: true, username: entry.username, password: entry.password }
  }
  return { ok: false, why: `its entry for ${host} has neither auth nor username and password` }
}

export type StaticCheck =
  { readonly _tag: "Present"; readonly expiresAt: number | undefined } | { readonly _tag: "Missing" } | { readonly _tag: "Invalid"; readonly why: string }

/** `static`: the admin's docker-config Secret exists, has the right type and holds a login for the registry host. */
export const checkStatic = (s: Secret | undefined, host: string): StaticCheck => {
  if (s === undefined) return { _tag: "Missing" }
  if (s.type !== DOCKER_CONFIG_TYPE) return { _tag: "Invalid", why: `its type is ${s.type ?? "Opaque"}, not ${DOCKER_CONFIG_TYPE}` }
  const entry = authFor(s, host)
  if (!entry.ok) return { _tag: "Invalid", why: entry.why }
  return { _tag: "Present", expiresAt: expiresAtOf(s) }
}
