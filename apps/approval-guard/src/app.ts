/**
 * approval-guard's composition: settings, informers (every RuntimeRollout; every ClusterRoleBinding, whose changes to
 * the approver role re-decide the open rollouts), the live access checks and the controller, as an `AppSpec` the
 * runtime runs (logging, leader election, health and metrics, graceful shutdown). `main.ts` runs it as the process;
 * tests run it in-process with `runApp`. No logic here.
 */
import { kindKey, Rbac, RuntimeRolloutKind } from "@aicr/api"
import type { InformerEvent } from "@aicr/kube"
import { type AppSpec, appSettings, informersFor } from "@aicr/runtime"
import { Effect } from "effect"
import { Access, type Binding, bindingChangesApprovers, liveAccess } from "./access"
import { GuardConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

export const approvalGuardApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* appSettings(() => parseSettings(ctx.config.rest))
      yield* Effect.logInfo("Starting approval-guard", { approverRole: settings.approverRole, operatorNamespaces: settings.operatorNamespaces.join(",") })
      const access = yield* liveAccess
      // A ClusterRoleBinding event re-decides the open rollouts only when it binds (or bound) the approver role.
      const { sources } = yield* informersFor(contract, (w) =>
        kindKey(w.kind) === kindKey(Rbac.ClusterRoleBinding)
          ? { ignore: (e) => !bindingChangesApprovers(e as InformerEvent<Binding>, settings.approverRole) }
          : {},
      )
      return [
        {
          name: contract.controller,
          kind: RuntimeRolloutKind,
          sources,
          reconcile: (key: string) => reconcile(key).pipe(Effect.provideService(Access, access), Effect.provideService(GuardConfig, settings)),
        },
      ]
    }),
}
