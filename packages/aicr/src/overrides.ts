/**
 * What AICR made of the runtime's overrides (`aicr bundle --set component:path=value`, aicr-cli.md §3.5), read from
 * its answer: the exit-2 refusal of a malformed `--set`, and the rendered bundle itself, since AICR 0.x accepts two
 * bad overrides without failing:
 *
 * - an unknown component key is ignored silently: the value is in no release's values → `OverridePathUnknown`;
 * - a path through a value that is not a map is left out with only a log line ("path segment … exists but is not a
 *   map") → `InvalidOverride`, as is the malformed `--set` AICR refuses ("invalid --set flag").
 *
 * The key `enabled` toggles a whole component and never reaches the values, so it is not checked here.
 */
import { parse } from "yaml"
import type { BundleRelease } from "./bundle"
import type { AicrError } from "./errors"

export interface OverrideSpec {
  readonly path: string
  readonly value: string
}

export interface OverrideProblem {
  readonly reason: "OverridePathUnknown" | "InvalidOverride"
  readonly override: string
  readonly message: string
}

/** AICR refused a `--set` flag (exit 2, `[INVALID_REQUEST] invalid --set flag: …`): the flag AICR names, or undefined. */
export const invalidSetFlagOf = (e: AicrError): string | undefined => {
  if (!/invalid --set flag/u.test(e.text)) return undefined
  return /invalid format '([^']*)'/u.exec(e.text)?.[1] ?? e.cause
}

/** `--set` values as AICR coerces them: true/false, integers and floats become typed; everything else stays a string. */
export const coerceSetValue = (v: string): unknown => {
  if (v === "true") return true
  if (v === "false") return false
  if (/^[-+]?\d+$/u.test(v) || /^[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?$/u.test(v)) return Number(v)
  return v
}

const kindOf = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "a map" : `a ${typeof v}`)

type Walk =
  | { readonly _tag: "Holds" }
  | { readonly _tag: "Differs" }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "NotAMap"; readonly at: string; readonly kind: string }

/** Follows `a.b.c` through a values document. */
const walk = (doc: unknown, segments: ReadonlyArray<string>, want: unknown): Walk => {
  let node = doc
  for (let i = 0; i < segments.length; i++) {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return { _tag: "NotAMap", at: segments.slice(0, i).join("."), kind: kindOf(node) }
    const rec = node as Record<string, unknown>
    if (!(segments[i]! in rec)) return { _tag: "Absent" }
    node = rec[segments[i]!]
  }
  return node === want || (typeof node === "number" && typeof want === "string" && String(node) === want) ? { _tag: "Holds" } : { _tag: "Differs" }
}

const valuesOf = (r: BundleRelease): unknown[] =>
  [r.values, r.clusterValues].flatMap((text) => {
    if (text === undefined) return []
    try {
      return [parse(text, { maxAliasCount: 100 })]
    } catch {
      return []
    }
  })

/** `gpuoperator` names `gpu-operator`: AICR's keys are the component name or it without dashes (and aliases). */
const namesRelease = (key: string, r: BundleRelease): boolean => [r.name, r.component].some((n) => n === key || n.replaceAll("-", "") === key)

/**
 * Each override the rendered bundle does not carry, in the order given. An override holds when a release's values
 * (its own release first, found by name; else any release, for AICR's aliases) carry the coerced value at its path.
 */
export const overrideProblems = (overrides: ReadonlyArray<OverrideSpec>, releases: ReadonlyArray<BundleRelease>): OverrideProblem[] => {
  const out: OverrideProblem[] = []
  for (const o of overrides) {
    const colon = o.path.indexOf(":")
    const key = o.path.slice(0, colon)
    const segments = o.path.slice(colon + 1).split(".")
    if (colon <= 0 || (segments.length === 1 && segments[0] === "enabled")) continue
    const want = coerceSetValue(o.value)
    const own = releases.filter((r) => namesRelease(key, r))
    const candidates = own.length > 0 ? own : releases
    const walks = candidates.flatMap((r) => valuesOf(r).map((doc) => ({ release: r.name, w: walk(doc, segments, want) })))
    if (walks.some((x) => x.w._tag === "Holds")) continue
    const override = `${o.path}=${o.value}`
    const notAMap = own.length > 0 ? walks.find((x) => x.w._tag === "NotAMap") : undefined
    if (notAMap !== undefined && notAMap.w._tag === "NotAMap") {
      out.push({
        reason: "InvalidOverride",
        override,
        message: `${override}: ${notAMap.w.at} is ${notAMap.w.kind} in the values of ${notAMap.release}, not a map, so AICR left the override out`,
      })
    } else if (own.length === 0) {
      out.push({
        reason: "OverridePathUnknown",
        override,
        message: `${override}: no release is named ${JSON.stringify(key)} and no release's values carry the value (AICR ignores an unknown component key)`,
      })
    } else {
      out.push({
        reason: "OverridePathUnknown",
        override,
        message: `${override}: the rendered values of ${own.map((r) => r.name).join(", ")} do not carry it at ${segments.join(".")}`,
      })
    }
  }
  return out
}
