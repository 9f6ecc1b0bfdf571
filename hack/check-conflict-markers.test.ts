// The lint step's merge-conflict check, run as the lint step runs it (a child process), on files written here.
import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "conflict-markers-"))
const check = (name: string, text: string) => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return spawnSync(process.execPath, [join(import.meta.dirname, "check-conflict-markers.mjs"), file], { encoding: "utf8" })
}

describe("check-conflict-markers", () => {
  it("refuses a file with conflict markers, naming every marker line", () => {
    const r = check("page.md", "intro\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> wip/other\n")
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("page.md:2: <<<<<<< HEAD")
    expect(r.stderr).toContain("page.md:4: =======")
    expect(r.stderr).toContain("page.md:6: >>>>>>> wip/other")
    expect(check("diff3.ts", "const a = 1\n||||||| base\n").status).toBe(1)
  })

  it("accepts a Markdown heading underlined with seven = and text that only mentions a marker", () => {
    expect(check("heading.md", "Title\n=======\n\nSee `<<<<<<<` in the docs.\n").status).toBe(0)
  })

  it("finds none in the repository", () => {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, "check-conflict-markers.mjs")], { encoding: "utf8", cwd: join(import.meta.dirname, "..") })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
  })
})
