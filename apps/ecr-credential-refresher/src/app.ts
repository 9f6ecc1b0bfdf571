/**
 * ecr-credential-refresher's composition: settings, ECR (the AWS SDK is loaded by the first mint, `aws` only), the
 * process-local mint state, informers (the `cluster` runtime; the two Secrets, each by name, mapped to `cluster`)
 * and the controller, as an `AppSpec` the runtime runs. `main.ts` runs it as the process; tests run it in-process
 * with `runApp`. No logic here.
 */
import { type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject, SINGLETON_NAME } from "@aicr/api"
import { makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
import { Ecr, lazyEcr, makeMintState, MintState } from "./act"
import { parseSettings, RefresherConfig, type SecretRef } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

const secretInformer = (ref: SecretRef) =>
  makeInformer<KubeObject>({ kind: Core.Secret, namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}` })

export const ecrCredentialRefresherApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* Effect.try({ try: () => parseSettings(ctx.config.rest), catch: (e) => (e instanceof Error ? e : new Error(String(e))) })
      yield* Effect.logInfo("Starting ecr-credential-refresher", {
        provider: settings.provider, registry: settings.repository, repoCreds: `${settings.repoCreds.namespace}/${settings.repoCreds.name}`,
        dockerConfig: `${settings.dockerConfig.namespace}/${settings.dockerConfig.name}`,
      })
      const ecr = yield* lazyEcr(ctx.fieldManager)
      const state = yield* makeMintState()
      const runtimes = yield* makeInformer<ClusterRuntime>({ kind: ClusterRuntimeKind, fieldSelector: `metadata.name=${SINGLETON_NAME}` })
      const dockerConfig = yield* secretInformer(settings.dockerConfig)
      const toCluster = () => [SINGLETON_NAME]
      const sources = [self(runtimes), mapped(dockerConfig, toCluster)]
      if (settings.provider === "aws") sources.push(mapped(yield* secretInformer(settings.repoCreds), toCluster))
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources,
          reconcile: (key: string) =>
            reconcile(key).pipe(Effect.provideService(Ecr, ecr), Effect.provideService(MintState, state), Effect.provideService(RefresherConfig, settings)),
        },
      ]
    }),
}
