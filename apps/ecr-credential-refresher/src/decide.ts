/**
 * decide: pure. What this pass should do, from what gather observed. No I/O, no clock.
 *
 * static: the admin's docker-config Secret exists, has type kubernetes.io/dockerconfigjson and a login for the
 *   registry host → present (stale once past its `token-expires-at`, if it has one); otherwise a clear failure.
 * aws: the ECR host must name a private ECR registry; mint when this process has not minted yet (at start), when
 *   the refresh time has come, or when either Secret no longer holds what was written (deleted or edited); else up
 *   to date until the refresh time.
 */
import { toConditionTime } from "@aicr/conditions"
import type { LastMint } from "./act"
import { RegistryUnsupportedError, type RefreshError, StaticCredentialsError } from "./errors"
import type { Observed } from "./gather"
import { type EcrRegistry, parseEcrHost } from "./registry"
import { checkStatic, DOCKER_CONFIG_TYPE, secretsCurrent } from "./secrets"

export type Decision =
  | { readonly _tag: "StaticPresent"; readonly expiresAt: number | undefined }
  | { readonly _tag: "StaticStale"; readonly expiresAt: number }
  | { readonly _tag: "Mint"; readonly ecr: EcrRegistry; readonly why: "start" | "due" | "secrets-changed" }
  | { readonly _tag: "UpToDate"; readonly last: LastMint }
  | { readonly _tag: "Fail"; readonly error: RefreshError }

const ref = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`

export const decide = (o: Observed): Decision => {
  const s = o.settings
  if (s.provider === "static") {
    const check = checkStatic(o.dockerConfig, s.registry.host)
    const secret = ref(s.dockerConfig)
    switch (check._tag) {
      case "Missing":
        return {
          _tag: "Fail",
          error: new StaticCredentialsError({
            secret,
            message: `Secret ${secret} not found: create it with type ${DOCKER_CONFIG_TYPE} and a login for ${s.registry.host}, or set registry.auth.provider aws`,
          }),
        }
      case "Invalid":
        return {
          _tag: "Fail",
          error: new StaticCredentialsError({
            secret,
            message: `Secret ${secret} cannot be used: ${check.why}; it needs type ${DOCKER_CONFIG_TYPE} and a login for ${s.registry.host}`,
          }),
        }
      case "Present":
        return check.expiresAt !== undefined && check.expiresAt <= o.now
          ? { _tag: "StaticStale", expiresAt: check.expiresAt }
          : { _tag: "StaticPresent", expiresAt: check.expiresAt }
    }
  }
  const parsed = parseEcrHost(s.ecrHost)
  if (!parsed.ok) return { _tag: "Fail", error: new RegistryUnsupportedError({ host: s.ecrHost, message: `registry.auth.provider is aws but ${parsed.why}` }) }
  const last = o.lastMint
  if (last === undefined) return { _tag: "Mint", ecr: parsed.ecr, why: "start" }
  if (o.now >= last.refreshAt) return { _tag: "Mint", ecr: parsed.ecr, why: "due" }
  if (!secretsCurrent(s.registry, o.repoCreds, o.dockerConfig, toConditionTime(last.expiresAt)))
    return { _tag: "Mint", ecr: parsed.ecr, why: "secrets-changed" }
  return { _tag: "UpToDate", last }
}
