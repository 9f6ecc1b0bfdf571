import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { entriesOf, writeLayer } from "./layer"

const work = mkdtempSync(join(tmpdir(), "aicr-layer-"))
afterAll(() => execFileSync("rm", ["-rf", work]))

/** A small tree; `stamp` sets every mtime, so two trees differ only in time. */
const tree = (name: string, stamp: number) => {
  const root = join(work, name)
  mkdirSync(join(root, "etc"), { recursive: true })
  mkdirSync(join(root, "home/nonroot"), { recursive: true })
  mkdirSync(join(root, "a-b"), { recursive: true })
  writeFileSync(join(root, "etc/passwd"), "root:x:0:0::/root:/sbin/nologin\n")
  writeFileSync(join(root, "home/nonroot/.profile"), "x\n")
  writeFileSync(join(root, "a-b/run"), "#!/bin/sh\n")
  chmodSync(join(root, "a-b/run"), 0o755)
  chmodSync(join(root, "home/nonroot"), 0o700)
  symlinkSync("passwd", join(root, "etc/link"))
  for (const p of ["etc/passwd", "home/nonroot/.profile", "a-b/run", "etc", "home/nonroot", "home", "a-b"]) utimesSync(join(root, p), stamp, stamp)
  return root
}

describe("reproducible layers", () => {
  it("lists entries sorted by path with modes, link targets and owners by prefix", () => {
    const entries = entriesOf(tree("t0", 1000), [{ prefix: "home/nonroot", uid: 65532, gid: 65532 }])
    expect(entries.map((e) => [e.path, e.type, e.mode.toString(8), e.uid])).toEqual([
      ["a-b", "directory", "755", 0],
      ["a-b/run", "file", "755", 0],
      ["etc", "directory", "755", 0],
      ["etc/link", "symlink", "777", 0],
      ["etc/passwd", "file", "644", 0],
      ["home", "directory", "755", 0],
      ["home/nonroot", "directory", "700", 65532],
      ["home/nonroot/.profile", "file", "644", 65532],
    ])
    expect(entries.find((e) => e.path === "etc/link")?.target).toBe("passwd")
  })

  it("the same files at other times and in another place give the same bytes", async () => {
    const a = await writeLayer(entriesOf(tree("t1", 1000)), join(work, "a.tgz"))
    const b = await writeLayer(entriesOf(tree("t2", 2_000_000)), join(work, "b.tgz"))
    expect(b.digest).toBe(a.digest)
    expect(b.diffId).toBe(a.diffId)
    expect(a.digest).not.toBe(a.diffId)
  })

  it("GNU tar reads it back: fixed mtime, numeric owners, no user names, and gzip has no timestamp", async () => {
    const l = await writeLayer(entriesOf(tree("t3", 5000), [{ prefix: "home/nonroot", uid: 65532, gid: 65532 }]), join(work, "c.tgz"), { mtime: new Date(0) })
    const listing = execFileSync("tar", ["--numeric-owner", "-tvzf", l.file], { encoding: "utf8" }).trim().split("\n")
    expect(listing).toContain("drwx------ 65532/65532       0 1970-01-01 00:00 home/nonroot/")
    expect(listing).toContain("lrwxrwxrwx 0/0               0 1970-01-01 00:00 etc/link -> passwd")
    expect(listing.every((line) => line.includes(" 1970-01-01 00:00 "))).toBe(true)
    const names = execFileSync("tar", ["-tvzf", l.file], { encoding: "utf8" })
    expect(names).not.toMatch(/root\/root/)
    // gzip header: bytes 4..7 are the modification time.
    const head = execFileSync("head", ["-c", "10", l.file])
    expect(head.readUInt32LE(4)).toBe(0)
    const sha = (f: string) => `sha256:${execFileSync("sha256sum", [f], { encoding: "utf8" }).split(" ")[0]}`
    expect(sha(l.file)).toBe(l.digest)
    expect(`sha256:${execFileSync("sh", ["-c", `gzip -dc '${l.file}' | sha256sum`], { encoding: "utf8" }).split(" ")[0]}`).toBe(l.diffId)
  })
})
