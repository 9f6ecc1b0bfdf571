/**
 * `WWW-Authenticate` parsing (RFC 7235 challenges) and Docker token-auth scopes
 * (`repository:<name>:<actions>`).
 */

/** One challenge: `scheme` is lower-cased (`bearer`, `basic`); parameter names are lower-cased too. */
export interface Challenge {
  readonly scheme: string
  readonly params: Readonly<Record<string, string>>
}

const TOKEN = /[!#$%&'*+.^_`|~0-9A-Za-z-]+/y
const TOKEN68 = /[A-Za-z0-9._~+/-]+=*/y

/**
 * Parses a `WWW-Authenticate` value into its challenges, in order. Unparseable tails are dropped rather than
 * thrown: a registry with a sloppy header still gets its first challenge honoured.
 *
 * @example
 * ```ts
 * import { parseWwwAuthenticate } from "@aicr/oras"
 * parseWwwAuthenticate('Bearer realm="https://auth.example/token",service="reg",scope="repository:a:pull"')
 * // [{ scheme: "bearer", params: { realm: "https://auth.example/token", service: "reg", scope: "repository:a:pull" } }]
 * ```
 */
export const parseWwwAuthenticate = (header: string): Challenge[] => {
  const out: { scheme: string; params: Record<string, string> }[] = []
  let i = 0
  const skipWs = () => {
    while (i < header.length && (header[i] === " " || header[i] === "\t")) i++
  }
  const skipCommas = () => {
    for (;;) {
      skipWs()
      if (header[i] !== ",") return
      i++
    }
  }
  const token = (re: RegExp): string | undefined => {
    re.lastIndex = i
    const m = re.exec(header)
    if (m === null) return undefined
    i += m[0].length
    return m[0]
  }
  const quoted = (): string | undefined => {
    if (header[i] !== '"') return undefined
    let value = ""
    for (i++; i < header.length; i++) {
      const c = header[i]!
      if (c === "\\" && i + 1 < header.length) value += header[++i]
      else if (c === '"') {
        i++
        return value
      } else value += c
    }
    return undefined
  }
  for (;;) {
    skipCommas()
    if (i >= header.length) break
    const scheme = token(TOKEN)
    if (scheme === undefined) break
    const challenge = { scheme: scheme.toLowerCase(), params: {} as Record<string, string> }
    out.push(challenge)
    // auth-params until the next scheme (a token not followed by "=")
    for (;;) {
      skipCommas()
      const save = i
      const name = token(TOKEN)
      if (name === undefined) break
      skipWs()
      if (header[i] !== "=") {
        i = save
        break
      }
      i++
      skipWs()
      const value = header[i] === '"' ? quoted() : (token(TOKEN68) ?? token(TOKEN))
      if (value === undefined) return out
      challenge.params[name.toLowerCase()] = value
    }
  }
  return out
}

/**
 * Merges scope strings (`repository:a:pull`, `repository:a:push`) so each resource appears once with the union of
 * its actions, sorted. `*` absorbs other actions. Scopes that are not `type:name:actions` pass through unchanged.
 */
export const mergeScopes = (scopes: Iterable<string>): string[] => {
  const byResource = new Map<string, Set<string>>()
  const other = new Set<string>()
  for (const raw of scopes) {
    for (const scope of raw.split(" ").filter((s) => s.length > 0)) {
      const last = scope.lastIndexOf(":")
      const first = scope.indexOf(":")
      if (first === -1 || last === first) {
        other.add(scope)
        continue
      }
      const resource = scope.slice(0, last)
      const actions = byResource.get(resource) ?? new Set<string>()
      for (const a of scope.slice(last + 1).split(",")) if (a.length > 0) actions.add(a)
      byResource.set(resource, actions)
    }
  }
  const merged = [...byResource].map(([resource, actions]) => `${resource}:${actions.has("*") ? "*" : [...actions].sort().join(",")}`)
  return [...merged, ...other].sort()
}

/** The scope to pull from `repository`. */
export const pullScope = (repository: string): string => `repository:${repository}:pull`

/** The scope to push to (and read back from) `repository`. */
export const pushScope = (repository: string): string => `repository:${repository}:pull,push`
