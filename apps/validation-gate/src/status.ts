/**
 * report: pure. The owned conditions (`ValidationReady`, `Validated`) and the room (`status.validation`) for every
 * decision and run outcome. Messages carry no times, so an unchanged state makes no write.
 */
import { ValidationReady, Validated } from "@aicr/api"
import { type ConditionIntent, materialize } from "@aicr/conditions"
import type { StatusWrite } from "@aicr/kube"
import type { RunOutcome } from "./act"
import type { Decision } from "./decide"
import type { Observed, ValidationRoom } from "./gather"

export type Pass =
  { readonly decision: Exclude<Decision, { _tag: "LeaveAlone" | "Validate" }> } | { readonly decision: { readonly _tag: "Validate" }; readonly run: RunOutcome }

const DISABLED = "The runtime sets spec.validation.deployment: Disabled: deployment validation is off and gates nothing"

export const readyCondition = (p: Pass, o: Pick<Observed, "settings">): ConditionIntent<"ValidationReady"> => {
  switch (p.decision._tag) {
    case "Disabled":
      return ValidationReady.true("ValidationDisabled", DISABLED)
    case "Unavailable":
      return ValidationReady.false("ValidationUnavailable", p.decision.message)
    default:
      return ValidationReady.true(
        "ValidationAvailable",
        `The validation launcher ${o.settings.validationNamespace}/${o.settings.launcher} is installed, may run Jobs there, and AICR's validators will hold cluster-wide rights`,
      )
  }
}

export const validatedCondition = (p: Pass): ConditionIntent<"Validated"> => {
  const d = p.decision
  switch (d._tag) {
    case "Disabled":
      return Validated.true("ValidationDisabled", DISABLED)
    case "Unavailable":
      return Validated.false("ValidationUnavailable", d.message)
    case "AwaitSteps":
      return Validated.false("AwaitingSteps", d.message)
    case "Keep":
      return d.reason === "ValidationPassed" ? Validated.true("ValidationPassed", d.message) : Validated.false(d.reason, d.message)
    case "Validate": {
      const run = (p as { run: RunOutcome }).run
      switch (run._tag) {
        case "Running":
          return Validated.false("Validating", run.message)
        case "EvidenceFailed":
          return Validated.false(
            "Validating",
            `Deployment validation run ${run.room.runID ?? ""} ended ${run.room.result ?? ""}; pushing its evidence: ${run.error.transient ? "retrying after a transient failure: " : ""}${run.error.message}`,
          )
        case "Verdict":
          return run.reason === "ValidationPassed" ? Validated.true(run.reason, run.message) : Validated.false(run.reason, run.message)
      }
    }
  }
}

/** The room: the run as last known (kept as it was while no run is due). */
export const roomOf = (p: Pass, o: Pick<Observed, "validation">): ValidationRoom | undefined =>
  p.decision._tag === "Validate" ? (p as { run: RunOutcome }).run.room : o.validation

export const report = (o: Observed, p: Pass): StatusWrite => {
  const conditions = materialize([readyCondition(p, o), validatedCondition(p)], {
    existing: o.rollout.status?.conditions,
    generation: o.rollout.metadata.generation,
    now: o.now,
  })
  const room = roomOf(p, o)
  return room === undefined || Object.keys(room).length === 0 ? { conditions } : { conditions, validation: room }
}
