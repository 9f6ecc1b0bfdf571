/**
 * act: the side effects of a decision. Only `Mint` touches anything: ECR (through the `Ecr` service) and then the two
 * Secrets (server-side apply by name, as this controller's field manager, without force). Every failure becomes an
 * `Outcome` via `errorsToOutcome`; a failed mint past the written token's expiry reports `RegistryCredentialsStale`.
 */
import { Core, RegistryCredentialsReady } from "@aicr/api"
import { toConditionTime } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Requeue } from "@aicr/runtime"
import { Clock, Context, Effect, Random, Ref, type Scope } from "effect"
import { RefresherConfig } from "./config"
import { contract } from "./contract"
import type { Decision } from "./decide"
import {
  defectOutcome,
  type FailureOutcome,
  type MintError,
  type RefreshError,
  SecretWriteForbiddenError,
  SecretWriteRefusedError,
  toOutcome,
  TokenInvalidError,
} from "./errors"
import type { Observed } from "./gather"
import type { EcrRegistry } from "./registry"
import { refreshAt, until } from "./schedule"
import { dockerConfigSecret, expiresAtOf, repoCredsSecret } from "./secrets"
import type { Outcome } from "./status"

/** A minted ECR login; `expiresAt` in epoch ms. Never logged. */
export interface Token {
  readonly username: string
  readonly password: string
  readonly expiresAt: number
}

export interface EcrShape {
  /** `ecr:GetAuthorizationToken` for the registry's region; fails with the refresher's tagged errors, dies on anything else. */
  readonly mint: (registry: EcrRegistry) => Effect.Effect<Token, MintError>
}

export class Ecr extends Context.Service<Ecr, EcrShape>()("@aicr/ecr-credential-refresher/Ecr") {}

/** What this process minted last (epoch ms); kept in memory only, so every new leader mints at start. */
export interface LastMint {
  readonly mintedAt: number
  readonly expiresAt: number
  readonly refreshAt: number
}

export interface MintStateShape {
  readonly get: Effect.Effect<LastMint | undefined>
  readonly set: (m: LastMint) => Effect.Effect<void>
}

export class MintState extends Context.Service<MintState, MintStateShape>()("@aicr/ecr-credential-refresher/MintState") {}

export const makeMintState = (): Effect.Effect<MintStateShape> =>
  Effect.map(Ref.make<LastMint | undefined>(undefined), (ref) => ({ get: Ref.get(ref), set: (m) => Ref.set(ref, m) }))

/**
 * `Ecr` in this process, as the refresher runs from sources: the AWS SDK (`./ecr`) is loaded by the first mint, then
 * kept; its clients are destroyed with the scope. A `static` refresher never loads it (the split bundle keeps it in a
 * chunk of its own). As shipped, each mint runs in the bundle's mint process instead (`processEcr`, mint-call.ts).
 */
export const lazyEcr = (userAgent: string): Effect.Effect<EcrShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    let opened: Promise<{ readonly ecr: EcrShape; readonly close: () => void }> | undefined
    const open = () =>
      (opened ??= import("./ecr").then(
        (m) => m.openEcr(userAgent),
        (e: unknown) => {
          opened = undefined
          throw e
        },
      ))
    yield* Effect.addFinalizer(() => (opened === undefined ? Effect.void : Effect.promise(() => opened!.then((o) => o.close()).catch(() => undefined))))
    return { mint: (registry) => Effect.promise(open).pipe(Effect.flatMap((o) => o.ecr.mint(registry))) }
  })

/** A token must outlive its mint by at least this much to be worth writing. */
export const MIN_TOKEN_LIFETIME_MS = 2_000

const ref = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`

const writeSecret = (body: {
  metadata: { namespace: string; name: string }
}): Effect.Effect<void, KubeError | SecretWriteForbiddenError | SecretWriteRefusedError, Kube> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    yield* kube.apply(Core.Secret, body, { fieldManager: contract.fieldManager })
  }).pipe(
    Effect.catchTag("KubeError", (e): Effect.Effect<never, KubeError | SecretWriteForbiddenError | SecretWriteRefusedError> => {
      const secret = ref(body.metadata)
      switch (e.reason._tag) {
        case "Forbidden":
          return Effect.fail(new SecretWriteForbiddenError({ secret, message: String(e) }))
        case "Invalid":
        case "FieldManagerConflict":
          return Effect.fail(new SecretWriteRefusedError({ secret, cause: e.reason._tag, message: String(e) }))
        default:
          return Effect.fail(e)
      }
    }),
  )

const mint = (o: Observed, registry: EcrRegistry, why: string): Effect.Effect<LastMint, KubeError | RefreshError, Kube | Ecr | MintState | RefresherConfig> =>
  Effect.gen(function* () {
    const s = yield* RefresherConfig
    const token = yield* (yield* Ecr).mint(registry)
    const mintedAt = yield* Clock.currentTimeMillis
    if (token.expiresAt < mintedAt + MIN_TOKEN_LIFETIME_MS) {
      return yield* Effect.fail(
        new TokenInvalidError({
          message: `ECR returned a token that expires at ${toConditionTime(token.expiresAt)}, before it could be used: check the node's clock`,
        }),
      )
    }
    const last: LastMint = { mintedAt, expiresAt: token.expiresAt, refreshAt: refreshAt(mintedAt, token.expiresAt, s.refreshIntervalMs, yield* Random.next) }
    const login = { username: token.username, password: token.password, expiresAt: toConditionTime(token.expiresAt) }
    // The pushing components' Secret first: Argo CD keeps pulling with the old token until the second write.
    yield* writeSecret(dockerConfigSecret(o.settings.registry, s.dockerConfig, login))
    yield* writeSecret(repoCredsSecret(o.settings.registry, s.repoCreds, login))
    yield* (yield* MintState).set(last)
    yield* Effect.logInfo("Minted ECR token", {
      registry: registry.host,
      why,
      expiresAt: login.expiresAt,
      refreshAt: toConditionTime(last.refreshAt),
      Secret: [ref(s.repoCreds), ref(s.dockerConfig)],
    })
    return last
  })

/** The expiry of what the Secrets hold now (the earlier of the two), if they say. */
const writtenExpiry = (o: Observed): number | undefined => {
  const times = [o.lastMint?.expiresAt, expiresAtOf(o.repoCreds), expiresAtOf(o.dockerConfig)].filter((t): t is number => t !== undefined)
  return times.length === 0 ? undefined : Math.min(...times)
}

/** A failed mint: stale once the written token has expired; otherwise look again by its expiry at the latest. */
const mintFailed = (o: Observed, failure: FailureOutcome): FailureOutcome => {
  const expiry = writtenExpiry(o)
  if (failure.class === "defect" || expiry === undefined) return failure
  if (expiry <= o.now) {
    const secrets = `${ref(o.settings.repoCreds)} and ${ref(o.settings.dockerConfig)}`
    return {
      ...failure,
      condition: RegistryCredentialsReady.false(
        "RegistryCredentialsStale",
        `The token in ${secrets} expired at ${toConditionTime(expiry)} and no new one could be minted: ${failure.condition.message}`,
      ),
    }
  }
  return failure.class === "terminal" ? { ...failure, requeue: Requeue.min(failure.requeue, Requeue.after(until(expiry, o.now) + 1_000)) } : failure
}

export const act = (o: Observed, decision: Decision): Effect.Effect<Outcome, KubeError, Kube | Ecr | MintState | RefresherConfig> => {
  switch (decision._tag) {
    case "StaticPresent":
      return Effect.succeed({ _tag: "StaticPresent", expiresAt: decision.expiresAt })
    case "StaticStale":
      return Effect.succeed({
        _tag: "Failed",
        class: "terminal",
        condition: RegistryCredentialsReady.false(
          "RegistryCredentialsStale",
          `Secret ${ref(o.settings.dockerConfig)} is past its operator.aicr.run/token-expires-at (${toConditionTime(decision.expiresAt)}): refresh it, or remove the annotation if it does not expire`,
        ),
        requeue: Requeue.onChange,
        error: undefined,
      } satisfies FailureOutcome)
    case "UpToDate":
      return Effect.succeed({ _tag: "UpToDate", last: decision.last })
    case "Fail":
      return Effect.succeed(toOutcome(decision.error))
    case "Mint":
      return mint(o, decision.ecr, decision.why).pipe(
        Effect.map((last): Outcome => ({ _tag: "Minted", last })),
        Effect.catch((e: KubeError | RefreshError) => (e._tag === "KubeError" ? Effect.fail(e) : Effect.succeed(mintFailed(o, toOutcome(e)) as Outcome))),
        Effect.catchDefect((d) => Effect.succeed(defectOutcome(d) as Outcome)),
      )
  }
}
