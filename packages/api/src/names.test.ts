import { describe, expect, it } from "vitest"
import { LABEL_VALUE_PATTERN } from "./common"
import { contentConfigMapName, planConfigMapName, planKey, rolloutName } from "./names"

const D = `sha256:3f2a9c1d0b7e${"0".repeat(52)}`

describe("wire names", () => {
  it.each([
    {
      name: "a plan ConfigMap is aicr-plan- and 32 hex characters of its desiredStateDigest",
      got: planConfigMapName(D),
      want: "aicr-plan-3f2a9c1d0b7e00000000000000000000",
    },
    {
      name: "a content ConfigMap is aicr-content- and 32 hex characters of its inputDigest",
      got: contentConfigMapName(D),
      want: "aicr-content-3f2a9c1d0b7e00000000000000000000",
    },
    { name: "a rollout is cluster-, 12 hex characters of its target and the attempt", got: rolloutName(D, 2), want: "cluster-3f2a9c1d0b7e-2" },
  ])("$name", ({ got, want }) => {
    expect(got).toBe(want)
  })

  it("makes a plan key that fits a label value", () => {
    expect(LABEL_VALUE_PATTERN.test(planKey(D)) && planKey(D).length <= 63).toBe(true)
  })

  it.each([
    { name: "refuses a digest that is not sha256", run: () => planConfigMapName("sha512:abc") },
    { name: "refuses attempt 0", run: () => rolloutName(D, 0) },
  ])("$name", ({ run }) => {
    expect(run).toThrow()
  })
})
