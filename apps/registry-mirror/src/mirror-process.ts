/**
 * registry-mirror's mirror process: each mirror and each check of the recorded tags runs in a child process of its own
 * (`callProcess` in @aicr/runtime), so the OCI client (undici) and what a mirror allocates (the charts it passes
 * through) never stay in the controller ([ADR](../../../docs/adr/20261204-mirror-process.md)). Bundled next to the
 * controller's `main.mjs` as `mirror-process.mjs`; the requests are `MirrorCall`s (mirror-call.ts).
 */
import { answerOf, type CallAnswer, serveCall } from "@aicr/runtime"
import { Effect } from "effect"
import { errorToWire, type MirrorCall, planFromWire, tagsToWire } from "./mirror-call"
import { openRegistry } from "./registry"

const answer = async (call: MirrorCall): Promise<CallAnswer> => {
  const { registry, close } = openRegistry(call.settings, call.userAgent)
  try {
    return call.op === "mirror"
      ? await answerOf(registry.mirror(planFromWire(call.plan)), errorToWire)
      : await answerOf(registry.resolveTags(call.references).pipe(Effect.map(tagsToWire)), errorToWire)
  } finally {
    await close()
  }
}

serveCall((request) => answer(request as MirrorCall))
