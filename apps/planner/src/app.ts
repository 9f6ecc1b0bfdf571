/**
 * planner's composition: settings, the registry client (the pinned plan's chart check), informers (the `cluster`
 * runtime; plan and content ConfigMaps of the operator namespace, every RuntimeRollout, the AICR Jobs of the Jobs
 * namespace, for upgrade-check runs, Argo CD's Application CRD, and the runtime-labelled Argo CD Applications of the
 * engine namespace, kept as a digest of what the planner reads so that only a change of it starts a pass; each mapped to `cluster`), the
 * not-ready memory and status pacer of the process, and the controller, as an `AppSpec` the runtime runs.
 * `main.ts` runs it as the process; tests run it in-process with `runApp`. No logic here.
 */
import { ArgoCD, ClusterRuntimeKind, Core, kindKey, SINGLETON_NAME } from "@aicr/api"
import { APPLICATION_CRD } from "@aicr/argocd"
import { type AppSpec, appSettings, crdScope, informersFor, makeStatusPacer, StatusPacer } from "@aicr/runtime"
import { Effect } from "effect"
import { ChartRegistry, lazyChartRegistry } from "./charts"
import { parseSettings, PlannerConfig } from "./config"
import { contract } from "./contract"
import { makeNotReadySince, NotReadySince, unchangedForPlanner, watchedProjection } from "./readiness"
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
          case kindKey(ArgoCD.Application):
            return {
              namespace: settings.engineNamespace,
              transform: watchedProjection,
              // Argo CD's CRD missing or not readable: an empty cache, listed again once the CRD informer shows it.
              servedBy: APPLICATION_CRD,
              ignore: (e) => e.type === "update" && unchangedForPlanner(e.old, e.object),
            }
          case kindKey(Core.CustomResourceDefinition):
            return crdScope(APPLICATION_CRD)
          default:
            return {}
        }
      })
      const registry = yield* lazyChartRegistry(settings, `aicr-${contract.controller}`)
      const notReadySince = makeNotReadySince()
      const pacer = makeStatusPacer()
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources,
          reconcile: (key: string) =>
            reconcile(key).pipe(
              Effect.provideService(PlannerConfig, settings),
              Effect.provideService(ChartRegistry, registry),
              Effect.provideService(NotReadySince, notReadySince),
              Effect.provideService(StatusPacer, pacer),
            ),
        },
      ]
    }),
}
