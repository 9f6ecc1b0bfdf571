/**
 * RFC 8288 `Link` headers, as registries use them to paginate tag lists, catalogs and referrers:
 * `</v2/foo/tags/list?n=2&last=b>; rel="next"`.
 */

/** One link: its target (as written, possibly relative) and parameters (names lower-cased, quotes removed). */
export interface Link {
  readonly target: string
  readonly params: Readonly<Record<string, string>>
}

/** Parses a `Link` header value; malformed entries are skipped. */
export const parseLinkHeader = (header: string | undefined): Link[] => {
  if (header === undefined) return []
  const links: Link[] = []
  const re = /<([^>]*)>((?:\s*;\s*[^;,]+?(?:=(?:"[^"]*"|[^;,]*))?)*)\s*(?:,|$)/g
  for (const m of header.matchAll(re)) {
    const params: Record<string, string> = {}
    for (const p of m[2]!.split(";")) {
      const eq = p.indexOf("=")
      const name = (eq === -1 ? p : p.slice(0, eq)).trim().toLowerCase()
      if (name.length === 0) continue
      params[name] =
        eq === -1
          ? ""
          : p
              .slice(eq + 1)
              .trim()
              .replace(/^"(.*)"$/, "$1")
    }
    links.push({ target: m[1]!, params })
  }
  return links
}

/**
 * The `rel="next"` target of a `Link` header, or undefined on the last page. `rel` may hold several
 * space-separated relation types.
 *
 * @example
 * ```ts
 * import { nextLink } from "@aicr/oras"
 * nextLink('</v2/demo/tags/list?n=2&last=b>; rel="next"') // "/v2/demo/tags/list?n=2&last=b"
 * ```
 */
export const nextLink = (header: string | undefined): string | undefined =>
  parseLinkHeader(header).find((l) => (l.params.rel ?? "").split(/\s+/).includes("next"))?.target
