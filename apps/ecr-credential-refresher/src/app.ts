/**
 * ecr-credential-refresher's composition: settings, ECR (the AWS SDK is loaded by the first mint, `aws` only), the
 * process-local mint state, informers (the `cluster` runtime; the two Secrets, each by name, mapped to `cluster`)
 * and the controller, as an `AppSpec` the runtime runs. `main.ts` runs it as the process; tests run it in-process
 * with `runApp`. No logic here.
 */
import { ClusterRuntimeKind, Core, kindKey, SINGLETON_NAME } from "@aicr/api"
import { type AppSpec, appSettings, informersFor } from "@aicr/runtime"
import { Effect } from "effect"
import { Ecr, lazyEcr, makeMintState, MintState } from "./act"
import { parseSettings, RefresherConfig } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

export const ecrCredentialRefresherApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting ecr-credential-refresher", {
        provider: settings.provider,
        registry: settings.repository,
        repoCreds: `${settings.repoCreds.namespace}/${settings.repoCreds.name}`,
        dockerConfig: `${settings.dockerConfig.namespace}/${settings.dockerConfig.name}`,
      })
      const ecr = yield* lazyEcr(ctx.fieldManager)
      const state = yield* makeMintState()
      // The Secrets it keeps, each by name: the docker-config Secret, and with `aws` the repo-creds Secret.
      const secrets = settings.provider === "aws" ? [settings.dockerConfig, settings.repoCreds] : [settings.dockerConfig]
      const { sources } = yield* informersFor(contract, (w) =>
        kindKey(w.kind) === kindKey(Core.Secret)
          ? secrets.map((ref) => ({ namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}` }))
          : { fieldSelector: `metadata.name=${SINGLETON_NAME}` },
      )
      return [
        {
          name: contract.controller,
          kind: ClusterRuntimeKind,
          sources,
          // Once leading, whether or not the runtime exists: the Secrets are written "at start" (operator.md §4.16).
          initialKeys: [SINGLETON_NAME],
          reconcile: (key: string) =>
            reconcile(key).pipe(Effect.provideService(Ecr, ecr), Effect.provideService(MintState, state), Effect.provideService(RefresherConfig, settings)),
        },
      ]
    }),
}
