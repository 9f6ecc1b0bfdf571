/**
 * The live `Kube` layer: the verbs of `KubeShape` as REST calls over `http.ts`. Build it from a kubeconfig file,
 * from the in-cluster service account, or from the default chain.
 */
import { apiVersionOf, keyOf, type KubeObject, type ResourceKind } from "@aicr/api"
import { Effect, Layer, Option } from "effect"
import { KubeError, reasonFromStatus } from "./errors"
import { loadConnection, type ConfigSource } from "./kubeconfig"
import { nodeOpen } from "./node-transport"
import { makeTransport, type Open, type Transport, type TransportOptions } from "./transport"
import { Kube, type KubeShape } from "./kube"
import { collectionPath, objectPath, withQuery } from "./paths"
import { makeApplyStatus } from "./status"
import type { KubeList, WatchEvent } from "./types"

const withTypeMeta = <T>(kind: ResourceKind, obj: unknown): T => {
  const o = obj as Record<string, unknown>
  return (o["apiVersion"] && o["kind"] ? o : { apiVersion: apiVersionOf(kind), kind: kind.kind, ...o }) as T
}

const PAGE = 500

export const makeKubeFromTransport = (t: Transport): KubeShape => {
  const get: KubeShape["get"] = <T extends KubeObject>(kind: ResourceKind, key: string) =>
    t.request({ method: "GET", path: objectPath(kind, key) }).pipe(
      Effect.map((o) => Option.some(withTypeMeta<T>(kind, o))),
      Effect.catchReason("KubeError", "NotFound", () => Effect.succeed(Option.none<T>())),
    )

  const list: KubeShape["list"] = <T extends KubeObject>(kind: ResourceKind, options: Parameters<KubeShape["list"]>[1] = {}) =>
    Effect.gen(function* () {
      const items: Array<T> = []
      let cont: string | undefined
      let resourceVersion = ""
      do {
        const page = (yield* t.request({
          method: "GET",
          path: withQuery(collectionPath(kind, options.namespace), {
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            limit: PAGE,
            continue: cont,
          }),
        })) as { items?: Array<unknown>; metadata?: { resourceVersion?: string; continue?: string } }
        const transform = options.transform
        for (const i of page.items ?? []) items.push(transform === undefined ? withTypeMeta<T>(kind, i) : (transform(withTypeMeta<KubeObject>(kind, i)) as T))
        resourceVersion = page.metadata?.resourceVersion ?? resourceVersion
        cont = page.metadata?.continue || undefined
      } while (cont !== undefined)
      return { items, resourceVersion } satisfies KubeList<T>
    })

  const watch: KubeShape["watch"] = <T extends KubeObject>(
    kind: ResourceKind,
    options: Parameters<KubeShape["watch"]>[1],
    onEvent: (e: WatchEvent<T>) => Effect.Effect<void>,
  ) => {
    const path = withQuery(collectionPath(kind, options.namespace), {
      watch: 1,
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: options.allowBookmarks ?? true,
      timeoutSeconds: options.timeoutSeconds,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
    })
    const transform = options.transform
    // The projection runs as each line is decoded, so events waiting for their turn hold projections only.
    const project =
      transform === undefined
        ? undefined
        : (line: unknown) => {
            const ev = line as { type?: string; object?: Record<string, unknown> }
            return ev.type === "ADDED" || ev.type === "MODIFIED" || ev.type === "DELETED"
              ? { ...ev, object: transform(withTypeMeta<KubeObject>(kind, ev.object)) }
              : ev
          }
    return t.stream(
      path,
      (line) => {
        const ev = line as { type?: string; object?: Record<string, unknown> }
        switch (ev.type) {
          case "ADDED":
          case "MODIFIED":
          case "DELETED":
            return onEvent({ type: ev.type, object: withTypeMeta<T>(kind, ev.object) })
          case "BOOKMARK": {
            const rv = (ev.object?.["metadata"] as { resourceVersion?: string } | undefined)?.resourceVersion
            return rv ? onEvent({ type: "BOOKMARK", resourceVersion: rv }) : Effect.void
          }
          case "ERROR": {
            const status = ev.object ?? {}
            return Effect.fail(new KubeError({ reason: reasonFromStatus(typeof status["code"] === "number" ? status["code"] : 0, status), verb: "GET", path }))
          }
          default:
            return Effect.void
        }
      },
      project,
    )
  }

  const writeQuery = (o?: { fieldManager?: string | undefined; dryRun?: boolean | undefined }) => ({
    fieldManager: o?.fieldManager,
    dryRun: o?.dryRun ? "All" : undefined,
  })

  const create: KubeShape["create"] = (kind, obj, options) =>
    t
      .request({ method: "POST", path: withQuery(collectionPath(kind, obj.metadata.namespace), writeQuery(options)), body: withTypeMeta(kind, obj) })
      .pipe(Effect.map((o) => withTypeMeta(kind, o)))

  const replace: KubeShape["replace"] = (kind, obj, options) =>
    t
      .request({ method: "PUT", path: withQuery(objectPath(kind, keyOf(obj), options?.subresource), writeQuery(options)), body: withTypeMeta(kind, obj) })
      .pipe(Effect.map((o) => withTypeMeta(kind, o)))

  const apply: KubeShape["apply"] = <T extends KubeObject>(kind: ResourceKind, obj: unknown, options: Parameters<KubeShape["apply"]>[2]) => {
    const body = withTypeMeta<KubeObject>(kind, obj)
    return t
      .request({
        method: "PATCH",
        path: withQuery(objectPath(kind, keyOf(body), options.subresource), {
          fieldManager: options.fieldManager,
          force: options.force ?? false,
          dryRun: options.dryRun ? "All" : undefined,
        }),
        body,
        contentType: "application/apply-patch+yaml",
      })
      .pipe(Effect.map((o) => withTypeMeta<T>(kind, o)))
  }

  const patch: KubeShape["patch"] = <T extends KubeObject>(
    kind: ResourceKind,
    key: string,
    p: Parameters<KubeShape["patch"]>[2],
    options?: Parameters<KubeShape["patch"]>[3],
  ) =>
    t
      .request({
        method: "PATCH",
        path: withQuery(objectPath(kind, key, options?.subresource), writeQuery(options)),
        body: p.type === "merge" ? p.body : p.ops,
        contentType: p.type === "merge" ? "application/merge-patch+json" : "application/json-patch+json",
      })
      .pipe(Effect.map((o) => withTypeMeta<T>(kind, o)))

  const del: KubeShape["delete"] = (kind, key, options) =>
    t
      .request({
        method: "DELETE",
        path: objectPath(kind, key),
        body:
          options === undefined
            ? undefined
            : {
                apiVersion: "v1",
                kind: "DeleteOptions",
                preconditions: options.preconditions,
                propagationPolicy: options.propagationPolicy,
                gracePeriodSeconds: options.gracePeriodSeconds,
              },
      })
      .pipe(Effect.asVoid)

  return { get, list, watch, create, replace, apply, applyStatus: makeApplyStatus(apply), patch, delete: del }
}

export interface KubeLiveOptions extends TransportOptions, ConfigSource {
  /**
   * `node` (default): `node:https` and our kubeconfig loader, falling back to client-node for auth it does not
   * understand; `client-node`: always client-node's `KubeConfig` + undici (heavier; see ADR 20261202-kube-layer).
   */
  readonly backend?: "node" | "client-node" | undefined
}

const clientNode = (source: ConfigSource): Promise<Open> => import("./client-node-transport").then((m) => m.clientNodeOpen(source).open)

/** Resolve the backend for a config source (reads the kubeconfig; loads client-node only when needed). */
export const resolveBackend = async (options: KubeLiveOptions): Promise<Open> => {
  if (options.backend === "client-node") return clientNode(options)
  const conn = await loadConnection(options)
  return conn ? nodeOpen(conn) : clientNode(options)
}

/** A live service whose backend is resolved on first use (configuration errors surface on the first request). */
export const makeKube = (options: KubeLiveOptions = {}): KubeShape => {
  let backend: Promise<Open> | undefined
  const open: Open = (...args) => (backend ??= resolveBackend(options)).then((o) => o(...args))
  return makeKubeFromTransport(makeTransport(open, options))
}

/** The live `Kube` layer. The kubeconfig is read while the layer builds, so a bad configuration fails at startup. */
export const layer = (options: KubeLiveOptions = {}): Layer.Layer<Kube> =>
  Layer.effect(Kube)(Effect.promise(() => resolveBackend(options)).pipe(Effect.map((open) => makeKubeFromTransport(makeTransport(open, options)))))

export const layerFromKubeconfig = (kubeconfigPath: string, options: TransportOptions = {}): Layer.Layer<Kube> => layer({ ...options, kubeconfigPath })

export const layerInCluster = (options: TransportOptions = {}): Layer.Layer<Kube> => layer({ ...options, inCluster: true })
