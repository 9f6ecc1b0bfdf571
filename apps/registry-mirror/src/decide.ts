/**
 * decide: pure. What this pass should do, from what gather observed. No I/O, no clock.
 *
 * - `Resolved` not True for this generation (read only via `current`, so stale or missing counts as not True),
 *   or no content named in `status.resolution` → wait.
 * - `status.mirror` already records a complete mirror of this inputDigest under the configured prefix → up to date
 *   (nothing is copied; status is rebuilt from the registry if it is ever lost, at 0 bytes), unless the check of
 *   the recorded tags (verify.ts) found one moved (`Conflict`, rechecked every verify interval), gone (mirrored
 *   again), or could not ask the registry (reported like a failed mirror).
 * - `spec.paused` → no new mirror starts (operator.md §4.13); the one already recorded stays as it is.
 * - otherwise → mirror the plan of the content ConfigMap, or fail terminally when it cannot be planned.
 */
import { shortDigest } from "@aicr/conditions"
import { readResolution } from "./content"
import { ChartSourceUnsupportedError, ContentInvalidError, type MirrorError, ResolutionMissingError } from "./errors"
import type { Observed } from "./gather"
import { BUNDLE_NAME, type MirrorPlan, planMirror } from "./plan"
import { Requeue } from "@aicr/runtime"
import { repositoryIn } from "./source"
import { movedTagError } from "./verify"

export type Decision =
  | { readonly _tag: "AwaitResolution"; readonly message: string }
  | { readonly _tag: "UpToDate"; readonly inputDigest: string }
  | { readonly _tag: "Paused"; readonly message: string }
  | { readonly _tag: "Mirror"; readonly plan: MirrorPlan }
  | {
      readonly _tag: "Fail"
      readonly error: MirrorError
      readonly inputDigest: string
      /** What the work was, for transient messages (default "Mirroring input <12 hex>"). */
      readonly what?: string
      /** When to look again, instead of the error table's. */
      readonly recheck?: Requeue
    }

/** True when `status.mirror` is a complete mirror of `inputDigest` under the configured prefix. */
export const mirrorIsCurrent = (o: Pick<Observed, "mirror" | "prefix">, inputDigest: string): boolean =>
  o.mirror?.inputDigest === inputDigest && (o.mirror.bundle ?? "").startsWith(`${repositoryIn(o.prefix, "bundles", BUNDLE_NAME)}:`)

/** A current mirror, after the check of its recorded tags; undefined when a gone tag means mirroring again. */
const checkedMirror = (o: Observed, inputDigest: string): Decision | undefined => {
  const v = o.verification
  switch (v._tag) {
    case "NotChecked":
    case "Intact":
      return { _tag: "UpToDate", inputDigest }
    case "Moved":
      return { _tag: "Fail", inputDigest, error: movedTagError(v.moved, inputDigest), recheck: Requeue.after(o.verifyIntervalMs) }
    case "Unanswered":
      return {
        _tag: "Fail",
        inputDigest,
        error: v.error,
        what: `Checking the mirror of input ${shortDigest(inputDigest)}`,
        recheck: Requeue.after(o.verifyIntervalMs),
      }
    case "Missing":
      return undefined
  }
}

export const decide = (o: Observed): Decision => {
  if (o.resolved.status !== "True") {
    return {
      _tag: "AwaitResolution",
      message: `Waiting for Resolved=True at generation ${o.generation ?? 0}: Resolved is ${o.resolved.status}/${o.resolved.reason}`,
    }
  }
  const inputDigest = o.resolution?.inputDigest
  const name = o.resolution?.contentConfigMap
  if (inputDigest === undefined || name === undefined) {
    return { _tag: "AwaitResolution", message: "Waiting for status.resolution to name an inputDigest and a content ConfigMap" }
  }
  if (mirrorIsCurrent(o, inputDigest)) {
    const checked = checkedMirror(o, inputDigest)
    if (checked !== undefined) return checked
  }
  if (o.runtime.spec.paused === true)
    return { _tag: "Paused", message: `spec.paused is set: input ${shortDigest(inputDigest)} is not mirrored until it is cleared` }
  if (o.content._tag !== "Found") {
    return {
      _tag: "Fail",
      inputDigest,
      error: new ResolutionMissingError({
        configMap: name,
        message: `Waiting for the content ConfigMap ${o.namespace}/${name} of input ${shortDigest(inputDigest)}`,
      }),
    }
  }
  const read = readResolution(o.content.data)
  if (!read.ok)
    return {
      _tag: "Fail",
      inputDigest,
      error: new ContentInvalidError({ configMap: name, message: `Content ConfigMap ${o.namespace}/${name} is malformed: ${read.why}` }),
    }
  const planned = planMirror(read.resolution, inputDigest, o.prefix, o.rewrites)
  if (!planned.ok) {
    const first = planned.unsupported[0]!
    const more =
      planned.unsupported.length > 1
        ? ` (and ${planned.unsupported.length - 1} more: ${planned.unsupported
            .slice(1)
            .map((u) => u.release)
            .join(", ")})`
        : ""
    return {
      _tag: "Fail",
      inputDigest,
      error: new ChartSourceUnsupportedError({ release: first.release, message: `Release ${first.release} cannot be mirrored: ${first.why}${more}` }),
    }
  }
  return { _tag: "Mirror", plan: planned.plan }
}
