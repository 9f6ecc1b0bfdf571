// A raw HTTPS client for the harness apiserver (token auth, the harness CA), independent of packages/kube, plus the
// helpers built on it: discovery, server-side apply of manifests, ServiceAccount tokens, kubeconfigs, audit events.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { Agent, request } from "undici"
import { writeKubeconfig } from "./auth"
import { loadManifests } from "./manifests"
import { HarnessError, ensureDir } from "./proc"
import type { HarnessInfo, KubeTarget } from "./types"

export interface KubeRequest {
  readonly method: string
  /** Path with optional query, e.g. /api/v1/namespaces?labelSelector=a%3Db */
  readonly path: string
  /** Objects are sent as JSON; strings as they are. */
  readonly body?: unknown
  /** Default: application/json (application/merge-patch+json for PATCH). */
  readonly contentType?: string
  /** Key of info.users (default "admin"). */
  readonly user?: string
  readonly impersonate?: { readonly user: string; readonly groups?: readonly string[] }
  readonly headers?: Record<string, string>
  readonly timeoutMs?: number
}

export interface KubeResponse {
  readonly status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw API objects; tests index into them freely
  readonly body: any
}

const agents = new Map<string, Agent>()

/** One keep-alive agent per CA bundle (the file's content, so a re-created dir gets a fresh agent). */
export const agentFor = (caFile: string): Agent => {
  const ca = readFileSync(caFile, "utf8")
  let a = agents.get(ca)
  if (!a) {
    // HTTP/1.1 only: over h2, undici joins repeated headers into one value, which breaks multi-group impersonation.
    a = new Agent({ connect: { ca }, allowH2: false, keepAliveTimeout: 4_000, connections: 16 })
    agents.set(ca, a)
  }
  return a
}

const isSocketError = (e: unknown): boolean =>
  e instanceof Error && /UND_ERR_SOCKET|ECONNRESET|other side closed/i.test(`${(e as { code?: string }).code ?? ""} ${e.message}`)

export const kubeRequest = async (info: KubeTarget, req: KubeRequest): Promise<KubeResponse> => {
  const user = info.users[req.user ?? "admin"]
  if (!user) throw new HarnessError(`kubeRequest: no user ${req.user} (have ${Object.keys(info.users).join(", ")})`)
  const headers: Record<string, string | string[]> = { authorization: `Bearer ${user.token}`, accept: "application/json", ...req.headers }
  if (req.impersonate) {
    headers["impersonate-user"] = req.impersonate.user
    if (req.impersonate.groups?.length) headers["impersonate-group"] = [...req.impersonate.groups]
  }
  let body: string | undefined
  if (req.body !== undefined) {
    body = typeof req.body === "string" ? req.body : JSON.stringify(req.body)
    headers["content-type"] = req.contentType ?? (req.method.toUpperCase() === "PATCH" ? "application/merge-patch+json" : "application/json")
  }
  const timeout = req.timeoutMs ?? 30_000
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await request(`${info.server}${req.path}`, {
        method: req.method.toUpperCase() as "GET",
        headers,
        body,
        dispatcher: agentFor(info.caFile),
        headersTimeout: timeout,
        bodyTimeout: timeout,
      })
      const text = await res.body.text()
      // 429 "storage is (re)initializing": a custom resource's storage is rebuilt while its CRD changes (a test on the
      // shared control plane edits one). Clients retry a 429; so does the harness, for a few seconds.
      if (res.statusCode === 429 && attempt < 20) {
        await new Promise((r) => setTimeout(r, 500))
        continue
      }
      const type = String(res.headers["content-type"] ?? "")
      let parsed: unknown = text
      if (type.includes("json") && text) parsed = JSON.parse(text)
      return { status: res.statusCode, body: parsed }
    } catch (e) {
      // A keep-alive connection to an apiserver that was restarted: retry reads once on a fresh socket.
      if (attempt === 0 && req.method.toUpperCase() === "GET" && isSocketError(e)) continue
      throw e
    }
  }
}

/** Throws unless the response status is 2xx; returns the body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const expectOk = (res: KubeResponse, what: string): any => {
  if (res.status < 200 || res.status > 299) {
    const msg = typeof res.body === "object" && res.body ? (res.body.message ?? JSON.stringify(res.body)) : String(res.body)
    throw new HarnessError(`${what}: HTTP ${res.status}: ${msg}`)
  }
  return res.body
}

/** Polls fn until it returns a value other than undefined/false. */
export const eventually = async <A>(
  fn: () => Promise<A | undefined | false>,
  opts: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly what?: string } = {},
): Promise<A> => {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000)
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v !== undefined && v !== false) return v
    } catch (e) {
      last = e
    }
    if (Date.now() > deadline) {
      throw new HarnessError(`timed out waiting for ${opts.what ?? "condition"}${last instanceof Error ? `: ${last.message}` : ""}`)
    }
    await sleep(opts.intervalMs ?? 200)
  }
}

// ---- discovery -------------------------------------------------------------------------------------------------

interface ApiResource {
  readonly name: string
  readonly kind: string
  readonly namespaced: boolean
}

const discovery = new Map<string, ApiResource[]>()

/** Plural resource name and scope of apiVersion/kind, from the apiserver's discovery (cached; a miss refreshes). */
export const resourceFor = async (info: KubeTarget, apiVersion: string, kind: string): Promise<ApiResource | undefined> => {
  const key = `${info.server} ${apiVersion}`
  const find = () => discovery.get(key)?.find((r) => r.kind === kind && !r.name.includes("/"))
  const hit = find()
  if (hit) return hit
  const res = await kubeRequest(info, { method: "GET", path: apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}` })
  if (res.status === 404) return undefined
  discovery.set(key, (expectOk(res, `discovery of ${apiVersion}`) as { resources: ApiResource[] }).resources)
  return find()
}

export interface ObjectRef {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata?: { readonly name?: string; readonly namespace?: string }
}

/** REST path of an object (or of its collection when it has no name). Namespaced objects default to "default". */
export const objectPath = async (info: KubeTarget, obj: ObjectRef): Promise<string> => {
  const r = await resourceFor(info, obj.apiVersion, obj.kind)
  if (!r) throw new HarnessError(`no resource for ${obj.apiVersion} ${obj.kind} on ${info.server}`)
  const base = obj.apiVersion.includes("/") ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`
  const ns = r.namespaced ? `/namespaces/${obj.metadata?.namespace ?? "default"}` : ""
  return `${base}${ns}/${r.name}${obj.metadata?.name ? `/${obj.metadata.name}` : ""}`
}

// ---- apply -------------------------------------------------------------------------------------------------------

export const FIELD_MANAGER = "aicr-test-harness"

export interface ApplyOptions {
  readonly fieldManager?: string
  readonly user?: string
  /** How long to wait for CRDs to be Established and served (default 60 s). */
  readonly timeoutMs?: number
}

const isCrd = (o: ObjectRef) => o.kind === "CustomResourceDefinition" && o.apiVersion.startsWith("apiextensions.k8s.io/")

/**
 * Deletes the cluster-scoped objects among `objects` (a namespaced one goes with its namespace) and waits until each
 * is gone: what a file applied on the tier's shared plane must not outlive it, since a later file's `helm install`
 * may own the same names (the chart's ClusterRoleBinding `aicr-node-reader` is AICR's fixed name).
 */
export const deleteClusterScoped = async (info: KubeTarget, objects: readonly unknown[]): Promise<void> => {
  for (const o of objects as ObjectRef[]) {
    if (o.metadata?.namespace !== undefined || o.kind === "Namespace" || !o.metadata?.name) continue
    const path = await objectPath(info, o)
    const res = await kubeRequest(info, { method: "DELETE", path })
    if (res.status !== 404) expectOk(res, `delete ${o.kind} ${o.metadata.name}`)
    await eventually(async () => (await kubeRequest(info, { method: "GET", path })).status === 404, { what: `${o.kind} ${o.metadata.name} gone` })
  }
}

/** Server-side applies raw objects (or a YAML file / directory of *.yaml|*.yml) with force; waits for CRDs. */
export const applyManifests = async (info: KubeTarget, objects: readonly unknown[] | string, opts: ApplyOptions = {}): Promise<void> => {
  const all = (typeof objects === "string" ? loadManifests(objects) : [...objects]) as ObjectRef[]
  const crds = all.filter(isCrd)
  const namespaces = all.filter((o) => o.kind === "Namespace" && o.apiVersion === "v1")
  const rest = all.filter((o) => !crds.includes(o) && !namespaces.includes(o))
  const timeoutMs = opts.timeoutMs ?? 60_000
  const apply = async (obj: ObjectRef) => {
    if (!obj.metadata?.name) throw new HarnessError(`applyManifests: ${obj.apiVersion} ${obj.kind} has no metadata.name`)
    // A just-established CRD can take a moment to show up in discovery.
    const path = await eventually(async () => (await resourceFor(info, obj.apiVersion, obj.kind)) && objectPath(info, obj), {
      timeoutMs,
      what: `discovery of ${obj.apiVersion} ${obj.kind}`,
    })
    const q = `fieldManager=${encodeURIComponent(opts.fieldManager ?? FIELD_MANAGER)}&force=true`
    const res = await kubeRequest(info, { method: "PATCH", path: `${path}?${q}`, body: obj, contentType: "application/apply-patch+yaml", user: opts.user })
    expectOk(res, `apply ${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name}`)
  }
  for (const o of crds) await apply(o)
  for (const o of crds) {
    await eventually(
      async () => {
        const res = await kubeRequest(info, { method: "GET", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${o.metadata!.name}` })
        const conds = (expectOk(res, "get CRD").status?.conditions ?? []) as { type: string; status: string }[]
        return conds.some((c) => c.type === "Established" && c.status === "True")
      },
      { timeoutMs, what: `CRD ${o.metadata!.name} Established` },
    )
  }
  for (const o of namespaces) await apply(o)
  for (const o of rest) await apply(o)
}

// ---- ServiceAccount tokens, kubeconfigs, audit ---------------------------------------------------------------------

export interface TokenOptions {
  readonly audiences?: readonly string[]
  readonly expirationSeconds?: number
  /** Create the ServiceAccount when it does not exist (default true). */
  readonly create?: boolean
}

/** A token for namespace/name from the TokenRequest API. */
export const createServiceAccountToken = async (info: KubeTarget, namespace: string, name: string, opts: TokenOptions = {}): Promise<string> => {
  const sa = `/api/v1/namespaces/${namespace}/serviceaccounts`
  if (opts.create ?? true) {
    const res = await kubeRequest(info, { method: "POST", path: sa, body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } } })
    if (res.status !== 409) expectOk(res, `create ServiceAccount ${namespace}/${name}`)
  }
  const res = await kubeRequest(info, {
    method: "POST",
    path: `${sa}/${name}/token`,
    body: {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: opts.audiences ? [...opts.audiences] : [], expirationSeconds: opts.expirationSeconds ?? 3600 },
    },
  })
  return expectOk(res, `TokenRequest for ${namespace}/${name}`).status.token as string
}

/** Path of a kubeconfig whose only context authenticates as info.users[userKey]. */
export const kubeconfigFor = async (info: HarnessInfo, userKey: string): Promise<string> => {
  const u = info.users[userKey]
  if (!u) throw new HarnessError(`kubeconfigFor: no user ${userKey} (have ${Object.keys(info.users).join(", ")})`)
  const path = join(ensureDir(join(info.dir, "kubeconfigs")), `${userKey}.kubeconfig`)
  return writeKubeconfig(path, info.server, info.caFile, [{ name: userKey, token: u.token }])
}

export interface AuditEvent {
  readonly auditID: string
  readonly verb: string
  readonly user: { readonly username: string; readonly groups?: string[] }
  readonly impersonatedUser?: { readonly username: string }
  readonly objectRef?: {
    readonly resource?: string
    readonly namespace?: string
    readonly name?: string
    readonly apiGroup?: string
    readonly subresource?: string
  }
  readonly responseStatus?: { readonly code?: number }
  readonly requestURI: string
  readonly stage?: string
  readonly userAgent?: string
  readonly stageTimestamp: string
}

/** Audit events (writes, and the reads of AUDIT_READS_GROUP: see the policy) matching every given field. */
export const readAuditEvents = (
  info: Pick<HarnessInfo, "auditLog">,
  match: { verb?: string; resource?: string; namespace?: string; name?: string; username?: string } = {},
): AuditEvent[] =>
  readFileSync(info.auditLog, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter(
      (e) =>
        (match.verb === undefined || e.verb === match.verb) &&
        (match.resource === undefined || e.objectRef?.resource === match.resource) &&
        (match.namespace === undefined || e.objectRef?.namespace === match.namespace) &&
        (match.name === undefined || e.objectRef?.name === match.name) &&
        (match.username === undefined || e.user.username === match.username),
    )

/**
 * A controller's successful writes of the objects of one resource (as `username`, from the audit log): creates and
 * patches (server-side applies, with or without force) of the object itself, not of its status, counted by object name;
 * `since` (RFC 3339) keeps the later ones only. A refused write (a repeat the API server turned away: AlreadyExists,
 * Conflict) does not count. A controller that writes each object once counts 1 per name; a repeated write counts twice.
 */
export const writesByName = (
  info: Pick<HarnessInfo, "auditLog">,
  match: { resource: string; namespace?: string; username: string; since?: string },
): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const e of readAuditEvents(info, {
    resource: match.resource,
    username: match.username,
    ...(match.namespace !== undefined ? { namespace: match.namespace } : {}),
  })) {
    if (e.verb !== "create" && e.verb !== "patch") continue
    if (e.objectRef?.subresource !== undefined) continue
    if (e.responseStatus?.code !== undefined && e.responseStatus.code >= 300) continue
    if (match.since !== undefined && e.stageTimestamp < match.since) continue
    const name = e.objectRef?.name ?? "?"
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  return counts
}

/** Creates a namespace named `${prefix}-<random>` (with labels) and returns its name. */
export const createNamespace = async (info: KubeTarget, prefix = "t", labels: Record<string, string> = {}): Promise<string> => {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`
  const res = await kubeRequest(info, { method: "POST", path: "/api/v1/namespaces", body: { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } } })
  expectOk(res, `create namespace ${name}`)
  return name
}
