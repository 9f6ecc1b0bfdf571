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

/** What the child answers: a value, a failure it knows (the caller's tagged error, as data), or a defect. */
export type CallAnswer = { readonly ok: unknown } | { readonly failed: unknown } | { readonly defect: string }

/** The child could not answer: it did not start, crashed, or wrote something that is not an answer. */
export class ProcessCallError extends Error {
  override readonly name = "ProcessCallError"
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
    child.on("error", (e) => reject(e.name === "AbortError" ? e : new ProcessCallError(`${entry} did not start: ${e.message}`)))
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
      else
        reject(
          new ProcessCallError(
            `${entry} ended ${signal !== null ? `on ${signal}` : `with exit code ${code}`} without an answer${err.trim() !== "" ? `: ${err.trim()}` : ""}`,
          ),
        )
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
