/**
 * resolver's composition: settings, the bundle store (its OCI client), informers (the `cluster` runtime; Nodes,
 * trimmed to what discovery reads; its AICR Jobs; its Job-output and content ConfigMaps, all mapped to `cluster`)
 * and the controller, as an `AppSpec` the runtime runs. No logic here.
 *
 * Node events that change nothing discovery reads (heartbeats, conditions, resource usage) enqueue nothing; the
 * work queue collapses the rest into one pass per burst.
 */
import { type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject, SINGLETON_NAME } from "@aicr/api"
import { makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
import { parseSettings, ResolverConfig } from "./config"
import { contract } from "./contract"
import { nodeView, type NodeView } from "./discovery"
import { reconcile } from "./reconcile"
import { openBundleStore } from "./registry"
import { BundleStore, Nodes } from "./services"

type CachedNode = KubeObject & NodeView

/** What discovery reads, plus the resourceVersion the informer tells updates (and its watch position) by. */
const trimNode = (n: CachedNode): CachedNode => {
  const v = nodeView(n)
  return { apiVersion: "v1", kind: "Node", ...v, metadata: { ...v.metadata, resourceVersion: n.metadata.resourceVersion } } as CachedNode
}
const sameForDiscovery = (a: CachedNode, b: CachedNode): boolean => JSON.stringify(nodeView(a)) === JSON.stringify(nodeView(b))
const toCluster = () => [SINGLETON_NAME]

export const resolverApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* Effect.try({ try: () => parseSettings(ctx.config.rest), catch: (e) => (e instanceof Error ? e : new Error(String(e))) })
      yield* Effect.logInfo("Starting resolver", { aicr: settings.version, image: settings.jobs.image, registry: `${settings.registry.host}/${settings.registry.prefix}`, namespace: settings.namespace })
      if (settings.allowedNamespaces === undefined) yield* Effect.logWarning("No --component-namespaces: releases may render into any namespace")
      const { store, close } = openBundleStore(settings, `aicr-${contract.controller}`)
      yield* Effect.addFinalizer(() => Effect.promise(close))
      const runtimes = yield* makeInformer<ClusterRuntime>({ kind: ClusterRuntimeKind, fieldSelector: `metadata.name=${SINGLETON_NAME}` })
      const nodes = yield* makeInformer<CachedNode>({ kind: Core.Node, transform: trimNode })
      const selectorOf = (kind: typeof Core.Job | typeof Core.ConfigMap) => contract.watches.find((w) => w.kind === kind)?.selector
      const namespaces = [...new Set([settings.jobs.namespace, settings.jobs.discoveryNamespace, settings.namespace])]
      const jobs = yield* Effect.forEach(namespaces, (namespace) => makeInformer<KubeObject>({ kind: Core.Job, namespace, labelSelector: selectorOf(Core.Job) }))
      const configMaps = yield* Effect.forEach(namespaces, (namespace) => makeInformer<KubeObject>({ kind: Core.ConfigMap, namespace, labelSelector: selectorOf(Core.ConfigMap) }))
      const nodeList = { list: () => nodes.list() }
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources: [
            self(runtimes),
            mapped(nodes, (_n, e) => (e.type === "update" && sameForDiscovery(e.old, e.object) ? [] : toCluster())),
            ...jobs.map((i) => mapped(i, toCluster)),
            ...configMaps.map((i) => mapped(i, toCluster)),
          ],
          reconcile: (key: string) =>
            reconcile(key).pipe(Effect.provideService(ResolverConfig, settings), Effect.provideService(Nodes, nodeList), Effect.provideService(BundleStore, store)),
        },
      ]
    }),
}
