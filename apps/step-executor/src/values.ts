/**
 * values: pure. A release's `valuesObject`, as the bundle's deploy script passes the values to helm: the `-f` files of
 * that release's `helm upgrade --install` in `deploy.sh`, in order, merged the way helm merges them (maps deep-merge,
 * anything else is replaced by the later file). A bundle without that command (a wrapper release, or no deploy.sh)
 * uses `<release>/values.yaml` alone when it exists; AICR 0.x bundles pass only that file.
 */
import { parse } from "yaml"

type Values = Record<string, unknown>
const isMap = (u: unknown): u is Values => typeof u === "object" && u !== null && !Array.isArray(u)

/** helm's coalescing of two values files: b wins, maps merge key by key. */
export const mergeValues = (a: Values, b: Values): Values => {
  const out: Values = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = isMap(v) && isMap(out[k]) ? mergeValues(out[k] as Values, v) : v
  return out
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")

/** The files `deploy.sh` passes with `-f "${SCRIPT_DIR}/…"` to the release's `helm upgrade --install`, in order. */
export const valueFilesOf = (deploy: string | undefined, release: string): string[] | undefined => {
  if (deploy === undefined) return undefined
  const start = new RegExp(`helm upgrade --install ${escape(release)}\\s`, "u").exec(deploy)
  if (start === null) return undefined
  const rest = deploy.slice(start.index)
  const end = rest.search(/\|\|\s*helm_failed|\n\s*\n/u)
  const command = end < 0 ? rest : rest.slice(0, end)
  return [...command.matchAll(/(?:-f|--values)\s+"?\$\{SCRIPT_DIR\}\/([^"\s]+)"?/gu)].map((m) => m[1]!)
}

export type ValuesRead = { readonly ok: true; readonly values: Values; readonly files: ReadonlyArray<string> } | { readonly ok: false; readonly why: string }

/** The merged values of release from the bundle file tree (values.json `files`). */
export const releaseValues = (files: Readonly<Record<string, string>>, release: string): ValuesRead => {
  const own = `${release}/values.yaml`
  const listed = valueFilesOf(files["deploy.sh"], release) ?? (files[own] !== undefined ? [own] : [])
  let values: Values = {}
  for (const f of listed) {
    const text = files[f]
    if (text === undefined) return { ok: false, why: `deploy.sh passes ${f} for release ${release}, which the bundle does not hold` }
    let doc: unknown
    try {
      doc = parse(text)
    } catch (e) {
      return { ok: false, why: `${f} is not YAML: ${(e as Error).message.split("\n")[0]}` }
    }
    if (doc === null || doc === undefined) continue
    if (!isMap(doc)) return { ok: false, why: `${f} is not a YAML map` }
    values = mergeValues(values, doc)
  }
  return { ok: true, values, files: listed }
}
