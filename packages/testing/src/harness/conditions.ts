/**
 * Condition assertions for the int and e2e tiers. A call with the condition type, status and reason as string literals
 * (`expectCondition(runtime, "Ready", "False", "EngineMissing")`, `await untilCondition(read, "Ready", "False",
 * "EngineMissing")`) is what the condition catalog counts as a test reaching that reason on the real control plane:
 * `packages/api/src/asserted-in-tests.ts` finds these calls in the test files' syntax trees and
 * `docs/api/conditions.md` names the tests that make them. Other ways of checking a condition still work; they are
 * not counted.
 */
import { eventually } from "./kube"
import { HarnessError } from "./proc"

export type ConditionStatus = "True" | "False" | "Unknown"

/** A condition as the API server returns it, or as a test reads it field by field (no `type`). */
export interface Condition {
  readonly type?: string | undefined
  readonly status: string
  readonly reason?: string | undefined
  readonly message?: string | undefined
}

/** Where a condition is looked up: an object with `status.conditions`, a list of conditions, or one condition. */
export type ConditionSource<C extends Condition = Condition> =
  { readonly status?: { readonly conditions?: ReadonlyArray<C> | undefined } | undefined } | ReadonlyArray<C> | C | undefined

const isCondition = (s: unknown): s is Condition => typeof s === "object" && s !== null && typeof (s as { status?: unknown }).status === "string"

/** The condition `type` of `source` (a single condition without a type is taken as that type). */
export const conditionIn = <C extends Condition>(source: ConditionSource<C>, type: string): C | undefined => {
  if (source === undefined) return undefined
  if (Array.isArray(source)) return (source as ReadonlyArray<C>).find((c) => c.type === type)
  if (isCondition(source)) return source.type === undefined || source.type === type ? (source as C) : undefined
  return (source as { status?: { conditions?: ReadonlyArray<C> } }).status?.conditions?.find((c) => c.type === type)
}

const show = (c: Condition | undefined) => (c === undefined ? "no such condition" : `${c.status}/${c.reason ?? ""}: ${c.message ?? ""}`)

/** Asserts that `source` holds condition `type` with `status` and `reason`; returns it (for checks of its message). */
export const expectCondition = <C extends Condition>(source: ConditionSource<C>, type: string, status: ConditionStatus, reason: string): C => {
  const c = conditionIn(source, type)
  if (c?.status !== status || c.reason !== reason) throw new HarnessError(`expected condition ${type} ${status}/${reason}, got ${show(c)}`)
  return c
}

/**
 * Reads with `read` until condition `type` has `status` and `reason` (default 60 s), and a message matching
 * `opts.message` if given (a controller whose cache is catching up may first write the same reason with an older
 * message); returns it. On timeout the error names the condition last seen.
 */
export const untilCondition = async <C extends Condition>(
  read: () => Promise<ConditionSource<C>>,
  type: string,
  status: ConditionStatus,
  reason: string,
  opts: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly message?: RegExp } = {},
): Promise<C> => {
  let last: C | undefined
  try {
    return await eventually(
      async () => {
        last = conditionIn(await read(), type)
        return last?.status === status && last.reason === reason && (opts.message?.test(last.message ?? "") ?? true) ? last : undefined
      },
      {
        timeoutMs: opts.timeoutMs ?? 60_000,
        intervalMs: opts.intervalMs ?? 200,
        what: `condition ${type} ${status}/${reason}${opts.message ? ` with a message matching ${opts.message}` : ""}`,
      },
    )
  } catch (e) {
    throw new HarnessError(`${e instanceof Error ? e.message : String(e)} (last seen: ${show(last)})`)
  }
}
