/**
 * The refresher's mint process: each `ecr:GetAuthorizationToken` runs in a child process of its own (`callProcess`
 * in @aicr/runtime), so the AWS SDK never loads in the refresher and what a mint allocates goes back to the system
 * when it ends ([ADR](../../../docs/adr/20261204-mint-process.md)). Bundled next to the refresher's `main.mjs` as
 * `mint-process.mjs`; the requests are `MintCall`s (mint-call.ts). The token leaves only as the answer on stdout, a
 * pipe to the refresher; nothing is written to stderr (the caller puts a failed child's stderr in its error message).
 */
import { answerOf, type CallAnswer, serveCall } from "@aicr/runtime"
import { openEcr } from "./ecr"
import { type MintCall, mintErrorToWire } from "./mint-call"

const answer = async (call: MintCall): Promise<CallAnswer> => {
  const { ecr, close } = openEcr(call.userAgent)
  try {
    return await answerOf(ecr.mint(call.registry), mintErrorToWire)
  } finally {
    close()
  }
}

serveCall((request) => answer(request as MintCall))
