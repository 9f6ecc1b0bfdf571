/**
 * The resolver's bundle process: each pull of a pushed bundle runs in a child process of its own (`callProcess` in
 * @aicr/runtime), so the OCI client (undici) and the unpacked layer never stay in the resolver
 * ([ADR](../../../docs/adr/20261204-resolver-memory.md)). Bundled next to the resolver's `main.mjs` as
 * `bundle-process.mjs`; the requests are `BundleCall`s (bundle-call.ts).
 */
import { answerOf, type CallAnswer, serveCall } from "@aicr/runtime"
import type { BundleCall } from "./bundle-call"
import { openBundleStore } from "./registry"

const answer = async (call: BundleCall): Promise<CallAnswer> => {
  const { store, close } = openBundleStore(call.settings, call.userAgent)
  try {
    return await answerOf(store.pull(call.reference), (f) => ({ kind: f.kind, message: f.message }))
  } finally {
    await close()
  }
}

serveCall((request) => answer(request as BundleCall))
