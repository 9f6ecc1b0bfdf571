/**
 * report: pure. The owned condition (`Mirrored`) and the status room (`status.mirror`) for every outcome, on every
 * path: first visit, waiting, mirrored, up to date, terminal and transient failures, internal errors. Messages are
 * deterministic (no times, sorted lists), so an unchanged state makes no write.
 */
import { Mirrored } from "@aicr/api"
import { type ConditionIntent, materialize, shortDigest } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import type { FailureOutcome } from "./errors"
import type { MirrorStatus, Observed } from "./gather"
import type { MirrorResult } from "./mirror"

export type Outcome =
  | { readonly _tag: "Mirrored"; readonly result: MirrorResult }
  | { readonly _tag: "UpToDate" }
  | { readonly _tag: "Awaiting"; readonly message: string }
  /** spec.paused: waiting, not a stall (Ready says Paused). */
  | { readonly _tag: "Paused"; readonly message: string }
  | FailureOutcome

/** The room content for a finished mirror: every artifact, sorted by status key, and the bundle. */
export const mirrorStatusOf = (r: MirrorResult): MirrorStatus => ({
  inputDigest: r.inputDigest,
  bundle: r.bundle.ref,
  charts: [...r.charts].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((c) => ({ release: c.key, ref: c.ref })),
})

/** The True message, derived from the room only, so a pass that finds the mirror current repeats it exactly. */
export const mirroredMessage = (m: MirrorStatus): string => {
  const charts = m.charts ?? []
  const wrappers = charts.filter((c) => c.ref.includes("/wrappers/")).length
  return `Mirrored ${charts.length - wrappers} charts, ${wrappers} wrapper charts and the bundle of input ${shortDigest(m.inputDigest ?? "")}`
}

export const mirroredCondition = (outcome: Outcome, room: MirrorStatus | undefined): ConditionIntent<"Mirrored"> => {
  switch (outcome._tag) {
    case "Mirrored":
    case "UpToDate":
      return Mirrored.true("ContentMirrored", mirroredMessage(room ?? {}))
    case "Awaiting":
      return Mirrored.false("AwaitingResolution", outcome.message)
    case "Paused":
      return Mirrored.false("Mirroring", outcome.message)
    case "Failed":
      return outcome.condition
  }
}

/** The complete status write: `Mirrored` plus `status.mirror` (kept as it was unless a mirror just finished). */
export const report = (o: Observed, outcome: Outcome): StatusWrite => {
  const room = outcome._tag === "Mirrored" ? mirrorStatusOf(outcome.result) : o.mirror
  const conditions = materialize([mirroredCondition(outcome, room)], {
    existing: o.runtime.status?.conditions,
    generation: o.generation,
    now: o.now,
  })
  return room === undefined ? { conditions } : { conditions, mirror: room }
}
