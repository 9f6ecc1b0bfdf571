/**
 * registry-mirror's composition: settings, the registry (its OCI client is loaded by the first mirror), informers
 * (the `cluster` runtime; content ConfigMaps of the operator namespace, mapped to `cluster`) and the controller, as
 * an `AppSpec` the runtime runs (logging, leader election, health and metrics, graceful shutdown). `main.ts` runs it
 * as the process; tests run it in-process with `runApp`. No logic here.
 */
import { ClusterRuntimeKind, Core, kindKey, SINGLETON_NAME } from "@aicr/api"
import { type AppSpec, appSettings, informersFor } from "@aicr/runtime"
import { Effect } from "effect"
import { lazyRegistry, Registry } from "./act"
import { MirrorConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"
import { LastVerification } from "./verify"

export const registryMirrorApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting registry-mirror", { registry: settings.registry, namespace: settings.namespace, rewrites: settings.rewrites.length })
      const registry = yield* lazyRegistry(settings, ctx.fieldManager)
      const lastVerification = yield* LastVerification.make
      const { sources } = yield* informersFor(contract, (w) =>
        kindKey(w.kind) === kindKey(Core.ConfigMap) ? { namespace: settings.namespace } : { fieldSelector: `metadata.name=${SINGLETON_NAME}` },
      )
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources,
          reconcile: (key: string) =>
            reconcile(key).pipe(
              Effect.provideService(Registry, registry),
              Effect.provideService(MirrorConfig, settings),
              Effect.provideService(LastVerification, lastVerification),
            ),
        },
      ]
    }),
}
