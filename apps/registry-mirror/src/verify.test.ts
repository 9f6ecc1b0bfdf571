import { describe, expect, it } from "vitest"
import { recordedTags, verdictOf, verificationDue } from "./verify"

const d = (c: string) => `sha256:${c.repeat(64)}`
const mirror = {
  inputDigest: d("1"),
  bundle: `r:5000/aicr/c/bundles/cluster:input-1@${d("b")}`,
  charts: [
    { release: "gpu-operator", ref: `r:5000/aicr/c/charts/gpu-operator:v25.10.1@${d("a")}` },
    { release: "cert-manager", ref: `r:5000/aicr/c/charts/cert-manager:v1.17.2@${d("c")}` },
    { release: "broken", ref: "not a ref" },
  ],
}

describe("recordedTags", () => {
  it("lists every recorded tag with its digest, charts by release then the bundle, skipping what is not host/repo:tag@digest", () => {
    expect(recordedTags(mirror)).toEqual([
      { key: "cert-manager", reference: "r:5000/aicr/c/charts/cert-manager:v1.17.2", digest: d("c") },
      { key: "gpu-operator", reference: "r:5000/aicr/c/charts/gpu-operator:v25.10.1", digest: d("a") },
      { key: "bundle", reference: "r:5000/aicr/c/bundles/cluster:input-1", digest: d("b") },
    ])
  })
})

describe("verdictOf", () => {
  const recorded = recordedTags(mirror)
  const found = (over: Record<string, string | undefined> = {}) =>
    recorded.map((r) => ({ reference: r.reference, digest: r.reference in over ? over[r.reference] : r.digest }))
  it("intact when every tag holds its recorded digest", () => expect(verdictOf(recorded, found())).toEqual({ _tag: "Intact", checked: 3 }))
  it("moved when a tag holds another digest, with both", () =>
    expect(verdictOf(recorded, found({ [recorded[1]!.reference]: d("e") }))).toEqual({ _tag: "Moved", moved: [{ ...recorded[1]!, found: d("e") }] }))
  it("missing when a tag is gone", () =>
    expect(verdictOf(recorded, found({ [recorded[2]!.reference]: undefined }))).toEqual({ _tag: "Missing", missing: [recorded[2]] }))
  it("a moved tag outranks a gone one (it needs a human)", () =>
    expect(verdictOf(recorded, found({ [recorded[0]!.reference]: undefined, [recorded[2]!.reference]: d("f") }))._tag).toBe("Moved"))
})

describe("verificationDue", () => {
  const last = { inputDigest: d("1"), at: 1_000, intact: true }
  it.each([
    { name: "never checked (a start)", last: undefined, now: 1_000, due: true },
    { name: "checked, within the interval", last, now: 1_000 + 599_999, due: false },
    { name: "checked, the interval passed", last, now: 1_000 + 600_000, due: true },
    { name: "checked another input", last: { ...last, inputDigest: d("2") }, now: 1_001, due: true },
    { name: "last check found it broken", last: { ...last, intact: false }, now: 1_001, due: true },
  ])("$name → $due", (c) => expect(verificationDue(c.last, d("1"), c.now, 600_000)).toBe(c.due))
})
