/**
 * Canonical JSON and sha256 digests. Canonical JSON (RFC 8785 style): object keys sorted by UTF-16 code units,
 * no whitespace, ECMAScript number and string serialisation; `undefined` members are dropped; non-finite numbers,
 * functions and other non-JSON values are refused, so a digest never depends on how a value was built.
 */
import { createHash } from "node:crypto"

export const canonicalJson = (value: unknown): string => {
  const walk = (v: unknown, path: string): string => {
    if (v === null) return "null"
    switch (typeof v) {
      case "boolean":
        return v ? "true" : "false"
      case "string":
        return JSON.stringify(v)
      case "number":
        if (!Number.isFinite(v)) throw new Error(`canonicalJson: ${path} is not a finite number`)
        return JSON.stringify(v)
      case "object": {
        if (Array.isArray(v)) return `[${v.map((x, i) => walk(x, `${path}[${i}]`)).join(",")}]`
        const proto = Object.getPrototypeOf(v)
        if (proto !== Object.prototype && proto !== null) throw new Error(`canonicalJson: ${path} is not a plain object`)
        const keys = Object.keys(v)
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        return `{${keys.map((k) => `${JSON.stringify(k)}:${walk((v as Record<string, unknown>)[k], `${path}.${k}`)}`).join(",")}}`
      }
      default:
        throw new Error(`canonicalJson: ${path} is a ${typeof v}, not JSON`)
    }
  }
  return walk(value, "$")
}

/** `sha256:<hex>` of the UTF-8 bytes of a string. */
export const sha256 = (data: string | Uint8Array): string => `sha256:${createHash("sha256").update(data).digest("hex")}`

/** `sha256:<hex>` of the canonical JSON of a value. */
export const digestOf = (value: unknown): string => sha256(canonicalJson(value))
