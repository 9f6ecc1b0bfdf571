/**
 * The gate's registry and signer as calls to its evidence process (evidence-process.ts): each `resolve`, `push` and
 * `sign` is one child process that does the call and exits, so the gate holds neither the OCI client nor the AWS SDK
 * ([ADR](../../../docs/adr/20261204-evidence-process.md)). The answers are the same `EvidenceError`s as in the gate;
 * a child that ends without an answer is a transient `EvidenceProcessFailed` (retried with backoff, its stderr in the
 * message); a defect the child reports is a defect here too.
 */
import { callInProcess, type CallDecoder } from "@aicr/runtime"
import type { Effect } from "effect"
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

const evidence: CallDecoder<string, EvidenceError> = {
  what: "the evidence process",
  ok: (v): v is string => typeof v === "string",
  failed: (v) => {
    const f = v as { transient?: unknown; reason?: unknown; message?: unknown }
    return typeof f.transient === "boolean" && typeof f.reason === "string" && typeof f.message === "string"
      ? new EvidenceError({ transient: f.transient, reason: f.reason, message: f.message })
      : undefined
  },
  // A child that ended without an answer (it could not start, or was killed: OOM, a node under pressure) is retried.
  lost: (e) => new EvidenceError({ transient: true, reason: "EvidenceProcessFailed", message: `the evidence process failed: ${e.message}` }),
}
const call = (entry: string, request: EvidenceCall): Effect.Effect<string, EvidenceError> => callInProcess(entry, request, evidence)

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
