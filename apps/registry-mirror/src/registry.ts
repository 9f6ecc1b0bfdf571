/**
 * The OCI side of the controller: the `@aicr/oras` client (and with it undici) and the mirror executor behind the
 * `Registry` service. As shipped, only the mirror process (mirror-process.ts) loads this module, once per call, so the
 * controller never holds them; run from sources, the controller loads it on its first mirror (`lazyRegistry` in
 * act.ts) and keeps it. Tests and the bench use `fromClient` with a client of their own.
 */
import { type CredentialProvider, dockerConfigCredentials, OciClient } from "@aicr/oras"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import type { RegistryShape } from "./act"
import type { MirrorSettings } from "./config"
import { isMirrorError, RegistryCredentialsUnavailableError } from "./errors"
import { checkTags, runMirror } from "./mirror"

/** A docker config file re-read at every handshake, so rotated credentials are picked up without a restart. */
export const credentialsFrom = (path: string | undefined): CredentialProvider | undefined =>
  path === undefined
    ? undefined
    : async (registry) => {
        let text: string
        try {
          text = await readFile(path, "utf8")
        } catch (e) {
          throw new RegistryCredentialsUnavailableError({
            path,
            message: `Registry credentials ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
          })
        }
        let config: unknown
        try {
          config = JSON.parse(text)
        } catch {
          throw new RegistryCredentialsUnavailableError({ path, message: `Registry credentials ${path} are not a docker config.json` })
        }
        return dockerConfigCredentials({ config: config as never })(registry)
      }

/** The `Registry` service over an existing client (tests and the bench share one). */
export const fromClient = (client: OciClient, settings: Pick<MirrorSettings, "rewrites" | "concurrency">): RegistryShape => ({
  mirror: (plan) =>
    Effect.tryPromise({
      try: (signal) => runMirror(client, plan, { rewrites: settings.rewrites, concurrency: settings.concurrency, signal }),
      catch: (e) => e,
    }).pipe(Effect.catch((e) => (isMirrorError(e) ? Effect.fail(e) : Effect.die(e)))),
  resolveTags: (references) =>
    Effect.tryPromise({
      try: (signal) => checkTags(client, references, { concurrency: settings.concurrency, signal }),
      catch: (e) => e,
    }).pipe(Effect.catch((e) => (isMirrorError(e) ? Effect.fail(e) : Effect.die(e)))),
})

/** The controller's registry: a client with the settings' credentials and plain-HTTP hosts, and how to close it. */
export const openRegistry = (
  settings: Pick<MirrorSettings, "dockerConfig" | "plainHttp" | "rewrites" | "concurrency">,
  userAgent: string,
): { readonly registry: RegistryShape; readonly close: () => Promise<void> } => {
  const client = new OciClient({ credentials: credentialsFrom(settings.dockerConfig), plainHttp: settings.plainHttp, userAgent })
  return { registry: fromClient(client, settings), close: () => client.close() }
}
