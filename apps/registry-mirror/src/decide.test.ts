import { Mirrored, Resolved } from "@aicr/api"
import { current, INTERNAL_ERROR_MESSAGE } from "@aicr/conditions"
import { describe, expect, it } from "vitest"
import { aRuntime, contentData, INPUT_DIGEST, OTHER_INPUT_DIGEST, type RuntimeState } from "../test/support/fixtures"
import { decide } from "./decide"
import {
  ChartSourceUnsupportedError,
  ConflictError,
  ContentInvalidError,
  ContentTooLargeError,
  defectOutcome,
  errorsToOutcome,
  type MirrorError,
  RegistryCredentialsUnavailableError,
  RegistryUnavailableError,
  ResolutionMissingError,
  UnauthorizedError,
} from "./errors"
import type { ContentRead, Observed } from "./gather"
import type { MirrorResult } from "./mirror"
import { report, type Outcome } from "./status"

const prefix = { registry: "127.0.0.1:5000", prefix: "aicr/cluster" }
const NOW = Date.parse("2026-12-02T10:00:00.700Z")

const observe = (s: RuntimeState, content: ContentRead = { _tag: "Found", data: contentData() }): Observed => {
  const runtime = aRuntime(s)
  return {
    runtime,
    generation: runtime.metadata.generation,
    resolved: current(runtime, Resolved),
    resolution: runtime.status?.resolution,
    mirror: runtime.status?.mirror,
    content,
    namespace: "aicr-system",
    prefix,
    rewrites: [],
    now: NOW,
    verification: { _tag: "NotChecked" },
    verifyIntervalMs: 600_000,
  }
}

const mirrored = {
  inputDigest: INPUT_DIGEST,
  bundle: `127.0.0.1:5000/aicr/cluster/bundles/cluster:input-x@sha256:${"b".repeat(64)}`,
  charts: [{ release: "cert-manager", ref: "r/charts/cert-manager:v1@sha256:c" }],
}

describe("decide", () => {
  const cases: Array<{ name: string; given: Observed; want: string; reason?: RegExp }> = [
    { name: "waits when Resolved has not been reported", given: observe({ resolved: "missing" }), want: "AwaitResolution", reason: /NotYetReported/ },
    {
      name: "waits when Resolved is stale (written for an older generation), even if True",
      given: observe({ generation: 3, resolved: { status: "True", observedGeneration: 2 } }),
      want: "AwaitResolution",
      reason: /Unknown\/Stale/,
    },
    { name: "waits while the resolver resolves", given: observe({ resolved: { status: "False" } }), want: "AwaitResolution", reason: /False\/Resolving/ },
    {
      name: "waits when status.resolution names no content",
      given: observe({ inputDigest: undefined }),
      want: "AwaitResolution",
      reason: /status\.resolution/,
    },
    {
      name: "does nothing when status.mirror already holds this input under this prefix",
      given: observe({ mirror: mirrored }, { _tag: "NotRead" }),
      want: "UpToDate",
    },
    {
      name: "does nothing when the recorded tags were checked and found intact",
      given: { ...observe({ mirror: mirrored }, { _tag: "NotRead" }), verification: { _tag: "Intact", checked: 2 } },
      want: "UpToDate",
    },
    {
      name: "fails with Conflict when a recorded tag moved",
      given: {
        ...observe({ mirror: mirrored }, { _tag: "NotRead" }),
        verification: { _tag: "Moved", moved: [{ key: "cert-manager", reference: "r/charts/cert-manager:v1", digest: "sha256:c", found: "sha256:d" }] },
      },
      want: "Fail",
      reason: /ConflictError/,
    },
    {
      name: "mirrors again when a recorded tag is gone",
      given: {
        ...observe({ mirror: mirrored }),
        verification: { _tag: "Missing", missing: [{ key: "cert-manager", reference: "r/charts/cert-manager:v1", digest: "sha256:c" }] },
      },
      want: "Mirror",
    },
    {
      name: "fails like a mirror when the registry did not answer the check",
      given: {
        ...observe({ mirror: mirrored }, { _tag: "NotRead" }),
        verification: { _tag: "Unanswered", error: new RegistryUnavailableError({ registry: "r", cause: "HTTP 503", message: "503" }) },
      },
      want: "Fail",
      reason: /RegistryUnavailableError/,
    },
    {
      name: "mirrors again when status.mirror holds another input",
      given: observe({ mirror: { ...mirrored, inputDigest: OTHER_INPUT_DIGEST } }),
      want: "Mirror",
    },
    {
      name: "mirrors again when the registry prefix changed",
      given: observe({ mirror: { ...mirrored, bundle: `other:5000/aicr/bundles/cluster:x@sha256:${"b".repeat(64)}` } }),
      want: "Mirror",
    },
    { name: "mirrors the plan of a current resolution", given: observe({}), want: "Mirror" },
    { name: "fails (awaiting) when the content ConfigMap is missing", given: observe({}, { _tag: "Missing" }), want: "Fail", reason: /ResolutionMissingError/ },
    {
      name: "fails (internal) on a malformed content ConfigMap",
      given: observe({}, { _tag: "Found", data: { "recipe.json": "{" } }),
      want: "Fail",
      reason: /ContentInvalidError/,
    },
  ]
  it.each(cases)("$name", ({ given, want, reason }) => {
    const d = decide(given)
    expect(d._tag).toBe(want)
    if (reason !== undefined) expect(d._tag === "AwaitResolution" ? d.message : d._tag === "Fail" ? d.error._tag : "").toMatch(reason)
  })

  it("a moved tag is rechecked after the verify interval; the Conflict names release, tag and both digests", () => {
    const d = decide({
      ...observe({ mirror: mirrored }, { _tag: "NotRead" }),
      verification: { _tag: "Moved", moved: [{ key: "cert-manager", reference: "r/charts/cert-manager:v1", digest: "sha256:c", found: "sha256:d" }] },
    })
    expect(d).toMatchObject({ _tag: "Fail", recheck: { _tag: "After" } })
    expect(d._tag === "Fail" && d.error.message).toMatch(
      /^Release cert-manager: tag r\/charts\/cert-manager:v1 now holds sha256:d, not sha256:c .* oras tag r\/charts\/cert-manager@sha256:c v1$/,
    )
  })

  it("names every unsupported release in one ChartSourceUnsupported failure", () => {
    const data = contentData()
    const recipe = JSON.parse(data["recipe.json"]!) as { componentRefs: Array<{ name: string; type: string }> }
    for (const c of recipe.componentRefs) if (c.name === "aws-efa" || c.name === "cert-manager") c.type = "Kustomize"
    const d = decide(observe({}, { _tag: "Found", data: { ...data, "recipe.json": JSON.stringify(recipe) } }))
    expect(d._tag === "Fail" && d.error).toMatchObject({
      _tag: "ChartSourceUnsupportedError",
      release: "aws-efa",
      message: expect.stringContaining("and 1 more: cert-manager"),
    })
  })
})

const result = (): MirrorResult => ({
  inputDigest: INPUT_DIGEST,
  charts: [
    { key: "gpu-operator-manifests", ref: "r/aicr/cluster/wrappers/gpu-operator:0.0.0-aicr-1@sha256:w", digest: "sha256:w", action: "pushed" },
    { key: "cert-manager", ref: "r/aicr/cluster/charts/cert-manager:v1.17.2@sha256:c", digest: "sha256:c", action: "pushed" },
  ],
  bundle: { key: "bundle", ref: "r/aicr/cluster/bundles/cluster:input-1@sha256:b", digest: "sha256:b", action: "pushed" },
  bytesUploaded: 10,
  pushed: 3,
  present: 0,
})

describe("report", () => {
  it("sets Mirrored=True and records every artifact, sorted by key, with the bundle", () => {
    const w = report(observe({}), { _tag: "Mirrored", result: result() })
    expect(w.conditions).toEqual([
      {
        type: "Mirrored",
        status: "True",
        observedGeneration: 1,
        lastTransitionTime: "2026-12-02T10:00:00Z",
        reason: "ContentMirrored",
        message: `Mirrored 1 charts, 1 wrapper charts and the bundle of input ${INPUT_DIGEST.slice(7, 19)}`,
      },
    ])
    expect(w["mirror"]).toEqual({
      inputDigest: INPUT_DIGEST,
      bundle: "r/aicr/cluster/bundles/cluster:input-1@sha256:b",
      charts: [
        { release: "cert-manager", ref: "r/aicr/cluster/charts/cert-manager:v1.17.2@sha256:c" },
        { release: "gpu-operator-manifests", ref: "r/aicr/cluster/wrappers/gpu-operator:0.0.0-aicr-1@sha256:w" },
      ],
    })
  })

  it("repeats the same Mirrored=True when the mirror is found current, keeping the transition time", () => {
    const first = report(observe({}), { _tag: "Mirrored", result: result() })
    const again = report(observe({ mirror: first["mirror"] as never, extraConditions: first.conditions as never }), { _tag: "UpToDate" })
    expect(again).toEqual(first)
  })

  it("keeps status.mirror as it was while waiting or failing", () => {
    const o = observe({ mirror: mirrored })
    expect(report(o, { _tag: "Awaiting", message: "Waiting" })["mirror"]).toEqual(mirrored)
    expect(report(o, defectOutcome(new Error("boom")))["mirror"]).toEqual(mirrored)
  })

  it("leaves status.mirror out on first visit before anything was mirrored", () => {
    const w = report(observe({ resolved: "missing" }), { _tag: "Awaiting", message: "Waiting for Resolved" })
    expect(Object.keys(w)).toEqual(["conditions"])
    expect(w.conditions[0]).toMatchObject({ type: "Mirrored", status: "False", reason: "AwaitingResolution" })
  })
})

describe("errorsToOutcome", () => {
  const what = "Mirroring input 3f2a9c1d0e4b"
  const table = errorsToOutcome(what) as Record<string, (e: MirrorError) => Outcome>
  const cases: Array<{ error: MirrorError; class: string; status: string; reason: string; requeue: string }> = [
    {
      error: new RegistryUnavailableError({ registry: "r", cause: "ECONNREFUSED", message: "connection refused" }),
      class: "transient",
      status: "False",
      reason: "Mirroring",
      requeue: "OnChange",
    },
    { error: new UnauthorizedError({ registry: "r", message: "refused" }), class: "terminal", status: "False", reason: "Unauthorized", requeue: "After" },
    {
      error: new RegistryCredentialsUnavailableError({ path: "/x", message: "missing" }),
      class: "terminal",
      status: "False",
      reason: "RegistryCredentialsUnavailable",
      requeue: "After",
    },
    {
      error: new ConflictError({ reference: "r/a:1", existing: "sha256:a", wanted: "sha256:b", message: "Tag r/a:1 already holds sha256:a" }),
      class: "terminal",
      status: "False",
      reason: "Conflict",
      requeue: "After",
    },
    {
      error: new ChartSourceUnsupportedError({ release: "a", message: "Release a cannot be mirrored" }),
      class: "terminal",
      status: "False",
      reason: "ChartSourceUnsupported",
      requeue: "After",
    },
    {
      error: new ContentTooLargeError({ what: "x", message: "too large" }),
      class: "terminal",
      status: "False",
      reason: "ContentTooLarge",
      requeue: "OnChange",
    },
    {
      error: new ResolutionMissingError({ configMap: "c", message: "Waiting for c" }),
      class: "terminal",
      status: "False",
      reason: "AwaitingResolution",
      requeue: "OnChange",
    },
    {
      error: new ContentInvalidError({ configMap: "c", message: "malformed" }),
      class: "terminal",
      status: "Unknown",
      reason: "InternalError",
      requeue: "OnChange",
    },
  ]
  it.each(cases)("maps $error._tag to $class Mirrored=$status/$reason", (c) => {
    const o = table[c.error._tag]!(c.error)
    expect(o).toMatchObject({
      _tag: "Failed",
      class: c.class,
      condition: { type: "Mirrored", status: c.status, reason: c.reason },
      requeue: { _tag: c.requeue },
    })
    expect(Mirrored.allows(o._tag === "Failed" ? o.condition.status : "True", o._tag === "Failed" ? o.condition.reason : "")).toBe(true)
  })

  it("says 'retrying after a transient failure' with the cause for outages, as the docs describe", () => {
    const o = table["RegistryUnavailableError"]!(
      new RegistryUnavailableError({ registry: "r:5000", cause: "ECONNREFUSED", message: "GET http://r:5000/v2/ failed (ECONNREFUSED) after 5 attempts" }),
    )
    expect(o._tag === "Failed" && o.condition.message).toBe(`${what}: retrying after a transient failure: r:5000 is unavailable (ECONNREFUSED)`)
  })

  it("keeps internal details out of the condition", () => {
    expect(defectOutcome(new Error("secret detail")).condition).toEqual({
      type: "Mirrored",
      status: "Unknown",
      reason: "InternalError",
      message: INTERNAL_ERROR_MESSAGE,
    })
  })
})
