/**
 * From intents to wire conditions, and the comparisons that let a controller skip no-op writes.
 *
 * Rules (design/style.md §B.3): `observedGeneration` is the generation read at the start of the reconcile;
 * `lastTransitionTime` keeps its existing value unless `status` changes, and is then `now` truncated to whole
 * seconds in UTC with a "Z"; reason and message may change without touching it.
 */
import type { Condition, ConditionIntent } from "./condition"

/** `2026-12-02T10:11:12.345Z` → `2026-12-02T10:11:12Z`. */
export const toConditionTime = (now: Date | string | number): string => {
  const ms = new Date(now).getTime()
  if (!Number.isFinite(ms)) throw new Error(`Invalid time ${String(now)}`)
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/u, "Z")
}

/** `2026-12-02T10:11:12.345Z` as it is: a wire time with milliseconds (the planner's rollout deadlines and plan times). */
export const toMillisTime = (ms: number): string => new Date(ms).toISOString()

export interface MaterializeOptions {
  /** The conditions currently on the object (all writers'); only the intents' types are looked at. */
  readonly existing?: ReadonlyArray<Condition> | undefined
  /** `metadata.generation` of the object read at the start of this reconcile. */
  readonly generation: number | undefined
  readonly now: Date | string | number
}

export const materialize = (intents: ReadonlyArray<ConditionIntent>, options: MaterializeOptions): Array<Condition> => {
  const seen = new Set<string>()
  const now = toConditionTime(options.now)
  return intents.map((intent) => {
    if (seen.has(intent.type)) throw new Error(`Condition ${intent.type} is set twice in one pass`)
    seen.add(intent.type)
    const before = options.existing?.find((c) => c.type === intent.type)
    const lastTransitionTime = before !== undefined && before.status === intent.status ? before.lastTransitionTime : now
    return {
      type: intent.type,
      status: intent.status,
      ...(options.generation === undefined ? {} : { observedGeneration: options.generation }),
      lastTransitionTime,
      reason: intent.reason,
      message: intent.message,
    }
  })
}

const sameInstant = (a: string, b: string): boolean => a === b || new Date(a).getTime() === new Date(b).getTime()

/** Two wire conditions say the same thing (time compared as an instant). */
export const isSame = (a: Condition, b: Condition): boolean =>
  a.type === b.type &&
  a.status === b.status &&
  a.reason === b.reason &&
  a.message === b.message &&
  a.observedGeneration === b.observedGeneration &&
  sameInstant(a.lastTransitionTime, b.lastTransitionTime)

/** The same set of conditions, in any order. */
export const equalIgnoringOrder = (a: ReadonlyArray<Condition>, b: ReadonlyArray<Condition>): boolean =>
  a.length === b.length && a.every((x) => b.some((y) => isSame(x, y)))

/**
 * Whether applying `desired` would change nothing: every desired condition is already on the object, identical.
 * Other writers' conditions in `existing` are ignored.
 */
export const isUpToDate = (desired: ReadonlyArray<Condition>, existing: ReadonlyArray<Condition> | undefined): boolean =>
  desired.every((d) => existing?.some((e) => isSame(d, e)) ?? false)
