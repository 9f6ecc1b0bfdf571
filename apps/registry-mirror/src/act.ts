/**
 * act: the side effects of a decision. Only `Mirror` touches anything (the runtime registry and the upstreams,
 * through the `Registry` service); every failure becomes an `Outcome` via `errorsToOutcome`, defects included.
 */
import { shortDigest } from "@aicr/conditions"
import { type CredentialProvider, dockerConfigCredentials, type OciClient } from "@aicr/oras"
import { Context, Effect } from "effect"
import { readFile } from "node:fs/promises"
import type { MirrorSettings } from "./config"
import type { Decision } from "./decide"
import { defectOutcome, errorsToOutcome, type FailureOutcome, isMirrorError, type MirrorError, RegistryCredentialsUnavailableError } from "./errors"
import { type MirrorResult, runMirror } from "./mirror"
import type { MirrorPlan } from "./plan"
import type { Outcome } from "./status"

export interface RegistryShape {
  /** Mirrors a plan; fails with the controller's tagged errors, dies on anything else. */
  readonly mirror: (plan: MirrorPlan) => Effect.Effect<MirrorResult, MirrorError>
}

export class Registry extends Context.Service<Registry, RegistryShape>()("@aicr/registry-mirror/Registry") {}

/** A docker config file re-read at every handshake, so rotated credentials are picked up without a restart. */
export const credentialsFrom = (path: string | undefined): CredentialProvider | undefined =>
  path === undefined
    ? undefined
    : async (registry) => {
        let text: string
        try {
          text = await readFile(path, "utf8")
        } catch (e) {
          throw new RegistryCredentialsUnavailableError({ path, message: `Registry credentials ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` })
        }
        let config: unknown
        try {
          config = JSON.parse(text)
        } catch {
          throw new RegistryCredentialsUnavailableError({ path, message: `Registry credentials ${path} are not a docker config.json` })
        }
        return dockerConfigCredentials({ config: config as never })(registry)
      }

/** The `Registry` service over an existing client (tests and the bench share one). */
export const fromClient = (client: OciClient, settings: Pick<MirrorSettings, "rewrites" | "concurrency">): RegistryShape => ({
  mirror: (plan) =>
    Effect.tryPromise({
      try: (signal) => runMirror(client, plan, { rewrites: settings.rewrites, concurrency: settings.concurrency, signal }),
      catch: (e) => e,
    }).pipe(Effect.catch((e) => (isMirrorError(e) ? Effect.fail(e) : Effect.die(e)))),
})

const toOutcome = (e: MirrorError, what: string): FailureOutcome => {
  const table = errorsToOutcome(what) as Record<MirrorError["_tag"], (e: MirrorError) => FailureOutcome>
  return table[e._tag](e)
}

export const act = (decision: Decision): Effect.Effect<Outcome, never, Registry> => {
  switch (decision._tag) {
    case "AwaitResolution":
      return Effect.succeed({ _tag: "Awaiting", message: decision.message })
    case "UpToDate":
      return Effect.succeed({ _tag: "UpToDate" })
    case "Fail":
      return Effect.succeed(toOutcome(decision.error, `Mirroring input ${shortDigest(decision.inputDigest)}`))
    case "Mirror":
      return Effect.gen(function* () {
        const registry = yield* Registry
        yield* Effect.logInfo("Mirroring resolution", { inputDigest: decision.plan.inputDigest, artifacts: decision.plan.items.length + 1 })
        const result = yield* registry.mirror(decision.plan)
        yield* Effect.logInfo("Mirrored resolution", { inputDigest: result.inputDigest, pushed: result.pushed, present: result.present, bytesUploaded: result.bytesUploaded })
        return { _tag: "Mirrored", result } satisfies Outcome as Outcome
      }).pipe(
        Effect.catch((e: MirrorError) => Effect.succeed(toOutcome(e, `Mirroring input ${shortDigest(decision.plan.inputDigest)}`) as Outcome)),
        Effect.catchDefect((d) => Effect.succeed(defectOutcome(d) as Outcome)),
      )
  }
}
