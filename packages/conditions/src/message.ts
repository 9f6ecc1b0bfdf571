/**
 * Condition messages: deterministic, single-line, no trailing period (Crossplane "Actionable Conditions").
 *
 * Gotchas: wire-compatible messages fixed by operator.md (e.g. `rollout <name>: step 9/18 gpu-operator (Upgrade)`)
 * start lower-case, so the first letter is left as written.
 */
import { MAX_MESSAGE_LENGTH } from "./wire"

const ELLIPSIS = "…"

/**
 * Normalises a message: every line break becomes "; ", runs of spaces collapse, trailing periods and whitespace go,
 * and the result is cut to the API server's 32768-character limit.
 *
 * @example
 * formatMessage("Waiting for plan.\n") // "Waiting for plan"
 */
export const formatMessage = (text: string, max: number = MAX_MESSAGE_LENGTH): string => {
  const oneLine = text
    .split(/\r?\n/u)
    .map((l) => l.replace(/[ \t]+/gu, " ").trim())
    .filter((l) => l.length > 0)
    .map((l) => l.replace(/[.\s]+$/u, ""))
    .filter((l) => l.length > 0)
    .join("; ")
  const cut = [...oneLine]
  return cut.length <= max ? oneLine : cut.slice(0, max - 1).join("") + ELLIPSIS
}

/**
 * Renders a set of names deterministically: sorted, de-duplicated, at most `max` shown, then "and N more".
 *
 * @example
 * listOf(["kubeflow", "gpu-operator", "kubeflow"]) // "gpu-operator, kubeflow"
 */
export const listOf = (items: Iterable<string>, max = 10): string => {
  const all = [...new Set(items)].sort()
  if (all.length <= max) return all.join(", ")
  return `${all.slice(0, max).join(", ")} and ${all.length - max} more`
}

/**
 * Tagged template for condition messages: arrays and sets are rendered with `listOf`, the result with
 * `formatMessage`, so the same facts always give the same text.
 *
 * @example
 * msg`Releases ${["b", "a"]} render outside namespaces.components.` // "Releases a, b render outside namespaces.components"
 */
export const msg = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): string =>
  formatMessage(
    strings.reduce((acc, s, i) => {
      if (i === 0) return s
      const v = values[i - 1]
      const rendered = Array.isArray(v) || v instanceof Set ? listOf([...(v as Iterable<unknown>)].map(String)) : String(v)
      return acc + rendered + s
    }, ""),
  )

/** The first 12 hex characters of a `sha256:` digest, for messages and names. */
export const shortDigest = (digest: string): string => digest.replace(/^sha256:/u, "").slice(0, 12)
