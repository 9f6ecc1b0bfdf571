import { ApiException } from "@kubernetes/client-node"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { KubeError, isTransient, kubeErrorFromStatus, kubeErrorFromUnknown, reasonFromStatus, reasonFromUnknown } from "./errors"

const status = (code: number, reason: string, message: string, causes?: ReadonlyArray<Record<string, string>>, retryAfterSeconds?: number) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  reason,
  message,
  details: { causes, retryAfterSeconds },
})

describe("reasonFromStatus", () => {
  it.each([
    { name: "404 is NotFound", code: 404, body: status(404, "NotFound", 'widgets.test.aicr.run "w" not found'), want: "NotFound" },
    { name: "409 AlreadyExists is AlreadyExists", code: 409, body: status(409, "AlreadyExists", "already exists"), want: "AlreadyExists" },
    { name: "409 with a stale resourceVersion is Conflict", code: 409, body: status(409, "Conflict", "the object has been modified"), want: "Conflict" },
    {
      name: "409 with FieldManagerConflict causes is FieldManagerConflict",
      code: 409,
      body: status(409, "Conflict", 'Apply failed with 1 conflict: conflict with "b": .status.conditions[type="A"].status', [
        { reason: "FieldManagerConflict", message: 'conflict with "b"', field: '.status.conditions[type="A"].status' },
      ]),
      want: "FieldManagerConflict",
    },
    { name: "401 is Unauthorized", code: 401, body: status(401, "Unauthorized", "Unauthorized"), want: "Unauthorized" },
    { name: "403 is Forbidden", code: 403, body: status(403, "Forbidden", "forbidden"), want: "Forbidden" },
    { name: "422 is Invalid", code: 422, body: status(422, "Invalid", "spec.x: Invalid value"), want: "Invalid" },
    { name: "400 is Invalid", code: 400, body: status(400, "BadRequest", "bad"), want: "Invalid" },
    { name: "415 is Invalid", code: 415, body: status(415, "UnsupportedMediaType", "nope"), want: "Invalid" },
    { name: "410 is Gone", code: 410, body: status(410, "Expired", "too old resource version"), want: "Gone" },
    { name: "429 is TooManyRequests", code: 429, body: status(429, "TooManyRequests", "slow down", undefined, 3), want: "TooManyRequests" },
    { name: "500 is Unavailable", code: 500, body: status(500, "InternalError", "etcdserver: leader changed"), want: "Unavailable" },
    { name: "503 is Unavailable", code: 503, body: "service unavailable", want: "Unavailable" },
    { name: "504 is Timeout", code: 504, body: status(504, "Timeout", "timeout"), want: "Timeout" },
    { name: "a Status body given as a JSON string is parsed", code: 409, body: JSON.stringify(status(409, "AlreadyExists", "exists")), want: "AlreadyExists" },
    { name: "an in-stream ERROR Status without an HTTP code uses its own code", code: 0, body: status(410, "Expired", "too old"), want: "Gone" },
  ])("$name", ({ code, body, want }) => {
    expect(reasonFromStatus(code, body)._tag).toBe(want)
  })

  it("keeps the Status message, causes and retry-after", () => {
    const r = reasonFromStatus(
      409,
      status(409, "Conflict", "Apply failed", [{ reason: "FieldManagerConflict", message: 'conflict with "b"', field: ".status.x" }]),
    )
    expect(r).toMatchObject({
      _tag: "FieldManagerConflict",
      code: 409,
      message: "Apply failed",
      causes: [{ reason: "FieldManagerConflict", field: ".status.x" }],
    })
    expect(reasonFromStatus(429, status(429, "TooManyRequests", "x", undefined, 7))).toMatchObject({ retryAfterSeconds: 7 })
    expect(reasonFromStatus(429, "", { "retry-after": "5" })).toMatchObject({ retryAfterSeconds: 5 })
  })
})

describe("reasonFromUnknown", () => {
  const fetchFailed = (code: string) =>
    Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error(`connect ${code} 127.0.0.1:6443`), { code }) })
  it.each([
    {
      name: "an ApiException is mapped by its code and body",
      err: new ApiException(404, "Not Found", JSON.stringify(status(404, "NotFound", "gone")), {}),
      want: "NotFound",
    },
    {
      name: "an ApiException 409 with field-manager causes",
      err: new ApiException(409, "Conflict", status(409, "Conflict", "x", [{ reason: "FieldManagerConflict" }]), {}),
      want: "FieldManagerConflict",
    },
    { name: "connection refused is Unavailable", err: fetchFailed("ECONNREFUSED"), want: "Unavailable" },
    { name: "connection reset is Unavailable", err: fetchFailed("ECONNRESET"), want: "Unavailable" },
    { name: "an undici socket error is Unavailable", err: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }), want: "Unavailable" },
    { name: "an undici connect timeout is Timeout", err: fetchFailed("UND_ERR_CONNECT_TIMEOUT"), want: "Timeout" },
    { name: "a headers timeout is Timeout", err: Object.assign(new Error("Headers Timeout Error"), { code: "UND_ERR_HEADERS_TIMEOUT" }), want: "Timeout" },
    { name: "an AbortSignal.timeout is Timeout", err: new DOMException("The operation was aborted due to timeout", "TimeoutError"), want: "Timeout" },
    { name: "a watch error with statusCode is mapped by it", err: Object.assign(new Error("Gone"), { statusCode: 410 }), want: "Gone" },
    { name: "anything else is Unavailable", err: "boom", want: "Unavailable" },
  ])("$name", ({ err, want }) => {
    expect(reasonFromUnknown(err)._tag).toBe(want)
  })
})

describe("KubeError", () => {
  it("has a readable message naming the verb, path and reason", () => {
    const e = kubeErrorFromStatus("PATCH", "/apis/g/v1/widgets/w/status", 409, status(409, "Conflict", "Apply failed with 1 conflict"))
    expect(e.message).toBe("PATCH /apis/g/v1/widgets/w/status: Conflict (409): Apply failed with 1 conflict")
    expect(e._tag).toBe("KubeError")
  })

  it("is caught by reason with Effect.catchReason", () => {
    const e = kubeErrorFromStatus("GET", "/api/v1/namespaces/a/configmaps/b", 404, status(404, "NotFound", "not found"))
    const out = Effect.runSync(Effect.fail(e).pipe(Effect.catchReason("KubeError", "NotFound", (r) => Effect.succeed(r.code))))
    expect(out).toBe(404)
  })

  it("passes an existing KubeError through unchanged", () => {
    const e = kubeErrorFromStatus("GET", "/x", 403, status(403, "Forbidden", "no"))
    expect(kubeErrorFromUnknown("GET", "/y", e)).toBe(e)
  })

  it("classifies Unavailable, Timeout and TooManyRequests as transient", () => {
    const of = (code: number) => new KubeError({ reason: reasonFromStatus(code, status(code, "x", "y")), verb: "GET", path: "/" })
    expect([503, 504, 429, 409, 404, 422].map((c) => isTransient(of(c)))).toEqual([true, true, true, false, false, false])
  })
})
