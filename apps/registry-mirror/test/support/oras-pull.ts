/**
 * The guide's check of a mirrored bundle, the user's way: the real `oras` CLI pulls it into `-o`'s root, and what it
 * wrote is the fixture bundle, every file byte for byte, 0644 or 0755 (an executable file stays executable).
 */
import { execFile } from "node:child_process"
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import { fixtureBundle } from "@aicr/chart-upstream"
import { toolPath } from "@aicr/testing/harness"
import { expect } from "vitest"

export const expectOrasPullsFixtureBundle = async (ref: string): Promise<void> => {
  const out = await mkdtemp(join(tmpdir(), "mirror-oras-"))
  try {
    const root = join(out, "operator-bundle")
    await promisify(execFile)(toolPath("oras"), ["pull", "--plain-http", ref, "-o", root], { cwd: out })
    const files: Record<string, string> = {}
    const modes: Record<string, number> = {}
    const walk = async (d: string) => {
      for (const e of await readdir(d, { withFileTypes: true })) {
        const p = join(d, e.name)
        if (e.isDirectory()) await walk(p)
        else {
          const key = relative(root, p)
          files[key] = await readFile(p, "utf8")
          modes[key] = (await stat(p)).mode & 0o777
        }
      }
    }
    await walk(root)
    const want = fixtureBundle()
    expect(files).toEqual(want.files)
    expect(modes).toEqual(Object.fromEntries(Object.keys(want.files).map((p) => [p, (want.modes[p] ?? 0) & 0o111 ? 0o755 : 0o644])))
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}
