/**
 * step-executor's composition: settings, informers (the `cluster` runtime; every RuntimeRollout; the Applications in
 * the engine namespace that carry a runtime-uid label; the AppProject; Argo CD's Application CRD), each mapped to
 * `cluster`, and the controller, as an `AppSpec` the runtime runs. No logic here.
 */
import { ArgoCD, type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject, LABEL_RUNTIME_UID, type RuntimeRollout, RuntimeRolloutKind, SINGLETON_NAME } from "@aicr/api"
import { makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
import { ExecutorConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { APPLICATION_CRD } from "./gather"
import { reconcile } from "./reconcile"

export const stepExecutorApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* Effect.try({ try: () => parseSettings(ctx.config.rest), catch: (e) => (e instanceof Error ? e : new Error(String(e))) })
      yield* Effect.logInfo("Starting step-executor", { engineNamespace: settings.engineNamespace, project: settings.project, stepTimeoutMs: settings.stepTimeoutMs })
      const runtimes = yield* makeInformer<ClusterRuntime>({ kind: ClusterRuntimeKind, fieldSelector: `metadata.name=${SINGLETON_NAME}` })
      const rollouts = yield* makeInformer<RuntimeRollout>({ kind: RuntimeRolloutKind })
      const applications = yield* makeInformer<KubeObject>({ kind: ArgoCD.Application, namespace: settings.engineNamespace, labelSelector: LABEL_RUNTIME_UID })
      const projects = yield* makeInformer<KubeObject>({ kind: ArgoCD.AppProject, namespace: settings.engineNamespace, fieldSelector: `metadata.name=${settings.project}` })
      const crds = yield* makeInformer<KubeObject>({ kind: Core.CustomResourceDefinition, fieldSelector: `metadata.name=${APPLICATION_CRD}` })
      const toCluster = () => [SINGLETON_NAME]
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources: [self(runtimes), mapped(rollouts, toCluster), mapped(applications, toCluster), mapped(projects, toCluster), mapped(crds, toCluster)],
          reconcile: (key: string) => reconcile(key).pipe(Effect.provideService(ExecutorConfig, settings)),
        },
      ]
    }),
}
