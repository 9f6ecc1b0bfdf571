/**
 * validation-gate's composition: settings, the evidence registry and the signer (when a key is configured), either
 * as calls to the bundle's evidence process (as shipped: evidence-call.ts) or in this process, loaded by their first
 * use (from sources), the authorizer (access reviews), informers (every RuntimeRollout; the `cluster`
 * runtime, mapped to its rollouts; the validation Jobs, mapped to the rollout named in their label; what makes
 * validation installed — ServiceAccounts and Role bindings of the validation namespace, ClusterRoleBindings) and the controller, as an `AppSpec` the runtime
 * runs. No logic here.
 */
import {
  type ClusterRuntime,
  ClusterRuntimeKind,
  Core,
  type KubeObject,
  LABEL_OUTCOME,
  LABEL_ROLLOUT,
  Rbac,
  type RuntimeRollout,
  RuntimeRolloutKind,
  SINGLETON_NAME,
} from "@aicr/api"
import { type KubeError, makeInformer } from "@aicr/kube"
import { type AppSpec, mapped, self } from "@aicr/runtime"
import { Effect } from "effect"
import { EvidenceRegistry, lazyRegistry, Signer } from "./act"
import { GateConfig, parseSettings } from "./config"
import { contract } from "./contract"
import { Authorizer } from "./installation"
import { processRegistry, processSigner } from "./evidence-call"
import { reconcile } from "./reconcile"
import { lazySigner } from "./signer"

/** A list in the validation namespace refused because validation is not installed (no namespace, no Role there). */
const validationListError = (e: KubeError) => e.reason._tag === "NotFound" || e.reason._tag === "Forbidden"

export interface GateAppOptions {
  /**
   * The evidence process (`evidence-process.mjs` of the bundle): registry and KMS calls each run in a child process
   * started from it, so the gate never loads their clients. Undefined: the calls run in the gate (from sources).
   */
  readonly evidenceProcess?: string | undefined
}

export const validationGateApp = (options: GateAppOptions = {}): AppSpec<Error> => ({
  name: contract.controller,
  setup: (ctx) =>
    Effect.gen(function* () {
      const settings = yield* Effect.try({ try: () => parseSettings(ctx.config.rest), catch: (e) => (e instanceof Error ? e : new Error(String(e))) })
      yield* Effect.logInfo("Starting validation-gate", {
        registry: settings.registry,
        validationNamespace: settings.validationNamespace,
        launcher: settings.launcher,
        deadlineSeconds: settings.deadlineSeconds,
        signingKey: settings.signingKey ?? "none",
        evidenceCalls: options.evidenceProcess ?? "in this process",
      })
      const entry = options.evidenceProcess
      const registry = entry !== undefined ? processRegistry(entry, settings, ctx.fieldManager) : yield* lazyRegistry(settings, ctx.fieldManager)
      const key = settings.signingKey
      const signer = key === undefined ? undefined : entry !== undefined ? processSigner(entry, key) : lazySigner(key)
      const rollouts = yield* makeInformer<RuntimeRollout>({ kind: RuntimeRolloutKind })
      const runtimes = yield* makeInformer<ClusterRuntime>({ kind: ClusterRuntimeKind, fieldSelector: `metadata.name=${SINGLETON_NAME}` })
      // Without the chart's `validation.enabled` there is no validation namespace and no Role there: the two lists are
      // refused, count as empty (no launcher → ValidationUnavailable), and are retried until validation is installed.
      const jobs = yield* makeInformer<KubeObject>({
        kind: Core.Job,
        namespace: settings.validationNamespace,
        labelSelector: LABEL_ROLLOUT,
        tolerate: validationListError,
      })
      // What makes validation installed (installation.ts): the ServiceAccounts and Role bindings of the validation
      // namespace and the ClusterRoleBindings; any change re-decides every rollout's ValidationReady.
      const accounts = yield* makeInformer<KubeObject>({ kind: Core.ServiceAccount, namespace: settings.validationNamespace, tolerate: validationListError })
      const roleBindings = yield* makeInformer<KubeObject>({ kind: Rbac.RoleBinding, namespace: settings.validationNamespace, tolerate: validationListError })
      const clusterBindings = yield* makeInformer<KubeObject>({ kind: Rbac.ClusterRoleBinding })
      const rolloutsOf = (rt: ClusterRuntime) =>
        rollouts
          .list()
          .filter((r) => r.spec.runtimeUID === rt.metadata.uid)
          .map((r) => r.metadata.name)
      const openRollouts = () =>
        rollouts
          .list()
          .filter((r) => r.metadata.labels?.[LABEL_OUTCOME] === undefined)
          .map((r) => r.metadata.name)
      return [
        {
          name: contract.controller,
          kind: RuntimeRolloutKind,
          sources: [
            self(rollouts),
            mapped(runtimes, rolloutsOf),
            mapped(jobs, (j) => [j.metadata.labels?.[LABEL_ROLLOUT] ?? ""].filter((n) => n !== "")),
            mapped(accounts, openRollouts),
            mapped(roleBindings, openRollouts),
            mapped(clusterBindings, openRollouts),
          ],
          reconcile: (key: string) =>
            reconcile(key).pipe(
              Effect.provideService(GateConfig, settings),
              Effect.provideService(EvidenceRegistry, registry),
              Effect.provideService(Signer, signer),
              Effect.provide(Authorizer.live),
            ),
        },
      ]
    }),
})
