/**
 * report: pure. The owned condition (`RegistryCredentialsReady`) and the status room (`status.credentials`) for every
 * outcome, on every path. Messages hold no times (the times are in `status.credentials`), so an unchanged state
 * makes no write; a refresh rewrites `expiresAt` and `refreshedAt` only.
 */
import { RegistryCredentialsReady } from "@aicr/api"
import { type ConditionIntent, materialize, toConditionTime } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import { Requeue } from "@aicr/runtime"
import type { LastMint } from "./act"
import type { FailureOutcome } from "./errors"
import type { CredentialsStatus, Observed } from "./gather"
import { until } from "./schedule"
import { expiresAtOf } from "./secrets"

export type Outcome =
  | { readonly _tag: "Minted"; readonly last: LastMint }
  | { readonly _tag: "UpToDate"; readonly last: LastMint }
  | { readonly _tag: "StaticPresent"; readonly expiresAt: number | undefined }
  | FailureOutcome

const ref = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`

export const credentialsCondition = (o: Observed, outcome: Outcome): ConditionIntent<"RegistryCredentialsReady"> => {
  const s = o.settings
  switch (outcome._tag) {
    case "Minted":
    case "UpToDate":
      return RegistryCredentialsReady.true(
        "TokenRefreshed",
        `ECR token for ${s.ecrHost} written to ${ref(s.repoCreds)} (Argo CD repo-creds) and ${ref(s.dockerConfig)} (pushing components); refreshed before it expires`,
      )
    case "StaticPresent":
      return RegistryCredentialsReady.true("CredentialsPresent", `Secret ${ref(s.dockerConfig)} holds a login for ${s.registry.host}`)
    case "Failed":
      return outcome.condition
  }
}

/** The room: what is written where, and until when. */
export const credentialsRoom = (o: Observed, outcome: Outcome): CredentialsStatus => {
  const s = o.settings
  if (s.provider === "static") {
    const expiresAt = expiresAtOf(o.dockerConfig)
    return { provider: "static", dockerConfigSecret: s.dockerConfig, ...(expiresAt === undefined ? {} : { expiresAt: toConditionTime(expiresAt) }) }
  }
  const base = { provider: "aws" as const, secret: s.repoCreds, dockerConfigSecret: s.dockerConfig }
  const last = outcome._tag === "Minted" || outcome._tag === "UpToDate" ? outcome.last : o.lastMint
  if (last !== undefined) return { ...base, expiresAt: toConditionTime(last.expiresAt), refreshedAt: toConditionTime(last.mintedAt) }
  // Nothing minted by this process yet: keep what an earlier one recorded, if it still describes these Secrets.
  const before = o.runtime?.status?.credentials
  const expiresAt = expiresAtOf(o.repoCreds)
  return {
    ...base,
    ...(expiresAt === undefined ? {} : { expiresAt: toConditionTime(expiresAt) }),
    ...(before?.refreshedAt !== undefined && before.expiresAt !== undefined && expiresAt !== undefined && Date.parse(before.expiresAt) === expiresAt
      ? { refreshedAt: before.refreshedAt }
      : {}),
  }
}

/** The complete status write: `RegistryCredentialsReady` plus `status.credentials`. */
export const report = (o: Observed, outcome: Outcome): StatusWrite => ({
  conditions: materialize([credentialsCondition(o, outcome)], { existing: o.runtime?.status?.conditions, generation: o.generation, now: o.now }),
  credentials: credentialsRoom(o, outcome),
})

/** When to look again: the refresh time after a mint, a static token's expiry, or the failure's own requeue. */
export const requeueOf = (o: Observed, outcome: Outcome): Requeue => {
  switch (outcome._tag) {
    case "Minted":
    case "UpToDate":
      return Requeue.after(Math.max(1_000, until(outcome.last.refreshAt, o.now)))
    case "StaticPresent":
      return outcome.expiresAt === undefined ? Requeue.onChange : Requeue.after(until(outcome.expiresAt, o.now) + 1_000)
    case "Failed":
      return outcome.requeue
  }
}
