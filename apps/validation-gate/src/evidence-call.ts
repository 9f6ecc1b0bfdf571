/**
 * The gate's registry and signer as calls to its evidence process (evidence-process.ts): each `resolve`, `push` and
 * `sign` is one child process that does the call and exits, so the gate holds neither the OCI client nor the AWS SDK
 * ([ADR](../../../docs/adr/20261204-evidence-process.md)). The answers are the same `EvidenceError`s as in the gate;
 * a child that ends without an answer is a transient `EvidenceProcessFailed` (retried with backoff, its stderr in the
 * message); a defect the child reports is a defect here too.
 */
import { callProcess, type CallAnswer, ProcessCallError } from "@aicr/runtime"
import { Effect } from "effect"
import type { EvidenceRegistryShape, SignerShape } from "./act"
import type { GateSettings } from "./config"
import { EvidenceError } from "./errors"
import type { EvidencePush } from "./evidence"

type RegistrySettings = Pick<GateSettings, "dockerConfig" | "plainHttp">

/** An `EvidencePush` as JSON: the files' bytes in base64. */
interface EvidencePushWire extends Omit<EvidencePush, "files"> {
  readonly files: ReadonlyArray<{ readonly name: string; readonly mediaType: string; readonly bytes: string }>
}

/** One request to the evidence process. */
export type EvidenceCall =
  | { readonly op: "resolve"; readonly settings: RegistrySettings; readonly userAgent: string; readonly ref: string }
  | { readonly op: "push"; readonly settings: RegistrySettings; readonly userAgent: string; readonly push: EvidencePushWire }
  | { readonly op: "sign"; readonly key: string; readonly payload: string }

const pushToWire = (p: EvidencePush): EvidencePushWire => ({ ...p, files: p.files.map((f) => ({ ...f, bytes: Buffer.from(f.bytes).toString("base64") })) })
export const pushFromWire = (p: EvidencePushWire): EvidencePush => ({ ...p, files: p.files.map((f) => ({ ...f, bytes: Buffer.from(f.bytes, "base64") })) })

const settled = (answer: CallAnswer): Effect.Effect<string, EvidenceError> => {
  if ("ok" in answer && typeof answer.ok === "string") return Effect.succeed(answer.ok)
  if ("failed" in answer) {
    const f = answer.failed as { transient?: unknown; reason?: unknown; message?: unknown }
    if (typeof f.transient === "boolean" && typeof f.reason === "string" && typeof f.message === "string")
      return Effect.fail(new EvidenceError({ transient: f.transient, reason: f.reason, message: f.message }))
  }
  return Effect.die(new Error(`the evidence process answered ${"defect" in answer ? answer.defect : JSON.stringify(answer).slice(0, 400)}`))
}

/** A child that ended without an answer (it could not start, or was killed: OOM, a node under pressure) is retried. */
const call = (entry: string, request: EvidenceCall): Effect.Effect<string, EvidenceError> =>
  Effect.tryPromise({ try: (signal) => callProcess(entry, request, { signal }), catch: (e) => e }).pipe(
    Effect.catch((e) =>
      e instanceof ProcessCallError
        ? Effect.fail(new EvidenceError({ transient: true, reason: "EvidenceProcessFailed", message: `the evidence process failed: ${e.message}` }))
        : Effect.die(e),
    ),
    Effect.flatMap(settled),
  )

/** The registry side, each call in its own process started from `entry` (the bundle's `evidence-process.mjs`). */
export const processRegistry = (entry: string, settings: RegistrySettings, userAgent: string): EvidenceRegistryShape => {
  const s: RegistrySettings = { dockerConfig: settings.dockerConfig, plainHttp: settings.plainHttp }
  return {
    resolve: (ref) => call(entry, { op: "resolve", settings: s, userAgent, ref }),
    push: (p) => call(entry, { op: "push", settings: s, userAgent, push: pushToWire(p) }),
  }
}

/** The signer of a configured key (`--signing-key`), each signature in its own process. */
export const processSigner = (entry: string, key: string): SignerShape => ({
  sign: (payload) => call(entry, { op: "sign", key, payload: Buffer.from(payload).toString("base64") }),
})
