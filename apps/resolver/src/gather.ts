/**
 * gather: what a pass starts from, into one `Observed` value: the runtime, the settings, the node groups from the
 * node cache (discovery.ts) and the clock. Every later read depends on what the pass learns on its way (the
 * snapshot, the inputDigest) and is made by act.ts.
 */
import type { ClusterRuntime, ClusterRuntimeStatus } from "@aicr/api"
import { Clock, Effect } from "effect"
import { ResolverConfig, type ResolverSettings } from "./config"
import type { Discovery } from "./discovery"
import type { AicrPin } from "./inputs"
import { Nodes } from "./services"

export type DiscoveryStatus = NonNullable<ClusterRuntimeStatus["discovery"]>
export type ResolutionStatus = NonNullable<ClusterRuntimeStatus["resolution"]>

export interface Observed {
  readonly runtime: ClusterRuntime
  readonly settings: ResolverSettings
  /** The node groups `spec.placement` selects now. */
  readonly discovery: Discovery
  /** Our rooms as last written. */
  readonly previous: DiscoveryStatus | undefined
  readonly resolution: ResolutionStatus | undefined
  /** The pinned AICR, as snapshot keys and inputDigest record it. */
  readonly pin: AicrPin
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
}

export const gather = (runtime: ClusterRuntime): Effect.Effect<Observed, never, Nodes | ResolverConfig> =>
  Effect.gen(function* () {
    const settings = yield* ResolverConfig
    const nodes = yield* Nodes
    return {
      runtime,
      settings,
      discovery: nodes.discover(runtime.spec.placement),
      previous: runtime.status?.discovery,
      resolution: runtime.status?.resolution,
      pin: { version: settings.version, image: settings.jobs.image },
      now: yield* Clock.currentTimeMillis,
    }
  })
