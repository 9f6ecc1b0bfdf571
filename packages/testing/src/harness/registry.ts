// A local OCI registry: Debian's CNCF distribution (`docker-registry serve <config>`) on a free loopback port,
// plain HTTP, filesystem storage in the state dir, optional htpasswd (bcrypt) basic auth.
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ensureDir, freePort, type Proc, retryPortClash, spawnProc, waitReady } from "./proc"
import { toolPath } from "./tools"

export interface RegistryOptions {
  /** State directory (config, storage, logs/registry.log). Default: a new temp dir. */
  readonly dir?: string
  /** Require basic auth with this user and password. */
  readonly htpasswd?: { readonly user: string; readonly password: string }
  readonly port?: number
  /** Component name, used for the log file (default "registry"). */
  readonly name?: string
  /** false: survive this process (CLI `up --detach`). Default true. */
  readonly attached?: boolean
  /** Allow `DELETE /v2/<name>/manifests/<digest>` (tests of content that went missing). Default false. */
  readonly deletes?: boolean
}

export interface Registry {
  /** host:port, e.g. 127.0.0.1:41234 (plain HTTP). */
  readonly address: string
  readonly dir: string
  /** With `htpasswd`: the file distribution reads; rewrite it (`htpasswdLine`) to change the login, no restart. */
  readonly htpasswdFile?: string | undefined
  readonly proc: Proc
  stop(): Promise<void>
}

/** `user:$2y$…` via `htpasswd -nbB` (apache2-utils); distribution only accepts bcrypt entries. */
export const htpasswdLine = (user: string, password: string): string =>
  execFileSync(toolPath("htpasswd"), ["-nbB", "-C", "5", user, password], { encoding: "utf8" }).trim()

export const registryConfig = (o: { addr: string; root: string; htpasswdFile?: string; deletes?: boolean }): string =>
  [
    "version: 0.1",
    "log:",
    "  level: warn",
    "  accesslog: {disabled: true}",
    "storage:",
    `  filesystem: {rootdirectory: ${JSON.stringify(o.root)}}`,
    "  cache: {blobdescriptor: inmemory}",
    "  maintenance: {uploadpurging: {enabled: false}}",
    ...(o.deletes === true ? ["  delete: {enabled: true}"] : []),
    "http:",
    `  addr: ${o.addr}`,
    `  secret: ${randomBytes(16).toString("hex")}`,
    "  headers: {X-Content-Type-Options: [nosniff]}",
    ...(o.htpasswdFile ? ["auth:", `  htpasswd: {realm: aicr-registry, path: ${JSON.stringify(o.htpasswdFile)}}`] : []),
    "",
  ].join("\n")

export const startRegistry = (opts: RegistryOptions = {}): Promise<Registry> => retryPortClash(opts.port !== undefined, () => startRegistryOnce(opts))

const startRegistryOnce = async (opts: RegistryOptions): Promise<Registry> => {
  const name = opts.name ?? "registry"
  const dir = ensureDir(opts.dir ?? mkdtempSync(join(tmpdir(), "aicr-registry-")))
  // A temp dir we made is ours to remove on stop().
  const cleanup = () => (opts.dir ? undefined : rmSync(dir, { recursive: true, force: true }))
  const bin = toolPath("docker-registry")
  const port = opts.port ?? (await freePort())
  const address = `127.0.0.1:${port}`
  const confDir = ensureDir(join(dir, name))
  let htpasswdFile: string | undefined
  if (opts.htpasswd) {
    htpasswdFile = join(confDir, "htpasswd")
    writeFileSync(htpasswdFile, htpasswdLine(opts.htpasswd.user, opts.htpasswd.password) + "\n", { mode: 0o600 })
  }
  const config = join(confDir, "config.yml")
  writeFileSync(config, registryConfig({ addr: address, root: ensureDir(join(confDir, "data")), htpasswdFile, deletes: opts.deletes === true }))
  const proc = await spawnProc({
    name,
    bin,
    args: ["serve", config],
    logDir: join(dir, "logs"),
    attached: opts.attached,
    // The registry reads REGISTRY_* overrides from its environment; keep the caller's out.
    env: Object.fromEntries(
      Object.keys(process.env)
        .filter((k) => k.startsWith("REGISTRY_"))
        .map((k) => [k, undefined]),
    ),
  })
  const stop = async () => {
    await proc.stop()
    cleanup()
  }
  await waitReady(
    proc,
    async () => {
      const res = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(2_000) })
      await res.body?.cancel()
      return res.status === 200 || (opts.htpasswd !== undefined && res.status === 401)
    },
    30_000,
    50,
  )
  return { address, dir, htpasswdFile, proc, stop }
}
