/**
 * The HTTP transport under the live `Kube`, written once over a tiny `open()` primitive that two backends implement:
 * - `node-transport.ts` (default): `node:https` with a keep-alive agent and our own kubeconfig loader; no undici and
 *   no client-node at runtime, which keeps an idle controller's RSS within the architecture.md §7 budget;
 * - `client-node-transport.ts`: client-node's `KubeConfig` (exec plugins, OIDC, auth providers, proxies), loaded
 *   lazily and used only for kubeconfigs the light loader cannot serve, or when asked for.
 * Every non-2xx answer becomes a `KubeError` from the `Status` body. No typed models are involved, so nothing is
 * dropped from custom resources (client-node issues #2962/#2483).
 */
import { Effect, Queue } from "effect"
import { kubeErrorFromStatus, kubeErrorFromUnknown, type KubeError } from "./errors"

export interface TransportOptions {
  /** Sent as `User-Agent`; by convention the controller's field manager, e.g. `aicr-approval-guard`. */
  readonly userAgent?: string | undefined
  /** Deadline for a non-watch request (default 30 s). */
  readonly requestTimeoutMs?: number | undefined
  /** Runs before every request, e.g. a client-side token bucket from `@aicr/runtime`. */
  readonly throttle?: Effect.Effect<void> | undefined
  /** Observes every finished request (metrics, request-counting tests). `code` is 0 when no response arrived. */
  readonly onResponse?: ((r: { readonly method: string; readonly path: string; readonly code: number; readonly durationMs: number }) => void) | undefined
}

export interface RequestSpec {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly body?: unknown
  readonly contentType?: string | undefined
}

/** What a backend returns for one request: status, headers and the body as a stream of chunks. */
export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: AsyncIterable<Uint8Array | string>
}

/** A backend: send one request (path relative to the server), honouring `signal`. */
export type Open = (method: string, path: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal) => Promise<RawResponse>

export interface Transport {
  readonly request: (spec: RequestSpec) => Effect.Effect<unknown, KubeError>
  /** A streaming GET; `onLine` gets each parsed JSON line in order. Succeeds on a clean end of stream. */
  readonly stream: (
    path: string,
    onLine: (line: unknown) => Effect.Effect<void, KubeError>,
    /** Applied to each decoded line as it arrives, before it is queued for `onLine` (e.g. a projection). */
    project?: (line: unknown) => unknown,
  ) => Effect.Effect<void, KubeError>
}

const readAll = async (body: AsyncIterable<Uint8Array | string>): Promise<string> => {
  const decoder = new TextDecoder()
  let out = ""
  for await (const chunk of body) out += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true })
  return out + decoder.decode()
}

type Item = { readonly _tag: "line"; readonly value: unknown } | { readonly _tag: "end" } | { readonly _tag: "error"; readonly error: KubeError }

export const makeTransport = (open: Open, options: TransportOptions = {}): Transport => {
  const timeoutMs = options.requestTimeoutMs ?? 30_000
  const throttle = options.throttle ?? Effect.void
  const baseHeaders: Record<string, string> = { accept: "application/json", ...(options.userAgent ? { "user-agent": options.userAgent } : {}) }
  const observe = (method: string, path: string, code: number, started: number) =>
    options.onResponse?.({ method, path, code, durationMs: performance.now() - started })

  const request = (spec: RequestSpec): Effect.Effect<unknown, KubeError> =>
    Effect.andThen(
      throttle,
      Effect.tryPromise({
        try: async (signal) => {
          const started = performance.now()
          let code = 0
          try {
            const body = spec.body === undefined ? undefined : JSON.stringify(spec.body)
            const headers = body === undefined ? { ...baseHeaders } : { ...baseHeaders, "content-type": spec.contentType ?? "application/json" }
            const res = await open(spec.method, spec.path, headers, body, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]))
            code = res.status
            const text = await readAll(res.body)
            if (res.status < 200 || res.status > 299) throw kubeErrorFromStatus(spec.method, spec.path, res.status, text, res.headers)
            return text === "" ? undefined : JSON.parse(text)
          } finally {
            observe(spec.method, spec.path, code, started)
          }
        },
        catch: (e) => kubeErrorFromUnknown(spec.method, spec.path, e),
      }),
    )

  const stream = (
    path: string,
    onLine: (line: unknown) => Effect.Effect<void, KubeError>,
    project?: (line: unknown) => unknown,
  ): Effect.Effect<void, KubeError> =>
    Effect.andThen(
      throttle,
      Effect.gen(function* () {
        const items = yield* Queue.unbounded<Item>()
        const abort = new AbortController()
        const push = (i: Item) => void Queue.offerUnsafe(items, i)
        const run = async () => {
          const started = performance.now()
          let code = 0
          try {
            const res = await open("GET", path, { ...baseHeaders }, undefined, abort.signal)
            code = res.status
            if (res.status !== 200) {
              push({ _tag: "error", error: kubeErrorFromStatus("GET", path, res.status, await readAll(res.body), res.headers) })
              return
            }
            const decoder = new TextDecoder()
            let buf = ""
            for await (const chunk of res.body) {
              buf += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true })
              let nl: number
              while ((nl = buf.indexOf("\n")) >= 0) {
                const line = buf.slice(0, nl).trim()
                buf = buf.slice(nl + 1)
                if (line !== "") {
                  const value: unknown = JSON.parse(line)
                  push({ _tag: "line", value: project === undefined ? value : project(value) })
                }
              }
            }
            push({ _tag: "end" })
          } catch (e) {
            if (!abort.signal.aborted) push({ _tag: "error", error: kubeErrorFromUnknown("GET", path, e) })
          } finally {
            observe("WATCH", path, code, started)
          }
        }
        void run()
        const consume: Effect.Effect<void, KubeError> = Effect.gen(function* () {
          for (;;) {
            const item = yield* Queue.take(items)
            if (item._tag === "end") return
            if (item._tag === "error") return yield* Effect.fail(item.error)
            yield* onLine(item.value)
          }
        })
        // Interruption (informer stop, watchdog) aborts the request; the resulting AbortError is swallowed above, so a
        // deliberate stop can never look like a failure that schedules a restart (test-infra.md §7.2).
        return yield* consume.pipe(Effect.ensuring(Effect.sync(() => abort.abort())))
      }),
    )

  return { request, stream }
}
