/**
 * resolver's composition: settings, the bundle store (as shipped, pulls in the bundle process; from sources, its OCI
 * client loaded on first use), informers (the `cluster` runtime; Nodes,
 * trimmed to what discovery reads; its AICR Jobs; its Job-output and content ConfigMaps, all mapped to `cluster`)
 * and the controller, as an `AppSpec` the runtime runs. No logic here.
 *
 * Node events that change nothing discovery reads (heartbeats, conditions, resource usage, labels that neither the
 * placement selectors, the GPU product nor the driver labels name) enqueue nothing; the work queue collapses the rest
 * into one pass per burst.
 */
import { type ClusterRuntime, ClusterRuntimeKind, Core, kindKey, type KubeObject, SINGLETON_NAME } from "@aicr/api"
import type { Informer } from "@aicr/kube"
import { type AppSpec, appSettings, informersFor, openOnFirstUse, type WatchScope } from "@aicr/runtime"
import { Effect, Option } from "effect"
import { parseSettings, ResolverConfig } from "./config"
import { contract } from "./contract"
import { nodeView, type NodeView, sameUnder } from "./discovery"
import { makeNodeIndex } from "./node-index"
import { reconcile } from "./reconcile"
import { processBundleStore } from "./bundle-call"
import { BundleStore, type BundleStoreShape, credentialOf, Nodes, type NodesShape } from "./services"

type CachedNode = KubeObject & NodeView

/** What discovery reads, plus the resourceVersion the informer tells updates (and its watch position) by. */
const trimNode = (n: CachedNode): CachedNode => {
  const v = nodeView(n)
  return { apiVersion: "v1", kind: "Node", ...v, metadata: { ...v.metadata, resourceVersion: n.metadata.resourceVersion } } as CachedNode
}

export interface ResolverAppOptions {
  /**
   * The bundle process (`bundle-process.mjs` of the bundle): each bundle pull runs in a child process started from it,
   * so the resolver never loads the OCI client. Undefined: pulls run in the resolver (from sources).
   */
  readonly bundleProcess?: string | undefined
}

export const resolverApp = (options: ResolverAppOptions = {}): AppSpec<Error> => ({
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting resolver", {
        aicr: settings.version,
        image: settings.jobs.image,
        registry: `${settings.registry.host}/${settings.registry.prefix}`,
        namespace: settings.namespace,
        bundlePulls: options.bundleProcess ?? "in this process",
      })
      if (settings.gate._tag === "Allowed") yield* Effect.logWarning("Development allowance in use", { note: settings.gate.note })
      if (settings.gate._tag === "Refused")
        yield* Effect.logError("The pinned AICR does not pass the version gate: every resolution is AICRVersionMismatch", { message: settings.gate.message })
      // As shipped, each bundle pull runs in the bundle process (bundle-call.ts): the OCI client (undici) never loads
      // here. From sources, the client is loaded and opened by the first pull, not at start.
      const userAgent = `aicr-${contract.controller}`
      const store: BundleStoreShape =
        options.bundleProcess !== undefined
          ? processBundleStore(options.bundleProcess, settings, userAgent)
          : yield* Effect.map(
              openOnFirstUse(() => import("./registry").then((m) => m.openBundleStore(settings, userAgent))),
              (opened): BundleStoreShape => ({
                pull: (reference) => opened.pipe(Effect.flatMap((o) => o.store.pull(reference))),
                credential: () => credentialOf(settings.dockerConfig),
              }),
            )
      const namespaces = [...new Set([settings.jobs.namespace, settings.jobs.discoveryNamespace, settings.namespace])]
      // The runtime's cache, once made: the Node filter reads the current placement from it.
      const made: { runtimes?: Informer<ClusterRuntime> } = {}
      const placement = () => (made.runtimes === undefined ? undefined : Option.getOrUndefined(made.runtimes.get(SINGLETON_NAME))?.spec.placement)
      const informers = yield* informersFor(contract, (w): WatchScope | ReadonlyArray<WatchScope> => {
        switch (kindKey(w.kind)) {
          case kindKey(ClusterRuntimeKind):
            return { fieldSelector: `metadata.name=${SINGLETON_NAME}` }
          case kindKey(Core.Node):
            // An update that changes nothing discovery reads under the current placement starts no pass.
            return {
              transform: trimNode as (o: KubeObject) => KubeObject,
              ignore: (e) => e.type === "update" && sameUnder(placement(), e.old as CachedNode, e.object as CachedNode),
            }
          default: // its AICR Jobs and their output and content ConfigMaps, in each namespace it runs Jobs in or writes to
            return namespaces.map((namespace) => ({ namespace }))
        }
      })
      made.runtimes = informers.one<ClusterRuntime>(ClusterRuntimeKind)
      const nodes = informers.one<CachedNode>(Core.Node)
      // Discovery is kept between passes until a Node event may change it (node-index.ts).
      const index = makeNodeIndex(() => nodes.list())
      yield* nodes.subscribe((e) => Effect.sync(() => index.observe(e)))
      const nodeList: NodesShape = { discover: index.discover }
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources: informers.sources,
          reconcile: (key: string) =>
            reconcile(key).pipe(
              Effect.provideService(ResolverConfig, settings),
              Effect.provideService(Nodes, nodeList),
              Effect.provideService(BundleStore, store),
            ),
        },
      ]
    }),
})
