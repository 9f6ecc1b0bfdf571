/**
 * validation-gate: is deployment validation available before any step runs, and did it pass after the last one?
 *
 * Owns:   conditions `ValidationReady` and `Validated`, and `status.validation`, on each RuntimeRollout; the
 *         validation Jobs (snapshot, `aicr validate`) and their input in the validation namespace; the evidence
 *         artifacts under `<prefix>/evidence/`.
 * Reads:  the rollout (spec, approval, `Progressing` via `current`), the `cluster` runtime (`spec.validation`, the
 *         accelerated nodes of `status.discovery`), the launcher's ServiceAccount, the target plan and its recipe.
 * Leaves alone: steps (step-executor), outcomes (planner: it closes the rollout `Succeeded` only after
 *         `Validated=True`, and `Failed` on a terminal not-validated reason), approvals, Remove rollouts.
 */
import { type ObjectKey, RuntimeRolloutKind, type RuntimeRollout } from "@aicr/api"
import { roomOn } from "@aicr/contracts"
import { EventRecorder, Kube, type KubeError } from "@aicr/kube"
import { Requeue, RetryAfterTransientFailure, warnOnTransition } from "@aicr/runtime"
import { Effect, Option } from "effect"
import { type EvidenceRegistry, runValidation, type Signer } from "./act"
import type { GateConfig } from "./config"
import type { Authorizer } from "./installation"
import { contract } from "./contract"
import { decide } from "./decide"
import { RECHECK_AFTER } from "./errors"
import { gather } from "./gather"
import { type Pass, report } from "./status"

export const room = roomOn(contract, RuntimeRolloutKind)

/** How often a running validation is looked at besides its Jobs' own events (a Job watch can lag). */
const RUNNING_RECHECK = "30 seconds"

export const reconcile = (
  key: ObjectKey,
): Effect.Effect<Requeue, KubeError | RetryAfterTransientFailure, Kube | EventRecorder | GateConfig | EvidenceRegistry | Signer | Authorizer> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const found = yield* kube.get<RuntimeRollout>(RuntimeRolloutKind, key)
    if (Option.isNone(found)) return Requeue.onChange
    const rollout = found.value
    const o = yield* gather(rollout)
    const decision = decide(o)
    yield* Effect.logDebug("Decided", { RuntimeRollout: key, decision: decision._tag })
    if (decision._tag === "LeaveAlone") return Requeue.onChange
    const pass: Pass = decision._tag === "Validate" ? { decision, run: yield* runValidation(o) } : { decision }
    const { applied } = yield* kube.applyStatus(room, rollout, report(o, pass))
    const events = yield* EventRecorder
    if (pass.decision._tag !== "Validate") {
      // One Warning per transition into ValidationUnavailable (a pass that changes nothing emits nothing).
      if (pass.decision._tag === "Unavailable")
        yield* warnOnTransition(rollout, applied, { reason: "ValidationUnavailable", action: "CheckValidation", note: pass.decision.message })
      return Requeue.onChange
    }
    const run = (pass as Extract<Pass, { run: unknown }>).run
    switch (run._tag) {
      case "Running":
        if (applied) yield* Effect.logInfo("Validating", { RuntimeRollout: key, message: run.message })
        return Requeue.after(RUNNING_RECHECK)
      case "Verdict":
        if (applied) {
          yield* Effect.logInfo("Validation ended", { RuntimeRollout: key, reason: run.reason, evidence: run.room.evidenceRef, message: run.message })
          yield* events.event(rollout, { type: run.status === "True" ? "Normal" : "Warning", reason: run.reason, action: "Validate", note: run.message })
        }
        return Requeue.onChange
      case "EvidenceFailed":
        yield* Effect.logWarning("Evidence push failed", { RuntimeRollout: key, reason: run.error.reason, message: run.error.message })
        if (run.error.transient) return yield* Effect.fail(new RetryAfterTransientFailure({ reason: run.error.reason, message: run.error.message }))
        return Requeue.after(RECHECK_AFTER)
    }
    return Requeue.onChange
  }).pipe(Effect.withSpan("validation-gate.reconcile"))
