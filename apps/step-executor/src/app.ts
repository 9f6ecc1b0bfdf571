/**
 * step-executor's composition: settings, the informer caches of its contract's watches (`caches.ts`), each mapped to
 * `cluster`, the process's expectations, status pacer and kept plan read, and the controller, as an `AppSpec` the runtime runs. No
 * logic here.
 */
import { ClusterRuntimeKind } from "@aicr/api"
import { type AppSpec, appSettings, Expectations, makeExpectations, makeStatusPacer, StatusPacer } from "@aicr/runtime"
import { Effect } from "effect"
import { Caches, makeCaches } from "./caches"
import { ExecutorConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { makePlanReads, PlanReads } from "./gather"
import { reconcile } from "./reconcile"

export const stepExecutorApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting step-executor", {
        engineNamespace: settings.engineNamespace,
        project: settings.project,
        stepTimeoutMs: settings.stepTimeoutMs,
      })
      const { caches, sources } = yield* makeCaches(settings)
      const expectations = makeExpectations()
      const pacer = makeStatusPacer()
      const plans = makePlanReads()
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources,
          reconcile: (key: string) =>
            reconcile(key).pipe(
              Effect.provideService(ExecutorConfig, settings),
              Effect.provideService(Caches, caches),
              Effect.provideService(Expectations, expectations),
              Effect.provideService(StatusPacer, pacer),
              Effect.provideService(PlanReads, plans),
            ),
        },
      ]
    }),
}
