/**
 * Reading other controllers' conditions. A condition counts only if it is current: written for the generation
 * the object is at now. Missing or stale conditions read as Unknown and never as True (design/style.md §B.3).
 */
import type { Condition, ConditionStatus } from "./condition"
import type { AnyConditionDef } from "./def"
import { listOf } from "./message"

/** The smallest object shape these helpers need; every CRD object we read fits it. */
export interface ConditionHolder {
  readonly metadata: { readonly generation?: number | undefined }
  readonly status?: { readonly conditions?: ReadonlyArray<Condition> | undefined } | undefined
}

/** A condition as a reader should see it. `lastTransitionTime` is absent when the condition was never reported. */
export interface CurrentCondition {
  readonly type: string
  readonly status: ConditionStatus
  readonly reason: string
  readonly message: string
  readonly observedGeneration?: number
  readonly lastTransitionTime?: string
  /** False when the value was replaced by Unknown because it was missing or stale. */
  readonly current: boolean
}

/** Reader-side reasons; no writer sets them. */
export const ReaderReasons = {
  NotYetReported: "the condition is not on the object yet",
  Stale: "the condition was written for an older generation than the object's",
} as const

/** The condition of type `def.type`, or Unknown/`NotYetReported` or Unknown/`Stale`. */
export const current = (obj: ConditionHolder, def: Pick<AnyConditionDef, "type">): CurrentCondition => {
  const found = obj.status?.conditions?.find((c) => c.type === def.type)
  if (found === undefined) {
    return { type: def.type, status: "Unknown", reason: "NotYetReported", message: `${def.type} has not been reported yet`, current: false }
  }
  const generation = obj.metadata.generation
  if (found.observedGeneration !== generation) {
    return {
      type: def.type,
      status: "Unknown",
      reason: "Stale",
      message: `${def.type} was reported for generation ${found.observedGeneration ?? "unknown"}, the object is at generation ${generation ?? "unknown"}`,
      ...(found.observedGeneration === undefined ? {} : { observedGeneration: found.observedGeneration }),
      lastTransitionTime: found.lastTransitionTime,
      current: false,
    }
  }
  return { ...found, current: true }
}

export const isTrue = (obj: ConditionHolder, def: Pick<AnyConditionDef, "type">): boolean => current(obj, def).status === "True"

/** Current and in its healthy state (True for normal-true, False for abnormal-true). */
export const isHealthy = (obj: ConditionHolder, def: Pick<AnyConditionDef, "type" | "healthy">): boolean => current(obj, def).status === def.healthy

export interface Summary {
  /** False if any input is unhealthy; else Unknown if any is Unknown (missing and stale included); else True. */
  readonly status: ConditionStatus
  /** Every input, in the order given. */
  readonly conditions: ReadonlyArray<CurrentCondition>
  /** Inputs in their unhealthy state, in the order given: the first one is the one to report. */
  readonly unhealthy: ReadonlyArray<CurrentCondition>
  /** Inputs that are Unknown, missing or stale, in the order given. */
  readonly unknown: ReadonlyArray<CurrentCondition>
  /** Deterministic text naming the unhealthy inputs, else the unknown ones; empty when all are healthy. */
  readonly message: string
}

const describe = (c: CurrentCondition): string => `${c.type}=${c.status} ${c.reason}${c.message === "" ? "" : `: ${c.message}`}`

/**
 * Summarises the given conditions of an object from current values only (CAPI `NewSummaryCondition`); the
 * lifecycle owner maps the result onto its own reasons.
 */
export const summarize = (obj: ConditionHolder, options: { readonly of: ReadonlyArray<Pick<AnyConditionDef, "type" | "healthy">> }): Summary => {
  const conditions = options.of.map((def) => ({ def, cond: current(obj, def) }))
  const unhealthy = conditions.filter(({ def, cond }) => cond.status !== "Unknown" && cond.status !== def.healthy).map((x) => x.cond)
  const unknown = conditions.filter(({ cond }) => cond.status === "Unknown").map((x) => x.cond)
  const status: ConditionStatus = unhealthy.length > 0 ? "False" : unknown.length > 0 ? "Unknown" : "True"
  const message =
    unhealthy.length > 0
      ? unhealthy.map(describe).join("; ")
      : unknown.length > 0
        ? `Waiting for ${listOf(
            unknown.map((c) => c.type),
            unknown.length,
          )}`
        : ""
  return { status, conditions: conditions.map((x) => x.cond), unhealthy, unknown, message }
}
