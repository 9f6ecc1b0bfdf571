/**
 * planner's composition: settings, the registry client (the pinned plan's chart check), informers (the `cluster`
 * runtime; plan and content ConfigMaps of the operator namespace, every RuntimeRollout, and the AICR Jobs of the Jobs
 * namespace, for upgrade-check runs, each mapped to `cluster`) and the controller, as an `AppSpec` the runtime runs.
 * `main.ts` runs it as the process; tests run it in-process with `runApp`. No logic here.
 */
import { type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject, LABEL_ROLE, type RuntimeRollout, RuntimeRolloutKind, SINGLETON_NAME } from "@aicr/api"
import { makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
import { ChartRegistry, openChartRegistry } from "./charts"
import { parseSettings, PlannerConfig } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

export const plannerApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* Effect.try({ try: () => parseSettings(ctx.config.rest), catch: (e) => (e instanceof Error ? e : new Error(String(e))) })
      yield* Effect.logInfo("Starting planner", { namespace: settings.namespace, windowMs: settings.windowMs, deadlineMs: settings.deadlineMs })
      const runtimes = yield* makeInformer<ClusterRuntime>({ kind: ClusterRuntimeKind, fieldSelector: `metadata.name=${SINGLETON_NAME}` })
      const configMaps = yield* makeInformer<KubeObject>({ kind: Core.ConfigMap, namespace: settings.namespace, labelSelector: `${LABEL_ROLE} in (plan,content)` })
      const rollouts = yield* makeInformer<RuntimeRollout>({ kind: RuntimeRolloutKind })
      const jobs = yield* makeInformer<KubeObject>({ kind: Core.Job, namespace: settings.jobs.namespace, labelSelector: contract.watches.find((w) => w.kind === Core.Job)?.selector })
      const { registry, close } = openChartRegistry(settings, `aicr-${contract.controller}`)
      yield* Effect.addFinalizer(() => Effect.promise(close))
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources: [self(runtimes), mapped(configMaps, () => [SINGLETON_NAME]), mapped(rollouts, () => [SINGLETON_NAME]), mapped(jobs, () => [SINGLETON_NAME])],
          reconcile: (key: string) => reconcile(key).pipe(Effect.provideService(PlannerConfig, settings), Effect.provideService(ChartRegistry, registry)),
        },
      ]
    }),
}
