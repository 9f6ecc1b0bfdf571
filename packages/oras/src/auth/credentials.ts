/**
 * Where registry credentials come from: a pluggable {@link CredentialProvider}, with ready-made providers for a
 * static map, Docker's `config.json` (`auths`, `credHelpers`, `credsStore`) and a chain of providers.
 */
import { execFile } from "node:child_process"
import { readFile } from "node:fs/promises"
import { homedir } from "node:os"
import { join } from "node:path"
import { DOCKER_HUB } from "../reference"

/** A username/password pair, used for basic auth or to obtain a bearer token. */
export interface Credential {
  readonly username: string
  readonly password: string
}

/**
 * Looks up credentials for a registry host (`host[:port]`, `docker.io` for Docker Hub); `undefined` means
 * anonymous. Called on every authentication handshake, so a provider may hand out short-lived tokens (ECR) and
 * rotate them; it should cache internally if lookups are expensive.
 *
 * @example
 * ```ts
 * import type { CredentialProvider } from "@aicr/oras"
 * const ecr: CredentialProvider = async (registry) =>
 *   registry.endsWith(".amazonaws.com") ? { username: "AWS", password: "token-from-elsewhere" } : undefined
 * ```
 */
export type CredentialProvider = (registry: string) => Promise<Credential | undefined>

/** No credentials for anyone. */
export const anonymous: CredentialProvider = async () => undefined

/** Credentials from a fixed map keyed by registry host. */
export const staticCredentials =
  (byRegistry: Readonly<Record<string, Credential>>): CredentialProvider =>
  async (registry) =>
    byRegistry[registry]

/** The first provider that returns credentials wins. */
export const chainCredentials =
  (...providers: readonly CredentialProvider[]): CredentialProvider =>
  async (registry) => {
    for (const p of providers) {
      const found = await p(registry)
      if (found !== undefined) return found
    }
    return undefined
  }

/** The subset of Docker's `config.json` we read. */
export interface DockerConfig {
  readonly auths?: Readonly<Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>>
  readonly credHelpers?: Readonly<Record<string, string>>
  readonly credsStore?: string
}

/** Normalises a `config.json` key (`https://index.docker.io/v1/`, `http://host:5000/`, `host`) to a registry host. */
export const dockerConfigKey = (key: string): string => {
  const host = key.replace(/^[a-z]+:\/\//, "").replace(/\/.*$/, "")
  return host === "index.docker.io" || host === "registry-1.docker.io" ? DOCKER_HUB : host
}

/** Runs `docker-credential-<helper> get` for `serverUrl`. */
export type CredentialHelperRunner = (helper: string, serverUrl: string) => Promise<Credential | undefined>

const runHelper: CredentialHelperRunner = (helper, serverUrl) =>
  new Promise((resolve, reject) => {
    const child = execFile(`docker-credential-${helper}`, ["get"], { timeout: 30_000 }, (err, stdout) => {
      if (err !== null) {
        // Helpers exit non-zero with "credentials not found in native keychain" for unknown servers.
        if (/not found/i.test(stdout) || /not found/i.test(String(err.message))) resolve(undefined)
        else reject(err)
        return
      }
      const parsed = JSON.parse(stdout) as { Username?: string; Secret?: string }
      resolve(parsed.Secret !== undefined ? { username: parsed.Username ?? "", password: parsed.Secret } : undefined)
    })
    child.stdin?.end(serverUrl)
  })

/** Options of {@link dockerConfigCredentials}. */
export interface DockerConfigOptions {
  /** An already-parsed config; wins over `path`. */
  readonly config?: DockerConfig
  /** Default: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. A missing file means no credentials. */
  readonly path?: string
  /** Replaces the credential-helper process runner (tests). */
  readonly runHelper?: CredentialHelperRunner
}

/**
 * Credentials from a Docker `config.json` (also Helm's `registry/config.json`, same format).
 *
 * Gotchas:
 * - Resolution order per registry: `credHelpers[registry]`, then `auths` (inline `auth` or `username`/`password`),
 *   then `credsStore`. `identitytoken` entries (OAuth2 refresh tokens) are not supported and are skipped.
 * - The file is read once, lazily, at the first lookup.
 *
 * @example
 * ```ts
 * import { dockerConfigCredentials } from "@aicr/oras"
 * const creds = dockerConfigCredentials({ config: { auths: { "127.0.0.1:5000": { auth: btoa("u:p") } } } })
 * await creds("127.0.0.1:5000") // { username: "u", password: "p" }
 * ```
 */
export const dockerConfigCredentials = (options: DockerConfigOptions = {}): CredentialProvider => {
  const run = options.runHelper ?? runHelper
  let loaded: Promise<DockerConfig> | undefined
  const load = (): Promise<DockerConfig> => {
    if (options.config !== undefined) return Promise.resolve(options.config)
    const path = options.path ?? join(process.env.DOCKER_CONFIG ?? join(homedir(), ".docker"), "config.json")
    return readFile(path, "utf8").then(
      (text) => JSON.parse(text) as DockerConfig,
      (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? {} : Promise.reject(err)),
    )
  }
  return async (registry) => {
    loaded ??= load()
    const config = await loaded
    const helper = Object.entries(config.credHelpers ?? {}).find(([k]) => dockerConfigKey(k) === registry)?.[1]
    if (helper !== undefined) return run(helper, registry)
    const entry = Object.entries(config.auths ?? {}).find(([k]) => dockerConfigKey(k) === registry)?.[1]
    if (entry !== undefined) {
      if (entry.auth !== undefined && entry.auth.length > 0) {
        const decoded = Buffer.from(entry.auth, "base64").toString("utf8")
        const colon = decoded.indexOf(":")
        if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
      }
      if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password }
    }
    if (config.credsStore !== undefined && config.credsStore.length > 0) {
      return run(config.credsStore, registry === DOCKER_HUB ? "https://index.docker.io/v1/" : registry)
    }
    return undefined
  }
}
