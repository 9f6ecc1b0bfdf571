// The plane's cluster egress and the webhook stand-in (docs/local-control-plane.md, "What kwok cannot run").
//
// kube-apiserver reaches admission webhooks, CRD conversion webhooks, aggregated APIs and kubelets through its
// egress selector's `cluster` network: here an HTTP CONNECT proxy on a unix socket in the plane dir. On kwok nodes no
// container runs, so a Service whose pods are kwok's has nothing behind it: every webhook it serves would fail, and
// an object it intercepts would be refused. The stand-in answers those in place of the pods:
//
// - a CONNECT to the ClusterIP:port of a Service that a webhook configuration, a CRD conversion or an APIService names
//   is answered here, over TLS with a certificate for `<service>.<namespace>.svc` signed by the stand-in's CA: every
//   AdmissionReview is allowed unchanged (no patch), a ConversionReview gets its objects back with only apiVersion set
//   to the one asked for, an aggregated API's discovery (`/apis/<group>/<version>`) lists no resources;
// - as cert-manager's cainjector, kube-webhook-certgen's patch Job or a controller's cert rotator would, it writes its
//   CA into the `caBundle` of every webhook, conversion and APIService that names a Service (field manager
//   `aicr-harness-webhook-stand-in`), so the API server trusts it;
// - any other CONNECT (the process kubelet's API on 127.0.0.1 for pods/log) is tunnelled to where it asks.
//
// It admits everything: it checks nothing a real webhook would. Each answer is logged as one JSON line. The same
// process writes the statuses Argo CD's health checks wait for from controllers kwok does not run (statuses.ts).
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { connect, type Socket } from "node:net"
import { rmSync } from "node:fs"
import { setTimeout as sleep } from "node:timers/promises"
import { createSecureContext, type SecureContext, TLSSocket } from "node:tls"
import { kubeRequest } from "../kube"
import type { KubeTarget } from "../types"
import { standInPki } from "./certs"
import { standInStatuses } from "./statuses"

export const STAND_IN_FIELD_MANAGER = "aicr-harness-webhook-stand-in"

export interface StandInOptions {
  readonly target: KubeTarget
  /** Key of the stand-in's identity in target.users. */
  readonly user: string
  /** Where the CA and serving certificates are kept. */
  readonly dir: string
  /** The unix socket the API server's egress selector dials. */
  readonly socket: string
  /** How often webhook configurations, APIServices and CRDs are checked for a caBundle to write (default 1 s). */
  readonly intervalMs?: number
  readonly log?: (line: Record<string, unknown>) => void
}

export interface StandIn {
  stop(): Promise<void>
}

interface ServiceRef {
  readonly namespace: string
  readonly name: string
}

interface ClientConfig {
  readonly service?: { readonly namespace: string; readonly name: string; readonly port?: number }
  readonly caBundle?: string
}

type Obj = {
  metadata: { name: string; resourceVersion?: string }
  spec?: Record<string, unknown>
  webhooks?: Array<{ name: string; clientConfig?: ClientConfig }>
}

const key = (s: ServiceRef) => `${s.namespace}/${s.name}`

export const startWebhookStandIn = async (opts: StandInOptions): Promise<StandIn> => {
  const pki = standInPki(opts.dir)
  const log = opts.log ?? ((line) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`))
  const req = (r: Parameters<typeof kubeRequest>[1]) => kubeRequest(opts.target, { ...r, user: opts.user })

  // Services by ClusterIP:port, and the Services some webhook, conversion or APIService names (with their API groups).
  let services = new Map<string, ServiceRef>()
  let servicesAt = 0
  let named = new Map<string, Set<string>>()
  const refreshServices = async () => {
    const res = await req({ method: "GET", path: "/api/v1/services" })
    if (res.status !== 200) return
    const next = new Map<string, ServiceRef>()
    for (const s of (
      res.body as { items: Array<{ metadata: { namespace: string; name: string }; spec: { clusterIP?: string; ports?: Array<{ port: number }> } }> }
    ).items) {
      const ip = s.spec.clusterIP
      if (ip === undefined || ip === "None" || ip === "") continue
      for (const p of s.spec.ports ?? []) next.set(`${ip}:${p.port}`, { namespace: s.metadata.namespace, name: s.metadata.name })
    }
    services = next
    servicesAt = Date.now()
  }

  // caBundle: webhook configurations and APIServices are small and listed whole; CRDs (up to 913 KB each) are listed
  // as metadata and read whole only when their resourceVersion moved.
  const crdSeen = new Map<string, string>()
  const patch = async (path: string, body: unknown, type: string, what: string) => {
    const res = await req({ method: "PATCH", path: `${path}?fieldManager=${STAND_IN_FIELD_MANAGER}`, body, contentType: type })
    if (res.status === 200) log({ msg: "Wrote caBundle", object: what })
  }
  let next = new Map<string, Set<string>>()
  const refer = (svc: ClientConfig["service"], group?: string) => {
    if (svc === undefined) return
    const k = key(svc)
    const groups = next.get(k) ?? new Set<string>()
    if (group !== undefined) groups.add(group)
    next.set(k, groups)
  }
  const sweep = async () => {
    next = new Map()
    for (const kind of ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]) {
      const res = await req({ method: "GET", path: `/apis/admissionregistration.k8s.io/v1/${kind}` })
      if (res.status !== 200) continue
      for (const o of (res.body as { items: Obj[] | null }).items ?? []) {
        const ops: unknown[] = []
        for (const [i, w] of (o.webhooks ?? []).entries()) {
          refer(w.clientConfig?.service)
          if (w.clientConfig?.service !== undefined && w.clientConfig.caBundle !== pki.caBundle) {
            ops.push(
              { op: "test", path: `/webhooks/${i}/name`, value: w.name },
              { op: "add", path: `/webhooks/${i}/clientConfig/caBundle`, value: pki.caBundle },
            )
          }
        }
        if (ops.length > 0)
          await patch(`/apis/admissionregistration.k8s.io/v1/${kind}/${o.metadata.name}`, ops, "application/json-patch+json", `${kind}/${o.metadata.name}`)
      }
    }
    const apis = await req({ method: "GET", path: "/apis/apiregistration.k8s.io/v1/apiservices" })
    if (apis.status === 200) {
      for (const o of (
        apis.body as { items: Array<Obj & { spec: { service?: ClientConfig["service"]; group?: string; caBundle?: string; insecureSkipTLSVerify?: boolean } }> }
      ).items) {
        if (o.spec.service == null) continue
        refer(o.spec.service, o.spec.group)
        if (o.spec.insecureSkipTLSVerify !== true && o.spec.caBundle !== pki.caBundle) {
          await patch(
            `/apis/apiregistration.k8s.io/v1/apiservices/${o.metadata.name}`,
            { spec: { caBundle: pki.caBundle } },
            "application/merge-patch+json",
            `apiservices/${o.metadata.name}`,
          )
        }
      }
    }
    const crds = await req({
      method: "GET",
      path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      headers: { accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1" },
    })
    if (crds.status === 200) {
      const items = (crds.body as { items: Obj[] | null }).items ?? []
      for (const m of items) {
        const seen = crdSeen.get(m.metadata.name)
        if (seen !== undefined && seen.startsWith(`${m.metadata.resourceVersion}|`)) {
          const svc = seen.slice(seen.indexOf("|") + 1)
          if (svc !== "") refer({ namespace: svc.split("/")[0]!, name: svc.split("/")[1]! })
          continue
        }
        const full = await req({ method: "GET", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${m.metadata.name}` })
        if (full.status !== 200) continue
        const crd = full.body as Obj & { spec: { conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig } } } }
        const cc = crd.spec.conversion?.strategy === "Webhook" ? crd.spec.conversion.webhook?.clientConfig : undefined
        refer(cc?.service)
        crdSeen.set(m.metadata.name, `${crd.metadata.resourceVersion}|${cc?.service !== undefined ? key(cc.service) : ""}`)
        if (cc?.service !== undefined && cc.caBundle !== pki.caBundle) {
          await patch(
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${m.metadata.name}`,
            { spec: { conversion: { webhook: { clientConfig: { caBundle: pki.caBundle } } } } },
            "application/merge-patch+json",
            `customresourcedefinitions/${m.metadata.name}`,
          )
        }
      }
    }
    named = next
  }
  // One sweep at a time (the loop and a CONNECT for a Service not yet seen share it).
  let sweeping: Promise<void> | undefined
  const sweepOnce = () => (sweeping ??= sweep().finally(() => void (sweeping = undefined)))

  // The stand-in server: AdmissionReview, ConversionReview and aggregated discovery, over TLS per Service name. Each
  // connection is wrapped here, so the answer knows which Service it was dialled for.
  const serviceOf = new WeakMap<object, string>()
  const discovered = new Set<string>()
  const http = createHttpServer((rq: IncomingMessage, rs: ServerResponse) => {
    const chunks: Buffer[] = []
    rq.on("data", (c: Buffer) => chunks.push(c))
    rq.on("end", () => answer(rq, rs, Buffer.concat(chunks).toString("utf8")))
  })
  const contexts = new Map<string, SecureContext>()
  const contextFor = (name: string) => contexts.get(name) ?? contexts.set(name, createSecureContext(pki.serving(name))).get(name)!
  const serveTls = (socket: Socket, service: string) => {
    const tls = new TLSSocket(socket, {
      isServer: true,
      secureContext: contextFor("aicr-harness-webhook-stand-in"),
      SNICallback: (name, cb) => {
        try {
          cb(null, contextFor(name))
        } catch (e) {
          cb(e as Error)
        }
      },
    })
    tls.on("error", () => tls.destroy())
    serviceOf.set(tls, service)
    http.emit("connection", tls)
  }
  const json = (rs: ServerResponse, status: number, body: unknown) => rs.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
  const answer = (rq: IncomingMessage, rs: ServerResponse, body: string) => {
    const service = serviceOf.get(rq.socket) ?? "?"
    const path = new URL(rq.url ?? "/", "https://x").pathname
    if (rq.method === "POST") {
      let review: {
        apiVersion?: string
        kind?: string
        request?: Record<string, unknown> & { uid?: string; desiredAPIVersion?: string; objects?: Array<Record<string, unknown>> }
      }
      try {
        review = JSON.parse(body)
      } catch {
        return json(rs, 400, { message: "not JSON" })
      }
      const r = review.request ?? {}
      if (review.kind === "AdmissionReview") {
        const kind = (r.kind as { kind?: string } | undefined)?.kind
        log({ msg: "Admitted", service, path, operation: r.operation, kind, namespace: r.namespace, name: r.name })
        return json(rs, 200, { apiVersion: review.apiVersion, kind: "AdmissionReview", response: { uid: r.uid, allowed: true } })
      }
      if (review.kind === "ConversionReview") {
        const convertedObjects = (r.objects ?? []).map((o) => ({ ...o, apiVersion: r.desiredAPIVersion }))
        log({ msg: "Converted", service, path, to: r.desiredAPIVersion, objects: convertedObjects.length })
        return json(rs, 200, {
          apiVersion: review.apiVersion,
          kind: "ConversionReview",
          response: { uid: r.uid, convertedObjects, result: { status: "Success" } },
        })
      }
      return json(rs, 400, { message: `no stand-in for ${review.kind ?? "this request"}` })
    }
    const groups = [...(named.get(service) ?? [])]
    const gv = /^\/apis\/([^/]+)\/([^/]+)\/?$/u.exec(path)
    if (rq.method === "GET" && gv !== null) {
      // The API server checks an aggregated API every few seconds: log the first answer per Service and path.
      if (!discovered.has(`${service}${path}`)) log({ msg: "Discovery", service, path })
      discovered.add(`${service}${path}`)
      return json(rs, 200, { kind: "APIResourceList", apiVersion: "v1", groupVersion: `${gv[1]}/${gv[2]}`, resources: [] })
    }
    if (rq.method === "GET" && (path === "/apis" || path === "/apis/")) {
      return json(rs, 200, { kind: "APIGroupList", apiVersion: "v1", groups: groups.map((g) => ({ name: g, versions: [] })) })
    }
    if (rq.method === "GET" && (path === "/healthz" || path === "/readyz" || path === "/livez")) return rs.writeHead(200).end("ok")
    return json(rs, 404, { message: `the webhook stand-in serves no ${rq.method} ${path}` })
  }

  const tunnel = (socket: Socket, head: Buffer, target: string) => {
    const sep = target.lastIndexOf(":")
    const upstream = connect({ host: target.slice(0, sep), port: Number(target.slice(sep + 1)), timeout: 5_000 })
    upstream.once("connect", () => {
      upstream.setTimeout(0)
      socket.write("HTTP/1.1 200 Connection established\r\n\r\n")
      if (head.length > 0) upstream.write(head)
      upstream.pipe(socket)
      socket.pipe(upstream)
    })
    const fail = () => {
      if (!socket.destroyed) socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n")
      upstream.destroy()
    }
    upstream.once("timeout", fail)
    upstream.once("error", fail)
    socket.once("error", () => upstream.destroy())
  }

  const proxy = createHttpServer()
  proxy.on("connect", (rq: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => undefined)
    const target = rq.url ?? ""
    void (async () => {
      let svc = services.get(target)
      if (svc === undefined && Date.now() - servicesAt > 200) {
        await refreshServices().catch(() => undefined)
        svc = services.get(target)
      }
      if (svc === undefined) return tunnel(socket, head, target)
      if (!named.has(key(svc))) await sweepOnce().catch(() => undefined)
      if (!named.has(key(svc))) {
        log({ msg: "Refused", service: key(svc), target, why: "no webhook, conversion or APIService names this Service" })
        return void socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n")
      }
      socket.write("HTTP/1.1 200 Connection established\r\n\r\n")
      if (head.length > 0) socket.unshift(head)
      serveTls(socket, key(svc))
    })()
  })
  rmSync(opts.socket, { force: true })
  await new Promise<void>((resolve, reject) => {
    proxy.once("error", reject)
    proxy.listen(opts.socket, () => resolve())
  })
  log({ msg: "Webhook stand-in started", socket: opts.socket })

  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      await Promise.all([
        sweepOnce(),
        refreshServices(),
        standInStatuses(opts.target, opts.user, STAND_IN_FIELD_MANAGER).then((wrote) => wrote.forEach((object) => log({ msg: "Wrote status", object }))),
      ]).catch((e: unknown) => log({ msg: "Sweep failed", error: e instanceof Error ? e.message : String(e) }))
      await sleep(opts.intervalMs ?? 1_000)
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await loop
      proxy.closeAllConnections()
      http.closeAllConnections()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
      rmSync(opts.socket, { force: true })
    },
  }
}
