/**
 * gather: the reads the contract allows, into one `Observed` value. `Resolved` is read only through `current`
 * (a stale or missing condition reads as Unknown). The content ConfigMap is read only when a mirror may be due.
 */
import { type ClusterRuntime, type ClusterRuntimeStatus, Core, type KubeObject, Resolved } from "@aicr/api"
import { current, type CurrentCondition } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Clock, Effect, Option } from "effect"
import { MirrorConfig } from "./config"
import { mirrorIsCurrent } from "./decide"
import type { Registry } from "./act"
import type { RegistryPrefix, Rewrites } from "./source"
import { type LastVerification, type Verification, verifyMirror } from "./verify"

/** `status.mirror` (registry-mirror's room) and `status.resolution` (the resolver's). */
export type MirrorStatus = NonNullable<ClusterRuntimeStatus["mirror"]>
export type ResolutionStatus = NonNullable<ClusterRuntimeStatus["resolution"]>

export type ContentRead =
  { readonly _tag: "NotRead" } | { readonly _tag: "Missing" } | { readonly _tag: "Found"; readonly data: Readonly<Record<string, string>> }

export interface Observed {
  readonly runtime: ClusterRuntime
  readonly generation: number | undefined
  readonly resolved: CurrentCondition
  readonly resolution: ResolutionStatus | undefined
  /** Our own room as last written. */
  readonly mirror: MirrorStatus | undefined
  readonly content: ContentRead
  /** The recorded mirror checked in the registry (verify.ts): only when it is current and a check is due. */
  readonly verification: Verification
  readonly verifyIntervalMs: number
  readonly namespace: string
  readonly prefix: RegistryPrefix
  readonly rewrites: Rewrites
  /** Epoch milliseconds, from the Effect clock (TestClock in tests). */
  readonly now: number
}

type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

export const gather = (runtime: ClusterRuntime): Effect.Effect<Observed, KubeError, Kube | MirrorConfig | Registry | LastVerification> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const config = yield* MirrorConfig
    const now = yield* Clock.currentTimeMillis
    const resolved = current(runtime, Resolved)
    const resolution = runtime.status?.resolution
    const mirror = runtime.status?.mirror
    const fields = {
      runtime,
      generation: runtime.metadata.generation,
      resolved,
      resolution,
      mirror,
      namespace: config.namespace,
      prefix: config.prefix,
      rewrites: config.rewrites,
      now,
      verifyIntervalMs: config.verifyIntervalMs,
    }
    const resolvedNow = resolved.status === "True" && resolution?.inputDigest !== undefined && resolution.contentConfigMap !== undefined
    const isCurrent = resolvedNow && mirrorIsCurrent(fields, resolution.inputDigest!)
    const verification: Verification = isCurrent ? yield* verifyMirror(mirror!, resolution.inputDigest!, now, config.verifyIntervalMs) : { _tag: "NotChecked" }
    const base = { ...fields, verification }
    // A recorded tag that is gone is pushed again from the resolution: the content is read as for a first mirror.
    const due = resolvedNow && (!isCurrent || verification._tag === "Missing")
    if (!due) return { ...base, content: { _tag: "NotRead" } } satisfies Observed
    const cm = yield* kube.get<ConfigMap>(Core.ConfigMap, `${config.namespace}/${resolution!.contentConfigMap}`)
    const content: ContentRead = Option.isSome(cm) ? { _tag: "Found", data: cm.value.data ?? {} } : { _tag: "Missing" }
    return { ...base, content } satisfies Observed
  })
