/**
 * One call in a process of its own. Some work needs libraries that stay in a process once loaded and keep the memory
 * their first use allocated (an OCI client with undici, the AWS SDK): a controller that does such work once per
 * rollout pays for it at every idle minute after. `callProcess` runs one call in a child `node` process started from
 * a second entry of the controller's bundle (`apps/<app>/src/*-process.ts`, bundled next to `main.mjs` by
 * hack/build-apps.ts); the request goes in on stdin as JSON, the answer comes back on stdout as JSON, and the child
 * exits, giving everything back to the system. `serveCall` is the child's side.
 *
 * The child inherits the caller's environment as it is at the call (credentials set or rotated since the controller
 * started are seen), not the V8 flags the caller set in itself. Aborting the call kills the child.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"

/** What the child answers: a value, a failure it knows (the caller's tagged error, as data), or a defect. */
export type CallAnswer = { readonly ok: unknown } | { readonly failed: unknown } | { readonly defect: string }

/** The child could not answer: it did not start, crashed, or wrote something that is not an answer. */
export class ProcessCallError extends Error {
  override readonly name = "ProcessCallError"
  /**
   * @param ended how the child ended, short enough for a condition's cause: "did not start", "ended on SIGKILL",
   * "ended with exit code 1" (the message adds the entry and the end of its stderr)
   */
  constructor(
    message: string,
    readonly ended: string,
  ) {
    super(message)
  }
}

const STDERR_KEPT = 4096

const isAnswer = (v: unknown): v is CallAnswer =>
  typeof v === "object" && v !== null && ("ok" in v || "failed" in v || ("defect" in v && typeof (v as { defect: unknown }).defect === "string"))

/** Runs `node <entry>` with `request` on stdin; resolves with its answer, rejects with `ProcessCallError` or an abort. */
export const callProcess = (entry: string, request: unknown, options: { readonly signal?: AbortSignal } = {}): Promise<CallAnswer> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry], {
      stdio: ["pipe", "pipe", "pipe"],
      env: process.env,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    })
    const out: Buffer[] = []
    let err = ""
    child.stdout.on("data", (b: Buffer) => out.push(b))
    child.stderr.on("data", (b: Buffer) => {
      err = (err + b.toString("utf8")).slice(-STDERR_KEPT)
    })
    child.stdin.on("error", () => undefined) // a child that exits before reading: its exit says why
    child.on("error", (e) => reject(e.name === "AbortError" ? e : new ProcessCallError(`${entry} did not start: ${e.message}`, "did not start")))
    child.on("close", (code, signal) => {
      if (options.signal?.aborted === true) return // the "error" event rejected with the abort
      const text = Buffer.concat(out).toString("utf8")
      let answer: unknown
      try {
        answer = JSON.parse(text)
      } catch {
        answer = undefined
      }
      if (code === 0 && isAnswer(answer)) resolve(answer)
      else {
        const ended = `ended ${signal !== null ? `on ${signal}` : `with exit code ${code}`}`
        reject(new ProcessCallError(`${entry} ${ended} without an answer${err.trim() !== "" ? `: ${err.trim()}` : ""}`, ended))
      }
    })
    child.stdin.end(JSON.stringify(request))
  })

/** The child's side: reads the request from stdin, writes `handle`'s answer to stdout, and exits. */
export const serveCall = (handle: (request: unknown) => Promise<CallAnswer>): void => {
  const chunks: Buffer[] = []
  process.stdin.on("data", (b: Buffer) => chunks.push(b))
  process.stdin.on("end", () => {
    const answered = (() => {
      try {
        return handle(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (e) {
        return Promise.reject(e)
      }
    })()
    void answered
      .catch((e: unknown): CallAnswer => ({ defect: e instanceof Error ? (e.stack ?? e.message) : String(e) }))
      .then((a) => process.stdout.write(JSON.stringify(a), () => process.exit(0)))
  })
}

/** How a caller reads its process's answers: its value, its known failures, and a child that gave none. */
export interface CallDecoder<A, E> {
  /** The process as defect messages name it, e.g. "the evidence process". */
  readonly what: string
  /** The answer's value, if it is one of this call's. */
  readonly ok: (value: unknown) => value is A
  /** The caller's error a failure stands for; undefined: not one of its failures (a defect). */
  readonly failed: (failure: unknown) => E | undefined
  /** The error of a child that ended without an answer (it could not start, or was killed). */
  readonly lost: (e: ProcessCallError) => E
}

/**
 * `callProcess` as an Effect: the value, the caller's failure (a known one, or `lost`), or a defect (a defect the child
 * reported, an answer of the wrong shape; a value of the wrong shape is not quoted in the defect, as it may be a
 * secret). Interrupting it kills the child.
 */
export const callInProcess = <A, E>(entry: string, request: unknown, d: CallDecoder<A, E>): Effect.Effect<A, E> =>
  Effect.tryPromise({ try: (signal) => callProcess(entry, request, { signal }), catch: (e) => e }).pipe(
    Effect.catch((e) => (e instanceof ProcessCallError ? Effect.fail(d.lost(e)) : Effect.die(e))),
    Effect.flatMap((answer): Effect.Effect<A, E> => {
      if ("ok" in answer && d.ok(answer.ok)) return Effect.succeed(answer.ok)
      const failure = "failed" in answer ? d.failed(answer.failed) : undefined
      if (failure !== undefined) return Effect.fail(failure)
      // A value is not printed: it may be a secret (a minted token) that must not reach a log.
      if ("ok" in answer) return Effect.die(new Error(`${d.what} answered a value of the wrong shape`))
      return Effect.die(new Error(`${d.what} answered ${"defect" in answer ? answer.defect : JSON.stringify(answer).slice(0, 400)}`))
    }),
  )

/** The child's answer for an Effect: its value, its failure as `toData` makes it, or (rejected) a defect. */
export const answerOf = <A, E>(e: Effect.Effect<A, E>, toData: (failure: E) => unknown): Promise<CallAnswer> =>
  Effect.runPromise(
    e.pipe(
      Effect.map((ok): CallAnswer => ({ ok })),
      Effect.catch((f) => Effect.succeed<CallAnswer>({ failed: toData(f) })),
    ),
  )

/** Tagged error classes by tag (effect's `Data.TaggedError`): what a caller rebuilds a child's failure as. */
export type TaggedErrorClasses<E extends { readonly _tag: string }> = {
  readonly [K in E["_tag"]]: new (fields: never) => Extract<E, { readonly _tag: K }>
}

/**
 * A tagged error as JSON for the answer: its `_tag` and its own string fields (`message` included, an own but not
 * enumerable field of an Error; `stack` left out); a field given as undefined crosses as null.
 */
export const taggedErrorToWire = (e: { readonly _tag: string }): Record<string, string | null> => {
  const fields: Record<string, string | null> = {}
  for (const k of Object.getOwnPropertyNames(e)) {
    const v = (e as unknown as Record<string, unknown>)[k]
    if (k !== "stack" && typeof v === "string") fields[k] = v
    else if (v === undefined && Object.prototype.propertyIsEnumerable.call(e, k)) fields[k] = null
  }
  return { ...fields, _tag: e._tag }
}

/**
 * The reader of `taggedErrorToWire`'s JSON: the error rebuilt as its class with the same fields (so a condition reads
 * exactly as in the child; a null field is given as undefined), or undefined when it is none of `classes` (a defect
 * for the caller): not an object, an unknown tag, a field neither a string nor null, no `message`, or a field
 * `required` names for its tag missing.
 */
export const taggedErrorFromWire =
  <E extends { readonly _tag: string }>(classes: TaggedErrorClasses<E>, required: { readonly [K in E["_tag"]]?: ReadonlyArray<string> } = {}) =>
  (v: unknown): E | undefined => {
    if (typeof v !== "object" || v === null) return undefined
    const { _tag, ...fields } = v as Record<string, unknown>
    if (typeof _tag !== "string" || !Object.hasOwn(classes, _tag)) return undefined
    const tag = _tag as E["_tag"]
    if (typeof fields["message"] !== "string" || !Object.values(fields).every((f) => typeof f === "string" || f === null)) return undefined
    if (!(required[tag] ?? []).every((k) => typeof fields[k] === "string")) return undefined
    const given = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f ?? undefined]))
    return new (classes[tag] as unknown as new (fields: Record<string, unknown>) => E)(given)
  }

/**
 * The bundled process `<name>.mjs` next to the entry whose `import.meta.url` is given (hack/build-apps.ts puts an
 * app's `src/<name>.ts` there), or undefined when there is none (run from sources).
 */
export const siblingProcess = (entryUrl: string, name: string): string | undefined => {
  const file = fileURLToPath(new URL(`./${name}.mjs`, entryUrl))
  return existsSync(file) ? file : undefined
}
