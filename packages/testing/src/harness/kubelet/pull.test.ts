import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { gzipSync } from "node:zlib"
import tar from "tar-stream"
import { afterAll, describe, expect, it } from "vitest"
import { applyLayer, resolveInRoot } from "./pull"

type E = { name: string; type?: "file" | "directory" | "symlink" | "link"; body?: string; mode?: number; linkname?: string; uid?: number }

/** A gzip-compressed layer of the given entries. */
const layer = async (entries: E[]): Promise<Readable> => {
  const pack = tar.pack()
  const chunks: Buffer[] = []
  const out = new Promise<void>((resolve) => pack.on("data", (c: unknown) => chunks.push(c as Buffer)).on("end", () => resolve()))
  for (const e of entries) {
    await new Promise<void>((resolve, reject) =>
      pack.entry(
        {
          name: e.name,
          type: e.type ?? "file",
          mode: e.mode ?? (e.type === "directory" ? 0o755 : 0o644),
          uid: e.uid ?? 0,
          gid: e.uid ?? 0,
          linkname: e.linkname,
        },
        e.body ?? "",
        (err) => (err ? reject(err) : resolve()),
      ),
    )
  }
  pack.finalize()
  await out
  return Readable.from([gzipSync(Buffer.concat(chunks))])
}

const work = mkdtempSync(join(tmpdir(), "aicr-pull-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("process kubelet: unpacking image layers", () => {
  it("applies layers in order with OCI whiteouts, opaque directories, modes, owners and links", async () => {
    const root = join(work, "r1")
    mkdirSync(root)
    await applyLayer(
      root,
      await layer([
        { name: "etc/", type: "directory" },
        { name: "etc/passwd", body: "v1" },
        { name: "etc/gone", body: "x" },
        { name: "opt/", type: "directory" },
        { name: "opt/a", body: "a" },
        { name: "opt/b", body: "b" },
        { name: "bin/", type: "directory" },
        { name: "bin/tool", body: "#!", mode: 0o755 },
        { name: "home/nonroot/", type: "directory", mode: 0o700, uid: 65532 },
      ]),
    )
    await applyLayer(
      root,
      await layer([
        { name: "etc/passwd", body: "v2" },
        { name: "etc/.wh.gone" },
        { name: "opt/.wh..wh..opq" },
        { name: "opt/c", body: "c" },
        { name: "bin/alias", type: "symlink", linkname: "tool" },
        { name: "bin/hard", type: "link", linkname: "bin/tool" },
      ]),
    )
    expect(readFileSync(join(root, "etc/passwd"), "utf8")).toBe("v2")
    expect(existsSync(join(root, "etc/gone"))).toBe(false)
    expect(existsSync(join(root, "etc/.wh.gone"))).toBe(false)
    expect(existsSync(join(root, "opt/a")) || existsSync(join(root, "opt/b"))).toBe(false)
    expect(readFileSync(join(root, "opt/c"), "utf8")).toBe("c")
    expect(statSync(join(root, "bin/tool")).mode & 0o777).toBe(0o755)
    expect(readlinkSync(join(root, "bin/alias"))).toBe("tool")
    expect(statSync(join(root, "bin/hard")).ino).toBe(statSync(join(root, "bin/tool")).ino)
    expect(statSync(join(root, "home/nonroot")).mode & 0o777).toBe(0o700)
    expect(statSync(join(root, "home/nonroot")).uid).toBe(65532)
  })

  it("never follows a layer's symlink out of the root", async () => {
    const root = join(work, "r2")
    mkdirSync(root)
    const outside = join(work, "outside")
    mkdirSync(outside)
    await applyLayer(
      root,
      await layer([
        { name: "escape", type: "symlink", linkname: outside },
        { name: "up", type: "symlink", linkname: "../../.." },
      ]),
    )
    await applyLayer(
      root,
      await layer([
        { name: "escape/pwned", body: "x" },
        { name: "up/pwned2", body: "y" },
      ]),
    )
    expect(existsSync(join(outside, "pwned"))).toBe(false)
    expect(existsSync(join(root, outside, "pwned"))).toBe(true)
    expect(existsSync(join(root, "pwned2"))).toBe(true)
    // A name that climbs above the root is clamped to it, as runtimes do.
    await applyLayer(root, await layer([{ name: "../evil", body: "x" }]))
    expect(existsSync(join(work, "evil"))).toBe(false)
    expect(readFileSync(join(root, "evil"), "utf8")).toBe("x")
  })

  it("resolves absolute and relative links inside the root", () => {
    const root = join(work, "r3")
    mkdirSync(join(root, "usr/lib"), { recursive: true })
    symlinkSync("/usr/lib", join(root, "lib"))
    symlinkSync("../lib", join(root, "usr/lib64"))
    expect(resolveInRoot(root, "lib/x")).toBe(join(root, "usr/lib/x"))
    // usr/lib64 → ../lib → /usr/lib
    expect(resolveInRoot(root, "usr/lib64/y")).toBe(join(root, "usr/lib/y"))
    expect(lstatSync(join(root, "lib")).isSymbolicLink()).toBe(true)
  })
})
