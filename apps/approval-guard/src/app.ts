/**
 * approval-guard's composition: settings, the informer caches of its contract's watches (`caches.ts`: every
 * RuntimeRollout; every ClusterRoleBinding, whose changes to the approver role re-decide the open rollouts), the
 * access checks, the process's expectations and the controller, as an `AppSpec` the runtime runs (logging, leader
 * election, health and metrics, graceful shutdown). `main.ts` runs it as the process; tests run it in-process with
 * `runApp`. No logic here.
 */
import { RuntimeRolloutKind } from "@aicr/api"
import { type AppSpec, appSettings, Expectations, makeExpectations } from "@aicr/runtime"
import { Effect } from "effect"
import { Access, accessFrom } from "./access"
import { Caches, makeCaches } from "./caches"
import { GuardConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

export const approvalGuardApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting approval-guard", { approverRole: settings.approverRole, operatorNamespaces: settings.operatorNamespaces.join(",") })
      const { caches, sources } = yield* makeCaches(settings.approverRole)
      const access = yield* accessFrom(caches.bindings)
      const expectations = makeExpectations()
      return [
        {
          name: contract.controller,
          kind: RuntimeRolloutKind,
          sources,
          reconcile: (key: string) =>
            reconcile(key).pipe(
              Effect.provideService(Access, access),
              Effect.provideService(GuardConfig, settings),
              Effect.provideService(Caches, caches),
              Effect.provideService(Expectations, expectations),
            ),
        },
      ]
    }),
}
