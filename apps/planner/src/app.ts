/**
 * planner's composition: settings, informers (the `cluster` runtime; plan and content ConfigMaps of the operator
 * namespace and every RuntimeRollout, each mapped to `cluster`) and the controller, as an `AppSpec` the runtime runs.
 * `main.ts` runs it as the process; tests run it in-process with `runApp`. No logic here.
 */
import { type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject, LABEL_ROLE, type RuntimeRollout, RuntimeRolloutKind, SINGLETON_NAME } from "@aicr/api"
import { makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
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
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources: [self(runtimes), mapped(configMaps, () => [SINGLETON_NAME]), mapped(rollouts, () => [SINGLETON_NAME])],
          reconcile: (key: string) => reconcile(key).pipe(Effect.provideService(PlannerConfig, settings)),
        },
      ]
    }),
}
