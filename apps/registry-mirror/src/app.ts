/**
 * registry-mirror's composition: settings, the registry (its OCI client is loaded by the first mirror), informers
 * (the `cluster` runtime; content ConfigMaps of the operator namespace, mapped to `cluster`) and the controller, as
 * an `AppSpec` the runtime runs (logging, leader election, health and metrics, graceful shutdown). `main.ts` runs it
 * as the process; tests run it in-process with `runApp`. No logic here.
 */
import { type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject, SINGLETON_NAME } from "@aicr/api"
import { makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
import { lazyRegistry, Registry } from "./act"
import { MirrorConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

export const registryMirrorApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* Effect.try({ try: () => parseSettings(ctx.config.rest), catch: (e) => (e instanceof Error ? e : new Error(String(e))) })
      yield* Effect.logInfo("Starting registry-mirror", { registry: settings.registry, namespace: settings.namespace, rewrites: settings.rewrites.length })
      const registry = yield* lazyRegistry(settings, ctx.fieldManager)
      const runtimes = yield* makeInformer<ClusterRuntime>({ kind: ClusterRuntimeKind, fieldSelector: `metadata.name=${SINGLETON_NAME}` })
      const content = contract.watches.find((w) => w.kind === Core.ConfigMap)
      const configMaps = yield* makeInformer<KubeObject>({ kind: Core.ConfigMap, namespace: settings.namespace, labelSelector: content?.selector })
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources: [self(runtimes), mapped(configMaps, () => [SINGLETON_NAME])],
          reconcile: (key: string) => reconcile(key).pipe(Effect.provideService(Registry, registry), Effect.provideService(MirrorConfig, settings)),
        },
      ]
    }),
}
