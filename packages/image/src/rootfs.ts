/**
 * The distroless-style root filesystems: Debian packages unpacked (no maintainer scripts run), documentation
 * dropped except each package's copyright file, and the few files a package's scripts or a base image would have
 * made: passwd/group with `root` and `nonroot` (65532, distroless's), nsswitch.conf, the CA bundle, /tmp, the home
 * directories, and `/var/lib/dpkg/status.d/<package>` (each package's control fields, where image scanners look on
 * distroless images).
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type Arch, debianLock, type DebianLock, debianPackage, imageCache, unpackDeb } from "./inputs"
import type { OwnerRule } from "./layer"

/** The user the operator's images run as (distroless's `nonroot`). */
export const NONROOT = 65532

/** Packages of every image: C and C++ runtime (Node needs both; gcc-12-base holds their copyright), CA certificates, time zones, /etc/services. */
export const BASE_PACKAGES = ["libc6", "gcc-12-base", "libgcc-s1", "libstdc++6", "ca-certificates", "tzdata", "netbase"] as const
/** A POSIX shell and coreutils, for the AICR image (its agent runs the host's `nvidia-smi`, a script on fake hosts). */
export const SHELL_PACKAGES = ["dash", "coreutils", "libacl1", "libattr1", "libgmp10", "libselinux1", "libpcre2-8-0"] as const

export const BASE_OWNERS: ReadonlyArray<OwnerRule> = [{ prefix: "home/nonroot", uid: NONROOT, gid: NONROOT }]

const write = (root: string, rel: string, content: string, mode = 0o644) => {
  const file = join(root, rel)
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, content)
  chmodSync(file, mode)
}

const dir = (root: string, rel: string, mode: number) => {
  mkdirSync(join(root, rel), { recursive: true })
  chmodSync(join(root, rel), mode)
}

/** Keeps only `usr/share/doc/<pkg>/copyright`; drops man pages, info, lintian overrides. */
const dropDocs = (root: string) => {
  const doc = join(root, "usr/share/doc")
  if (existsSync(doc)) {
    for (const pkg of readdirSync(doc)) {
      const d = join(doc, pkg)
      // Some packages' doc directory is a symlink to another package's (libgcc-s1 → gcc-12-base): keep it.
      if (lstatSync(d).isSymbolicLink()) continue
      for (const f of readdirSync(d)) if (f !== "copyright") rmSync(join(d, f), { recursive: true, force: true })
    }
  }
  for (const rel of ["usr/share/man", "usr/share/info", "usr/share/lintian", "usr/share/bug", "usr/share/common-licenses"])
    rmSync(join(root, rel), { recursive: true, force: true })
}

/** Unpacks `packages` for `arch` into `root`, recording each in var/lib/dpkg/status.d. */
export const unpackPackages = async (
  root: string,
  packages: ReadonlyArray<string>,
  arch: Arch,
  lock: DebianLock = debianLock(),
  cache: string = imageCache(),
) => {
  mkdirSync(root, { recursive: true })
  for (const name of packages) {
    const control = await unpackDeb(await debianPackage(name, arch, lock, cache), root)
    write(root, `var/lib/dpkg/status.d/${name}`, control.endsWith("\n") ? control : `${control}\n`)
  }
  dropDocs(root)
}

/** The base root filesystem: BASE_PACKAGES plus the files their maintainer scripts or a base image provide. */
export const baseRootfs = async (root: string, arch: Arch, lock: DebianLock = debianLock(), cache: string = imageCache()) => {
  await unpackPackages(root, BASE_PACKAGES, arch, lock, cache)
  write(
    root,
    "etc/passwd",
    [
      "root:x:0:0:root:/root:/sbin/nologin",
      "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin",
      `nonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin`,
      "",
    ].join("\n"),
  )
  write(root, "etc/group", ["root:x:0:", "tty:x:5:", "staff:x:50:", "nogroup:x:65534:", `nonroot:x:${NONROOT}:`, ""].join("\n"))
  write(
    root,
    "etc/nsswitch.conf",
    ["passwd: files", "group: files", "shadow: files", "hosts: files dns", "networks: files", "protocols: files", "services: files", ""].join("\n"),
  )
  write(
    root,
    "etc/os-release",
    [
      'PRETTY_NAME="aicr-operator base (Debian GNU/Linux 12 packages)"',
      'NAME="aicr-operator base"',
      "ID=aicr-operator-base",
      "ID_LIKE=debian",
      'VERSION_ID="12"',
      "VERSION_CODENAME=bookworm",
      "",
    ].join("\n"),
  )
  // What update-ca-certificates would make: every Mozilla certificate, in name order, in one bundle.
  const mozilla = join(root, "usr/share/ca-certificates/mozilla")
  const certs = readdirSync(mozilla)
    .filter((f) => f.endsWith(".crt"))
    .sort()
  if (certs.length === 0) throw new Error(`${mozilla}: no certificates (ca-certificates unpacked wrong?)`)
  write(root, "etc/ssl/certs/ca-certificates.crt", certs.map((f) => readFileSync(join(mozilla, f), "utf8").trimEnd() + "\n").join(""))
  rmSync(join(root, "etc/localtime"), { force: true })
  symlinkSync("/usr/share/zoneinfo/Etc/UTC", join(root, "etc/localtime"))
  dir(root, "tmp", 0o1777)
  dir(root, "root", 0o700)
  dir(root, "home/nonroot", 0o700)
}

/** The shell layer's root filesystem (SHELL_PACKAGES), with /bin/sh pointing at dash. */
export const shellRootfs = async (root: string, arch: Arch, lock: DebianLock = debianLock(), cache: string = imageCache()) => {
  await unpackPackages(root, SHELL_PACKAGES, arch, lock, cache)
  // dash ships /bin/sh → dash itself in bookworm; make sure of it either way.
  rmSync(join(root, "bin/sh"), { force: true })
  symlinkSync("dash", join(root, "bin/sh"))
}
