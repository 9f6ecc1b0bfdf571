import { describe, expect, it } from "vitest"
import { formatMessage, listOf, msg, shortDigest } from "./message"

describe("formatMessage", () => {
  it.each([
    { name: "drops a trailing period", given: "Waiting for plan.", want: "Waiting for plan" },
    { name: "drops several trailing periods and spaces", given: "Waiting for plan... ", want: "Waiting for plan" },
    { name: "joins lines with a semicolon", given: "First line.\nSecond line\n", want: "First line; Second line" },
    { name: "skips blank lines", given: "One\n\n\r\nTwo", want: "One; Two" },
    { name: "collapses runs of spaces and tabs", given: "a  \t b", want: "a b" },
    {
      name: "keeps a leading lower-case word, as the wire messages of operator.md need",
      given: "rollout x: step 9/18 gpu-operator (Upgrade)",
      want: "rollout x: step 9/18 gpu-operator (Upgrade)",
    },
    { name: "keeps periods inside the text", given: "Chart v1.2.3 is missing", want: "Chart v1.2.3 is missing" },
    { name: "returns an empty message unchanged", given: "", want: "" },
  ])("$name", ({ given, want }) => {
    expect(formatMessage(given)).toBe(want)
  })

  it("cuts a message at the limit and marks the cut with an ellipsis", () => {
    expect(formatMessage("abcdefgh", 5)).toBe("abcd…")
  })
})

describe("listOf", () => {
  it.each([
    { name: "sorts and de-duplicates names", given: ["b", "a", "b"], max: 10, want: "a, b" },
    { name: "shows at most max names, then how many more", given: ["d", "c", "b", "a"], max: 2, want: "a, b and 2 more" },
    { name: "renders an empty list as an empty string", given: [], max: 10, want: "" },
  ])("$name", ({ given, max, want }) => {
    expect(listOf(given, max)).toBe(want)
  })
})

describe("msg", () => {
  it("renders arrays and sets in sorted order, so the same facts give the same text", () => {
    expect(msg`Releases ${["kubeflow", "gpu-operator"]} render outside ${new Set(["z", "a"])}.`).toBe("Releases gpu-operator, kubeflow render outside a, z")
  })

  it("renders numbers and strings as written", () => {
    expect(msg`step ${9}/${18} ${"gpu-operator"} (Upgrade)`).toBe("step 9/18 gpu-operator (Upgrade)")
  })
})

describe("shortDigest", () => {
  it("keeps the first 12 hex characters of a sha256 digest", () => {
    expect(shortDigest(`sha256:${"3f2a9c1d0b7e".padEnd(64, "0")}`)).toBe("3f2a9c1d0b7e")
  })
})
