/**
 * act: the side effects of a decision. Only `Mirror` touches anything (the runtime registry and the upstreams,
 * through the `Registry` service); every failure becomes an `Outcome` via `errorsToOutcome`, defects included.
 */
import { shortDigest } from "@aicr/conditions"
import { openOnFirstUse, outcomeOf } from "@aicr/runtime"
import { Context, Effect, type Scope } from "effect"
import type { MirrorSettings } from "./config"
import type { Decision } from "./decide"
import { defectOutcome, errorsToOutcome, type FailureOutcome, type MirrorError } from "./errors"
import type { MirrorResult } from "./mirror"
import type { MirrorPlan } from "./plan"
import type { Outcome } from "./status"
import type { TagFound } from "./verify"

export interface RegistryShape {
  /** Mirrors a plan; fails with the controller's tagged errors, dies on anything else. */
  readonly mirror: (plan: MirrorPlan) => Effect.Effect<MirrorResult, MirrorError>
  /** What each `host/repository:tag` holds now (undefined: the tag is gone); fails like `mirror`. */
  readonly resolveTags: (references: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<TagFound>, MirrorError>
}

export class Registry extends Context.Service<Registry, RegistryShape>()("@aicr/registry-mirror/Registry") {}

/**
 * The `Registry` in this process (the controller run from sources; as shipped, `processRegistry` in mirror-call.ts runs
 * each call in a child process instead): the OCI client and the mirror executor (`./registry`: `@aicr/oras`, undici)
 * are loaded by the first mirror, then kept; the client is closed with the scope. An idle controller never loads
 * them (a dynamic `import()`, which the split bundle keeps in a chunk of its own).
 */
export const lazyRegistry = (settings: MirrorSettings, userAgent: string): Effect.Effect<RegistryShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const opened = yield* openOnFirstUse(() => import("./registry").then((m) => m.openRegistry(settings, userAgent)))
    return {
      mirror: (plan) => opened.pipe(Effect.flatMap((o) => o.registry.mirror(plan))),
      resolveTags: (references) => opened.pipe(Effect.flatMap((o) => o.registry.resolveTags(references))),
    }
  })

const toOutcome = (e: MirrorError, what: string): FailureOutcome => outcomeOf<MirrorError, FailureOutcome>(errorsToOutcome(what), e)

export const act = (decision: Decision): Effect.Effect<Outcome, never, Registry> => {
  switch (decision._tag) {
    case "AwaitResolution":
      return Effect.succeed({ _tag: "Awaiting", message: decision.message })
    case "UpToDate":
      return Effect.succeed({ _tag: "UpToDate" })
    case "Paused":
      return Effect.succeed({ _tag: "Paused", message: decision.message })
    case "Fail": {
      const outcome = toOutcome(decision.error, decision.what ?? `Mirroring input ${shortDigest(decision.inputDigest)}`)
      return Effect.succeed(decision.recheck === undefined ? outcome : { ...outcome, requeue: decision.recheck })
    }
    case "Mirror":
      return Effect.gen(function* () {
        const registry = yield* Registry
        yield* Effect.logInfo("Mirroring resolution", { inputDigest: decision.plan.inputDigest, artifacts: decision.plan.items.length + 1 })
        const result = yield* registry.mirror(decision.plan)
        yield* Effect.logInfo("Mirrored resolution", {
          inputDigest: result.inputDigest,
          pushed: result.pushed,
          present: result.present,
          bytesUploaded: result.bytesUploaded,
        })
        return { _tag: "Mirrored", result } satisfies Outcome as Outcome
      }).pipe(
        Effect.catch((e: MirrorError) => Effect.succeed(toOutcome(e, `Mirroring input ${shortDigest(decision.plan.inputDigest)}`) as Outcome)),
        Effect.catchDefect((d) => Effect.succeed(defectOutcome(d) as Outcome)),
      )
  }
}
