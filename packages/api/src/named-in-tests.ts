/**
 * Which tests name a condition reason: the test files of the tiers that run controllers (`*.component.test.ts`,
 * `*.int.test.ts`, `*.e2e.test.ts`) that hold both the condition type and the reason as string literals (`"Resolved"`,
 * `"AICRVersionMismatch"`), as an assertion on a condition does. A textual index, not a proof that the test reaches
 * the reason: it is what `docs/api/conditions.md` lists and what the catalog test holds every documented reason to.
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url))

const TIER = /\.(component|int|e2e)\.test\.ts$/u
const ROOTS = ["apps", "packages", "e2e", "hack"]
const SKIP = new Set(["node_modules", "dist", ".aicr", ".git"])

export interface TestFile {
  /** Relative to the repository root, `/`-separated. */
  readonly path: string
  readonly text: string
}

/** Every test file of the component, int and e2e tiers, sorted by path. */
export const tierTestFiles = (root: string = REPO_ROOT): ReadonlyArray<TestFile> => {
  const out: TestFile[] = []
  const walk = (dir: string) => {
    let entries: Dirent[]
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      if (SKIP.has(e.name)) continue
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (TIER.test(e.name)) out.push({ path: relative(root, p).split("\\").join("/"), text: readFileSync(p, "utf8") })
    }
  }
  for (const r of ROOTS) walk(join(root, r))
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/** The files naming both `type` and `reason` as string literals. */
export const namedIn = (files: ReadonlyArray<TestFile>, type: string, reason: string): ReadonlyArray<string> =>
  files.filter((f) => f.text.includes(`"${type}"`) && f.text.includes(`"${reason}"`)).map((f) => f.path)
