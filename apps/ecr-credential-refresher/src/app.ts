/**
 * ecr-credential-refresher's composition: settings, ECR (`aws` only: as calls to the bundle's mint process, as shipped,
 * mint-call.ts; or in this process, the AWS SDK loaded by the first mint, from sources), the process-local mint state,
 * informers (the `cluster` runtime; the two Secrets, each by name, mapped to `cluster`) and the controller, as an
 * `AppSpec` the runtime runs. `main.ts` runs it as the process; tests run it in-process with `runApp`. No logic here.
 */
import { ClusterRuntimeKind, Core, kindKey, SINGLETON_NAME } from "@aicr/api"
import { type AppSpec, appSettings, informersFor } from "@aicr/runtime"
import { Effect } from "effect"
import { Ecr, lazyEcr, makeMintState, MintState } from "./act"
import { parseSettings, RefresherConfig } from "./config"
import { contract } from "./contract"
import { processEcr } from "./mint-call"
import { reconcile } from "./reconcile"

export interface RefresherAppOptions {
  /**
   * The mint process (`mint-process.mjs` of the bundle): each ECR mint runs in a child process started from it, so the
   * refresher never loads the AWS SDK. Undefined: mints run in the refresher, the SDK loaded by the first (from sources).
   */
  readonly mintProcess?: string | undefined
}

export const ecrCredentialRefresherApp = (options: RefresherAppOptions = {}): AppSpec<Error> => ({
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting ecr-credential-refresher", {
        provider: settings.provider,
        registry: settings.repository,
        repoCreds: `${settings.repoCreds.namespace}/${settings.repoCreds.name}`,
        dockerConfig: `${settings.dockerConfig.namespace}/${settings.dockerConfig.name}`,
        mints: options.mintProcess ?? "in this process",
      })
      const ecr = options.mintProcess !== undefined ? processEcr(options.mintProcess, ctx.fieldManager) : yield* lazyEcr(ctx.fieldManager)
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
})
