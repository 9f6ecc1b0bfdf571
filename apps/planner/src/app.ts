/**
 * planner's composition: settings, the registry client (the pinned plan's chart check), informers (the `cluster`
 * runtime; plan and content ConfigMaps of the operator namespace, every RuntimeRollout, and the AICR Jobs of the Jobs
 * namespace, for upgrade-check runs, each mapped to `cluster`) and the controller, as an `AppSpec` the runtime runs.
 * `main.ts` runs it as the process; tests run it in-process with `runApp`. No logic here.
 */
import { ClusterRuntimeKind, Core, kindKey, SINGLETON_NAME } from "@aicr/api"
import { type AppSpec, appSettings, informersFor } from "@aicr/runtime"
import { Effect } from "effect"
import { ChartRegistry, lazyChartRegistry } from "./charts"
import { parseSettings, PlannerConfig } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

export const plannerApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting planner", { namespace: settings.namespace, windowMs: settings.windowMs, deadlineMs: settings.deadlineMs })
      const { sources } = yield* informersFor(contract, (w) => {
        switch (kindKey(w.kind)) {
          case kindKey(ClusterRuntimeKind):
            return { fieldSelector: `metadata.name=${SINGLETON_NAME}` }
          case kindKey(Core.ConfigMap):
            return { namespace: settings.namespace }
          case kindKey(Core.Job):
            return { namespace: settings.jobs.namespace }
          default:
            return {}
        }
      })
      const registry = yield* lazyChartRegistry(settings, `aicr-${contract.controller}`)
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources,
          reconcile: (key: string) => reconcile(key).pipe(Effect.provideService(PlannerConfig, settings), Effect.provideService(ChartRegistry, registry)),
        },
      ]
    }),
}
