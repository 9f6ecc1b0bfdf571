import { describe, expect, it } from "vitest"
import { reasonForStatus } from "../errors"
import { backoffDelay, defaultRetryPolicy, isRetryableError, isRetryableStatus, parseRetryAfter, sleep } from "./retry"

const withCode = (code: string) => Object.assign(new Error(code), { code })
const fetchFailed = (code: string) => Object.assign(new TypeError("fetch failed"), { cause: withCode(code) })

describe("retry classification", () => {
  it.each([
    { status: 408, want: true },
    { status: 429, want: true },
    { status: 500, want: true },
    { status: 502, want: true },
    { status: 503, want: true },
    { status: 504, want: true },
    { status: 501, want: false },
    { status: 400, want: false },
    { status: 401, want: false },
    { status: 403, want: false },
    { status: 404, want: false },
    { status: 416, want: false },
  ])("retries HTTP $status: $want", ({ status, want }) => {
    expect(isRetryableStatus(status)).toBe(want)
  })

  it.each([
    { name: "a connection reset", err: withCode("ECONNRESET"), want: true },
    { name: "a refused connection (registry restarting)", err: withCode("ECONNREFUSED"), want: true },
    { name: "an undici socket error", err: withCode("UND_ERR_SOCKET"), want: true },
    { name: "an undici headers timeout", err: withCode("UND_ERR_HEADERS_TIMEOUT"), want: true },
    { name: "a reset wrapped in fetch's TypeError", err: fetchFailed("ECONNRESET"), want: true },
    { name: "an unknown host", err: withCode("ENOTFOUND"), want: false },
    { name: "an abort", err: Object.assign(new Error("aborted"), { name: "AbortError", code: "ECONNRESET" }), want: false },
    { name: "a plain error", err: new Error("boom"), want: false },
    { name: "a string", err: "ECONNRESET", want: false },
  ])("retries $name: $want", ({ err, want }) => {
    expect(isRetryableError(err)).toBe(want)
  })
})

describe("reasonForStatus", () => {
  it.each([
    { name: "401 is Unauthorized", status: 401, code: undefined, want: "Unauthorized" },
    { name: "403 is Denied", status: 403, code: undefined, want: "Denied" },
    { name: "a DENIED code is Denied whatever the status", status: 401, code: "DENIED", want: "Denied" },
    { name: "404 is NotFound", status: 404, code: "MANIFEST_UNKNOWN", want: "NotFound" },
    { name: "a DIGEST_INVALID code is DigestMismatch", status: 400, code: "DIGEST_INVALID", want: "DigestMismatch" },
    { name: "400 MANIFEST_INVALID is Invalid", status: 400, code: "MANIFEST_INVALID", want: "Invalid" },
    { name: "405 (operation unsupported) is Invalid", status: 405, code: "UNSUPPORTED", want: "Invalid" },
    { name: "409 is Conflict", status: 409, code: undefined, want: "Conflict" },
    { name: "416 (upload out of order) is Conflict", status: 416, code: "BLOB_UPLOAD_INVALID", want: "Conflict" },
    { name: "413 is TooLarge", status: 413, code: undefined, want: "TooLarge" },
    { name: "429 is Unavailable", status: 429, code: "TOOMANYREQUESTS", want: "Unavailable" },
    { name: "503 is Unavailable", status: 503, code: undefined, want: "Unavailable" },
    { name: "501 is Invalid", status: 501, code: undefined, want: "Invalid" },
  ])("$name", ({ status, code, want }) => {
    expect(reasonForStatus(status, code)._tag).toBe(want)
  })
})

describe("backoff", () => {
  const policy = { ...defaultRetryPolicy, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 5_000 }

  it.each([
    { name: "the first retry waits up to the base delay", attempt: 1, random: 0.999, want: 99 },
    { name: "the ceiling doubles per attempt", attempt: 3, random: 0.5, want: 200 },
    { name: "the ceiling is capped at maxDelay", attempt: 10, random: 0.5, want: 500 },
    { name: "full jitter can wait nothing", attempt: 4, random: 0, want: 0 },
  ])("$name", ({ attempt, random, want }) => {
    expect(backoffDelay(policy, attempt, undefined, () => random)).toBe(want)
  })

  it.each([
    { name: "a Retry-After wins over the computed backoff", retryAfter: 3_000, want: 3_000 },
    { name: "a Retry-After beyond the cap is capped", retryAfter: 60_000, want: 5_000 },
    { name: "a zero Retry-After retries at once", retryAfter: 0, want: 0 },
  ])("$name", ({ retryAfter, want }) => {
    expect(backoffDelay(policy, 1, retryAfter, () => 0.9)).toBe(want)
  })

  it.each([
    { name: "delta-seconds", value: "7", want: 7_000 },
    { name: "an HTTP date in the future", value: new Date(1_000_000 + 4_000).toUTCString(), want: 4_000 },
    { name: "an HTTP date in the past", value: new Date(0).toUTCString(), want: 0 },
    { name: "garbage", value: "soon", want: undefined },
    { name: "no header", value: undefined, want: undefined },
  ])("parses a Retry-After of $name", ({ value, want }) => {
    expect(parseRetryAfter(value, 1_000_000)).toBe(want)
  })

  it("rejects a sleep with the abort reason", async () => {
    const ac = new AbortController()
    const p = sleep(10_000, ac.signal)
    ac.abort(new Error("stop"))
    await expect(p).rejects.toThrow("stop")
  })
})
