/**
 * Which int and e2e tests assert a condition reason on the real control plane: the calls of `expectCondition` and
 * `untilCondition` (`@aicr/testing/harness`, conditions.ts) whose condition type, status and reason are string
 * literals, found in each test file's TypeScript syntax tree, with the title of the `it` (or `test`) they run in.
 * `docs/api/conditions.md` lists them for each reason, and the catalog test holds every documented reason to them. A
 * reason checked any other way (a variable, a helper of the file's own, a component test on FakeKube) is not counted.
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url))

const TIER = /\.(int|e2e)\.test\.ts$/u
const ROOTS = ["apps", "packages", "e2e", "hack"]
const SKIP = new Set(["node_modules", "dist", ".aicr", ".git"])
/** The assertion helpers, and the argument positions of type, status and reason (after the source). */
const HELPERS = new Set(["expectCondition", "untilCondition"])
const TEST_CALLS = new Set(["it", "test"])

export interface TestFile {
  /** Relative to the repository root, `/`-separated. */
  readonly path: string
  readonly text: string
}

/** One assertion of a (type, status, reason) in a test. */
export interface Assertion {
  readonly type: string
  readonly status: string
  readonly reason: string
  readonly path: string
  /** The enclosing test's title as written (a template keeps its `${…}`); undefined outside a test. */
  readonly test: string | undefined
}

/** Every test file of the int and e2e tiers, sorted by path. */
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

const literal = (n: ts.Expression | undefined): string | undefined =>
  n !== undefined && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : undefined

/** The callee's last name: `expectCondition`, `h.expectCondition`; for `it.each(…)(…)` and `it.effect`, `it`. */
const calleeName = (e: ts.Expression): string | undefined => {
  if (ts.isIdentifier(e)) return e.text
  if (ts.isPropertyAccessExpression(e)) return HELPERS.has(e.name.text) ? e.name.text : calleeName(e.expression)
  if (ts.isCallExpression(e)) return calleeName(e.expression)
  return undefined
}

const titleOf = (call: ts.CallExpression, file: ts.SourceFile): string | undefined => {
  const first = call.arguments[0]
  if (first === undefined) return undefined
  return literal(first) ?? (ts.isTemplateExpression(first) ? first.getText(file).slice(1, -1) : undefined)
}

/** The calls of the helpers with literal type, status and reason in one file. */
export const assertionsIn = (file: TestFile): ReadonlyArray<Assertion> => {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const out: Assertion[] = []
  const visit = (node: ts.Node, test: string | undefined): void => {
    let inTest = test
    if (ts.isCallExpression(node)) {
      const name = calleeName(node.expression)
      if (name !== undefined && TEST_CALLS.has(name)) inTest = titleOf(node, source) ?? inTest
      if (name !== undefined && HELPERS.has(name)) {
        const [type, status, reason] = [1, 2, 3].map((i) => literal(node.arguments[i]))
        if (type !== undefined && status !== undefined && reason !== undefined) out.push({ type, status, reason, path: file.path, test: inTest })
      }
    }
    ts.forEachChild(node, (child) => visit(child, inTest))
  }
  visit(source, undefined)
  return out
}

/** The assertions of (type, status, reason) across `files`, one per test (a test asserting it twice counts once). */
export const assertedIn = (files: ReadonlyArray<TestFile>) => {
  const all = files.flatMap(assertionsIn)
  return {
    all,
    of: (type: string, status: string, reason: string): ReadonlyArray<Assertion> => {
      const seen = new Set<string>()
      return all.filter((a) => {
        if (a.type !== type || a.status !== status || a.reason !== reason) return false
        const key = `${a.path}\u0000${a.test ?? ""}`
        if (seen.has(key)) return false
        seen.add(key)
        return true
      })
    },
  }
}
