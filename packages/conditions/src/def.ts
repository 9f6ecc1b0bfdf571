/**
 * Typed condition definitions: one per condition type, with its owner, polarity and a reason catalog per status.
 * The constructors only accept a reason from the catalog of that status, so a wrong reason fails to compile
 * (Crossplane's named constructors, made generic; design/style.md §B.3).
 *
 * @example
 * const Approved = ConditionDef.make({
 *   type: "Approved", owner: "approval-guard", polarity: "normal-true", doc: "This RuntimeRollout may proceed now",
 *   reasons: { True: { ApprovedByUser: "an approval is present" }, False: { AwaitingApproval: "no approval yet" } },
 * })
 * Approved.false("AwaitingApproval", "Waiting for an approval")
 * // Approved.true("AwaitingApproval", "…")  // does not compile
 */
import { CONDITION_REASON_PATTERN, CONDITION_TYPE_PATTERN, MAX_CONDITION_TYPE_LENGTH, type ConditionIntent, type ConditionStatus } from "./wire"
import { formatMessage } from "./message"

/** `normal-true`: True is the healthy state (Ready, Resolved). `abnormal-true`: True needs attention (Stalled). */
export type Polarity = "normal-true" | "abnormal-true"

/** Reason → "surfaces when …" (CAPI style); feeds the generated condition catalog. */
export type ReasonDocs = Readonly<Record<string, string>>

export interface ReasonCatalog {
  readonly True?: ReasonDocs
  readonly False?: ReasonDocs
  readonly Unknown?: ReasonDocs
}

export type ReasonOf<R extends ReasonCatalog, S extends ConditionStatus> = R[S] extends ReasonDocs ? Extract<keyof R[S], string> : never

/** Unknown reasons every writer needs: first visit, and an unexpected failure (CAPI). */
export const StandardUnknownReasons = {
  NotYetObserved: "the owner has not finished its first pass for this generation",
  InternalError: "an unexpected failure; the message says to check the controller logs, which hold the detail",
} as const

export const INTERNAL_ERROR_MESSAGE = "Please check controller logs for errors"

export interface ConditionDef<T extends string = string, R extends ReasonCatalog = ReasonCatalog> {
  readonly type: T
  /** The one controller that writes this condition (architecture.md §2). */
  readonly owner: string
  readonly polarity: Polarity
  /** Meaning of True, and whether it oscillates (Kargo style). */
  readonly doc: string
  readonly reasons: R
  /** The status that means "fine": True for normal-true, False for abnormal-true. */
  readonly healthy: "True" | "False"
  true(reason: ReasonOf<R, "True">, message: string): ConditionIntent<T>
  false(reason: ReasonOf<R, "False">, message: string): ConditionIntent<T>
  unknown(reason: ReasonOf<R, "Unknown">, message: string): ConditionIntent<T>
  /** Whether `reason` is in the catalog for `status`. */
  allows(status: ConditionStatus, reason: string): boolean
  /** Every (status, reason) pair in the catalog, in declaration order. */
  entries(): ReadonlyArray<{ readonly status: ConditionStatus; readonly reason: string; readonly doc: string }>
}

export type AnyConditionDef = ConditionDef<string, ReasonCatalog>

const STATUSES: ReadonlyArray<ConditionStatus> = ["True", "False", "Unknown"]

const make = <const T extends string, const R extends ReasonCatalog>(spec: {
  readonly type: T
  readonly owner: string
  readonly polarity: Polarity
  /** Meaning of True and whether it oscillates; catalogs in packages/api always give it. */
  readonly doc?: string
  readonly reasons: R
}): ConditionDef<T, R> => {
  if (spec.type.length > MAX_CONDITION_TYPE_LENGTH || !CONDITION_TYPE_PATTERN.test(spec.type)) {
    throw new Error(`Condition type ${JSON.stringify(spec.type)} is not a valid metav1.Condition type`)
  }
  if (spec.owner.length === 0) throw new Error(`Condition ${spec.type} has no owner`)
  const entries = STATUSES.flatMap((status) => Object.entries(spec.reasons[status] ?? {}).map(([reason, doc]) => ({ status, reason, doc })))
  for (const e of entries) {
    if (!CONDITION_REASON_PATTERN.test(e.reason)) throw new Error(`Condition ${spec.type}: reason ${JSON.stringify(e.reason)} is not CamelCase`)
    if (e.doc.trim().length === 0) throw new Error(`Condition ${spec.type}: reason ${e.reason} has no "surfaces when" text`)
  }
  const allows = (status: ConditionStatus, reason: string): boolean => Object.hasOwn(spec.reasons[status] ?? {}, reason)
  const build =
    (status: ConditionStatus) =>
    (reason: string, message: string): ConditionIntent<T> => {
      // The types already forbid this; the check catches casts and untyped callers.
      if (!allows(status, reason)) throw new Error(`Condition ${spec.type}: ${reason} is not a ${status} reason`)
      return { type: spec.type, status, reason, message: formatMessage(message) }
    }
  return {
    ...spec,
    doc: spec.doc ?? "",
    healthy: spec.polarity === "normal-true" ? "True" : "False",
    true: build("True"),
    false: build("False"),
    unknown: build("Unknown"),
    allows,
    entries: () => entries,
  }
}

export const ConditionDef = { make } as const
