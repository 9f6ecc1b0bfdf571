/**
 * The gate's evidence process: one registry or KMS call per process (`callProcess` in @aicr/runtime), so the OCI client
 * (undici) and the AWS SDK a validation run needs never load in the gate, and what they allocate goes back to the
 * system when the call ends ([ADR](../../../docs/adr/20261204-evidence-process.md)). Bundled next to the gate's
 * `main.mjs` as `evidence-process.mjs`; the requests are `EvidenceCall`s (evidence-call.ts).
 */
import { answerOf, type CallAnswer, serveCall } from "@aicr/runtime"
import type { Effect } from "effect"
import type { EvidenceError } from "./errors"
import { type EvidenceCall, pushFromWire } from "./evidence-call"
import { openRegistry } from "./registry"
import { lazySigner } from "./signer"

const answer = async (call: EvidenceCall): Promise<CallAnswer> => {
  if (call.op === "sign") return run(lazySigner(call.key).sign(Buffer.from(call.payload, "base64")))
  const { registry, close } = openRegistry(call.settings, call.userAgent)
  try {
    return await run(call.op === "resolve" ? registry.resolve(call.ref) : registry.push(pushFromWire(call.push)))
  } finally {
    await close()
  }
}

/** A value, or the gate's own error as data; anything else rejects (a defect, reported as one). */
const run = (e: Effect.Effect<string, EvidenceError>): Promise<CallAnswer> =>
  answerOf(e, (f) => ({ transient: f.transient, reason: f.reason, message: f.message }))

serveCall((request) => answer(request as EvidenceCall))
