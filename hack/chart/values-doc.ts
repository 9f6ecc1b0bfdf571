/**
 * The chart README's values table, generated from `values.yaml`: every leaf value (a scalar, a list, or an empty
 * map) with its key, type, default and the `# --` comment above it. A key without a comment is an error, so a new
 * value cannot ship undocumented.
 */
import { isMap, isScalar, isSeq, type Node, parseDocument, type Pair } from "yaml"

export interface ValueRow {
  readonly key: string
  readonly type: string
  readonly default: string
  readonly description: string
}

const describe = (comment: string | null | undefined): string | undefined => {
  if (!comment) return undefined
  const lines = comment.split("\n").map((l) => l.replace(/^ ?/u, ""))
  const start = lines.findIndex((l) => l.startsWith("-- "))
  if (start < 0) return undefined
  return [lines[start]!.slice(3), ...lines.slice(start + 1)].join(" ").replace(/\s+/gu, " ").trim()
}

const typeOf = (v: unknown): string =>
  Array.isArray(v)
    ? "list"
    : v === null
      ? "null"
      : typeof v === "object"
        ? "object"
        : typeof v === "number"
          ? Number.isInteger(v)
            ? "int"
            : "float"
          : typeof v

const walk = (node: Node | null, prefix: string, inherited: string | undefined, rows: ValueRow[], missing: string[]): void => {
  if (!isMap(node)) return
  const items = node.items as Pair<Node, Node>[]
  for (const [i, item] of items.entries()) {
    const key = isScalar(item.key) ? String(item.key.value) : String(item.key)
    const path = prefix ? `${prefix}.${key}` : key
    // The comment above a map's first key belongs to the map in the YAML document model.
    const own = describe((item.key as Node & { commentBefore?: string | null }).commentBefore) ?? (i === 0 ? describe(node.commentBefore) : undefined)
    const value = item.value
    if (isMap(value) && value.items.length > 0 && own === undefined) {
      walk(value, path, undefined, rows, missing)
      continue
    }
    const description = own ?? inherited
    if (description === undefined) missing.push(path)
    const js = isScalar(value) ? value.value : isSeq(value) || isMap(value) ? value.toJSON() : null
    rows.push({ key: path, type: typeOf(js), default: JSON.stringify(js), description: description ?? "" })
  }
}

/** Every documented value of a values.yaml; throws naming the values that have no `# --` comment. */
export const valueRows = (valuesYaml: string): ReadonlyArray<ValueRow> => {
  const doc = parseDocument(valuesYaml)
  const rows: ValueRow[] = []
  const missing: string[] = []
  walk(doc.contents, "", undefined, rows, missing)
  if (missing.length > 0) throw new Error(`values.yaml: no "# --" description for ${missing.join(", ")}`)
  return rows
}

const cell = (s: string) => s.replaceAll("|", "\\|")

export const valuesTable = (valuesYaml: string): string =>
  [
    "| Key | Type | Default | Description |",
    "|---|---|---|---|",
    ...valueRows(valuesYaml).map((r) => `| \`${r.key}\` | ${r.type} | \`${cell(r.default)}\` | ${cell(r.description)} |`),
  ].join("\n") + "\n"
