/**
 * The Effect face of `@aicr/oras`: the same operations as {@link OciClient}, returning
 * `Effect<A, OciError>`, interruptible (interruption aborts the HTTP exchange), and an `Oras` service with a
 * scoped layer that closes the connection pool on release.
 */
import { Context, Effect, Layer } from "effect"
import { OciClient, type OciClientOptions } from "./client"
import { OciError } from "./errors"

type Wrapped = Exclude<keyof OciClient, "stats" | "close" | "listTags" | "listRepositories">

/** Every Promise-returning method of {@link OciClient}, as an Effect failing with {@link OciError}. */
export type OciEffectClient = {
  readonly [K in Wrapped]: OciClient[K] extends (...args: infer P) => Promise<infer A> ? (...args: P) => Effect.Effect<A, OciError> : never
}

/** Each wrapped method and the position of its trailing options argument (which receives the AbortSignal). */
const optionsIndex: { readonly [K in Wrapped]: number } = {
  ping: 1,
  resolve: 1,
  manifestExists: 1,
  fetchManifest: 1,
  pushManifest: 2,
  tag: 2,
  blobExists: 2,
  pullBlob: 2,
  fetchBlob: 2,
  pullBlobToFile: 3,
  pushBlob: 2,
  mountBlob: 3,
  tags: 1,
  referrers: 1,
  copy: 2,
  pushChart: 2,
  pullChart: 1,
}

/**
 * Wraps a client: each call becomes an Effect whose failure channel is `OciError`; anything else thrown is a
 * defect. The options argument (always last) receives the fiber's `AbortSignal`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OciClient, toEffectClient } from "@aicr/oras"
 * const oras = toEffectClient(new OciClient())
 * const digest = oras.resolve("127.0.0.1:5000/charts/demo:1.2.3").pipe(
 *   Effect.map((d) => d.digest),
 *   Effect.catchReason("OciError", "NotFound", () => Effect.succeed(undefined)),
 * )
 * ```
 */
export const toEffectClient = (client: OciClient): OciEffectClient => {
  const out: Record<string, (...args: unknown[]) => Effect.Effect<unknown, OciError>> = {}
  for (const [name, at] of Object.entries(optionsIndex)) {
    const method = client[name as Wrapped] as (...args: unknown[]) => Promise<unknown>
    out[name] = (...args) =>
      Effect.tryPromise({
        try: (signal) => {
          const a = Array.from({ length: at + 1 }, (_, i) => args[i])
          a[at] = { ...(a[at] as object | undefined), signal }
          return method.apply(client, a)
        },
        catch: (e) => e,
      }).pipe(Effect.catch((e) => (e instanceof OciError ? Effect.fail(e) : Effect.die(e))))
  }
  return out as unknown as OciEffectClient
}

/**
 * The registry client as an Effect service (key `@aicr/oras/Oras`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Oras } from "@aicr/oras"
 * const program = Effect.gen(function* () {
 *   const oras = yield* Oras
 *   return yield* oras.resolve("127.0.0.1:5000/charts/demo:1.2.3")
 * }).pipe(Effect.provide(Oras.layer({ plainHttpLoopback: true })))
 * ```
 */
export class Oras extends Context.Service<Oras, OciEffectClient>()("@aicr/oras/Oras") {
  /** A layer owning one {@link OciClient}, closed when the layer's scope ends. */
  static layer(options: OciClientOptions = {}): Layer.Layer<Oras> {
    return Layer.effect(
      Oras,
      Effect.acquireRelease(
        Effect.sync(() => new OciClient(options)),
        (client) => Effect.promise(() => client.close()),
      ).pipe(Effect.map(toEffectClient)),
    )
  }
}
