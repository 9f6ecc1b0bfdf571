/**
 * gather: the reads the contract allows, into one `Observed` value: the two Secrets by name (the repo-creds Secret
 * only with `aws`), the clock, and what this process last minted (a fresh process always mints first: "at start").
 */
import { type ClusterRuntime, type ClusterRuntimeStatus, Core } from "@aicr/api"
import { Kube, type KubeError } from "@aicr/kube"
import { Clock, Effect, Option } from "effect"
import { type LastMint, MintState } from "./act"
import { RefresherConfig, type RefresherSettings } from "./config"
import type { Secret } from "./secrets"

export type CredentialsStatus = NonNullable<ClusterRuntimeStatus["credentials"]>

export interface Observed {
  /** The runtime `cluster`; undefined before one exists (the Secrets are kept all the same). */
  readonly runtime: ClusterRuntime | undefined
  readonly generation: number | undefined
  readonly settings: RefresherSettings
  readonly repoCreds: Secret | undefined
  readonly dockerConfig: Secret | undefined
  /** What this process minted last; undefined before its first mint. */
  readonly lastMint: LastMint | undefined
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
}

export const gather = (runtime: ClusterRuntime | undefined): Effect.Effect<Observed, KubeError, Kube | RefresherConfig | MintState> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const settings = yield* RefresherConfig
    const now = yield* Clock.currentTimeMillis
    const lastMint = yield* (yield* MintState).get
    const read = (ref: { namespace: string; name: string }) =>
      kube.get<Secret>(Core.Secret, `${ref.namespace}/${ref.name}`).pipe(Effect.map(Option.getOrUndefined))
    const dockerConfig = yield* read(settings.dockerConfig)
    const repoCreds = settings.provider === "aws" ? yield* read(settings.repoCreds) : undefined
    return { runtime, generation: runtime?.metadata.generation, settings, repoCreds, dockerConfig, lastMint, now } satisfies Observed
  })
