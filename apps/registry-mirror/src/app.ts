/**
 * registry-mirror's composition: settings, the registry, either as calls to the bundle's mirror process (as shipped:
 * mirror-call.ts) or in this process, its OCI client loaded by the first mirror (from sources), informers (the
 * `cluster` runtime; content ConfigMaps of the operator namespace, mapped to `cluster`) and the controller, as an
 * `AppSpec` the runtime runs (logging, leader election, health and metrics, graceful shutdown). `main.ts` runs it as
 * the process; tests run it in-process with `runApp`. No logic here.
 */
import { ClusterRuntimeKind, Core, kindKey, SINGLETON_NAME } from "@aicr/api"
import { type AppSpec, appSettings, informersFor } from "@aicr/runtime"
import { Effect } from "effect"
import { lazyRegistry, Registry } from "./act"
import { MirrorConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { processRegistry } from "./mirror-call"
import { reconcile } from "./reconcile"
import { LastVerification } from "./verify"

export interface RegistryMirrorAppOptions {
  /**
   * The mirror process (`mirror-process.mjs` of the bundle): every mirror and every check of the recorded tags runs
   * in a child process started from it, so the controller never loads the OCI client. Undefined: they run in the
   * controller (from sources).
   */
  readonly mirrorProcess?: string | undefined
}

export const registryMirrorApp = (options: RegistryMirrorAppOptions = {}): AppSpec<Error> => ({
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting registry-mirror", {
        registry: settings.registry,
        namespace: settings.namespace,
        rewrites: settings.rewrites.length,
        registryCalls: options.mirrorProcess ?? "in this process",
      })
      const entry = options.mirrorProcess
      const registry = entry !== undefined ? processRegistry(entry, settings, ctx.fieldManager) : yield* lazyRegistry(settings, ctx.fieldManager)
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
})
