/** Label and field selector matching for FakeKube lists and watches (the subset controllers use). */
import type { KubeObject } from "@aicr/api"

type Req = (labels: Readonly<Record<string, string>>) => boolean

const splitTop = (s: string): Array<string> => {
  const out: Array<string> = []
  let depth = 0,
    cur = ""
  for (const ch of s) {
    if (ch === "(") depth++
    if (ch === ")") depth--
    if (ch === "," && depth === 0) {
      out.push(cur)
      cur = ""
    } else cur += ch
  }
  if (cur.trim() !== "") out.push(cur)
  return out.map((x) => x.trim()).filter((x) => x !== "")
}

const parseRequirement = (r: string): Req => {
  let m: RegExpMatchArray | null
  if ((m = r.match(/^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
    const [, key, op, vals] = m
    const set = new Set(vals!.split(",").map((v) => v.trim()))
    return op === "in" ? (l) => l[key!] !== undefined && set.has(l[key!]!) : (l) => l[key!] === undefined || !set.has(l[key!]!)
  }
  if ((m = r.match(/^([^\s!=]+)\s*!=\s*(\S*)$/))) {
    const [, key, v] = m
    return (l) => l[key!] !== v
  }
  if ((m = r.match(/^([^\s!=]+)\s*==?\s*(\S*)$/))) {
    const [, key, v] = m
    return (l) => l[key!] === v
  }
  if ((m = r.match(/^!(\S+)$/))) {
    const [, key] = m
    return (l) => l[key!] === undefined
  }
  if ((m = r.match(/^(\S+)$/))) {
    const [, key] = m
    return (l) => l[key!] !== undefined
  }
  throw new Error(`unsupported selector requirement "${r}"`)
}

export const labelMatcher = (selector?: string): ((o: KubeObject) => boolean) => {
  if (!selector) return () => true
  const reqs = splitTop(selector).map(parseRequirement)
  return (o) => reqs.every((r) => r(o.metadata.labels ?? {}))
}

/** Field selectors on `metadata.name` / `metadata.namespace` and any other dotted scalar path. */
export const fieldMatcher = (selector?: string): ((o: KubeObject) => boolean) => {
  if (!selector) return () => true
  const reqs = splitTop(selector).map((r) => {
    const m = r.match(/^([^!=]+?)\s*(!=|==|=)\s*(.*)$/)
    if (!m) throw new Error(`unsupported field selector "${r}"`)
    const [, path, op, value] = m
    return (o: KubeObject) => {
      let cur: unknown = o
      for (const p of path!.split(".")) cur = typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[p] : undefined
      const s = cur === undefined ? "" : String(cur)
      return op === "!=" ? s !== value : s === value
    }
  })
  return (o) => reqs.every((r) => r(o))
}
