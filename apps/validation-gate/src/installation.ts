/**
 * Whether deployment validation is installed (chart `validation.enabled`), asked the way the API server decides it:
 * the launcher's ServiceAccount exists, the authorizer lets it run Jobs in the validation namespace, and AICR's
 * validators will hold cluster-wide rights — either `aicr-validator` is bound there already (the chart's layout for
 * AICR ≥ 1.1) or the launcher may bind `cluster-admin` per run itself (AICR < 1.1 binds its validators per run).
 * Names of bindings are not checked: any binding the authorizer honours counts, so a hand-made install works too.
 */
import { Core, type KubeObject, Reviews } from "@aicr/api"
import { Kube, type KubeError } from "@aicr/kube"
import { Context, Effect, Layer, Option } from "effect"
import type { GateSettings } from "./config"

/** AICR's validators' ServiceAccount in the validation namespace (AICR's `job/rbac.go`). */
export const VALIDATOR_SERVICE_ACCOUNT = "aicr-validator"

export interface ResourceAttributes {
  readonly verb: string
  readonly group: string
  readonly resource: string
  readonly namespace?: string
  readonly name?: string
}

export interface AuthorizerShape {
  /** The authorizer's answer for a ServiceAccount `namespace/name` (a SubjectAccessReview, created and not stored). */
  readonly allowed: (serviceAccount: string, attributes: ResourceAttributes) => Effect.Effect<boolean, KubeError>
}

export class Authorizer extends Context.Service<Authorizer, AuthorizerShape>()("@aicr/validation-gate/Authorizer") {
  static readonly live: Layer.Layer<Authorizer, never, Kube> = Layer.effect(Authorizer)(
    Effect.gen(function* () {
      const kube = yield* Kube
      return {
        allowed: (serviceAccount, attributes) => {
          const [namespace, name] = serviceAccount.split("/") as [string, string]
          return kube
            .create<KubeObject & { status?: { allowed?: boolean } }>(Reviews.SubjectAccessReview, {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SubjectAccessReview",
              metadata: { name: "" },
              spec: {
                user: `system:serviceaccount:${namespace}:${name}`,
                groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
                resourceAttributes: attributes,
              },
            } as KubeObject)
            .pipe(Effect.map((r) => r.status?.allowed === true))
        },
      }
    }),
  )
}

/**
 * What is missing for validation to run, each as a phrase for `ValidationUnavailable`'s message; empty when installed.
 * Reads: the two ServiceAccounts (get) and up to four access reviews.
 */
export const installationGaps = (
  settings: Pick<GateSettings, "validationNamespace" | "launcher">,
): Effect.Effect<ReadonlyArray<string>, KubeError, Kube | Authorizer> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const authorizer = yield* Authorizer
    const ns = settings.validationNamespace
    const launcher = `${ns}/${settings.launcher}`
    if (Option.isNone(yield* kube.get<KubeObject>(Core.ServiceAccount, launcher)))
      return [`ServiceAccount ${launcher} (the validation launcher) does not exist`]
    const gaps: string[] = []
    if (!(yield* authorizer.allowed(launcher, { verb: "create", group: "batch", resource: "jobs", namespace: ns }))) {
      gaps.push(`ServiceAccount ${launcher} may not create Jobs in namespace ${ns} (its Role binding is missing)`)
    }
    const validator = `${ns}/${VALIDATOR_SERVICE_ACCOUNT}`
    const validatorBound =
      Option.isSome(yield* kube.get<KubeObject>(Core.ServiceAccount, validator)) &&
      (yield* authorizer.allowed(validator, { verb: "list", group: "", resource: "pods" }))
    if (!validatorBound) {
      const bindsPerRun =
        (yield* authorizer.allowed(launcher, { verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings" })) &&
        (yield* authorizer.allowed(launcher, { verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "cluster-admin" }))
      if (!bindsPerRun) {
        gaps.push(
          `AICR's validators have no cluster-wide rights: ServiceAccount ${validator} is not bound (AICR ≥ 1.1), and ${launcher} may not bind cluster-admin per run (AICR < 1.1)`,
        )
      }
    }
    return gaps
  })
