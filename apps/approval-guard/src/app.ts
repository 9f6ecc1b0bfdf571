/**
 * approval-guard's composition: settings, informers (every RuntimeRollout; every ClusterRoleBinding, whose changes to
 * the approver role re-decide the open rollouts), the live access checks and the controller, as an `AppSpec` the
 * runtime runs (logging, leader election, health and metrics, graceful shutdown). `main.ts` runs it as the process;
 * tests run it in-process with `runApp`. No logic here.
 */
import { Rbac, RuntimeRolloutKind, type RuntimeRollout } from "@aicr/api"
import { makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
import { Access, type Binding, bindingChangesApprovers, liveAccess, openRollouts } from "./access"
import { GuardConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { reconcile } from "./reconcile"

export const approvalGuardApp: AppSpec<Error> = {
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* Effect.try({ try: () => parseSettings(ctx.config.rest), catch: (e) => (e instanceof Error ? e : new Error(String(e))) })
      yield* Effect.logInfo("Starting approval-guard", { approverRole: settings.approverRole, operatorNamespaces: settings.operatorNamespaces.join(",") })
      const access = yield* liveAccess
      const rollouts = yield* makeInformer<RuntimeRollout>({ kind: RuntimeRolloutKind })
      const bindings = yield* makeInformer<Binding>({ kind: Rbac.ClusterRoleBinding })
      return [
        {
          name: contract.controller,
          kind: RuntimeRolloutKind,
          sources: [self(rollouts), mapped(bindings, (_b, e) => (bindingChangesApprovers(e, settings.approverRole) ? openRollouts(rollouts.list()) : []))],
          reconcile: (key: string) => reconcile(key).pipe(Effect.provideService(Access, access), Effect.provideService(GuardConfig, settings)),
        },
      ]
    }),
}
