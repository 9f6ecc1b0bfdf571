import { describe, expect, it } from "vitest"
import { KubeError, reasonFromStatus } from "./errors"
import { conflictingManagers } from "./guarded"

const conflict = (...messages: string[]) =>
  new KubeError({
    verb: "PATCH",
    path: "/x",
    reason: reasonFromStatus(409, {
      kind: "Status",
      code: 409,
      reason: "Conflict",
      message: "Apply failed",
      details: { causes: messages.map((message, i) => ({ reason: "FieldManagerConflict", message, field: `.spec.f${i}` })) },
    }),
  })

describe("conflictingManagers", () => {
  it("reads the managers each cause names, as the API server and FakeKube spell them", () => {
    expect(conflictingManagers(conflict('conflict with "aicr-step-executor" using argoproj.io/v1alpha1'))).toEqual(["aicr-step-executor"])
    expect(conflictingManagers(conflict('conflict with "a" with subresource "status" using v1', 'conflict with "b" using v1'))).toEqual(["a", "b"])
    expect(conflictingManagers(conflict('conflict with "a", "b"'))).toEqual(["a", "b"])
  })

  it("is empty for any other error, so nothing is forced on it", () => {
    expect(
      conflictingManagers(
        new KubeError({ verb: "PATCH", path: "/x", reason: reasonFromStatus(409, { reason: "Conflict", message: "the object has been modified" }) }),
      ),
    ).toEqual([])
    expect(conflictingManagers(conflict("something else"))).toEqual([])
  })
})
