/**
 * upgrade-check: pure. The planner's `aicr upgrade-check` run (operator.md §4.5) for an AICR that has it (1.x,
 * `capabilitiesOf(version).upgradeCheck`). `upgradeCheckRequest` names the run: the target plan's AICR image, and the
 * two plans' `recipe.json` content (ConfigMap and sha256); its key — the digest of the three — names the Job, so one
 * transition is checked once. `runUpgradeCheck` (act.ts) reads both recipes, verifies them against the digests the
 * plans recorded, and moves the Job one step (`runAicrJob`, packages/aicr): created suspended, its input ConfigMap
 * created owned by it, resumed; then how it ended, with the report from its output ConfigMap.
 */
import { digestOf, type JobState } from "@aicr/aicr"
import { type Plan, recipeContentOf } from "@aicr/api"
import { shortDigest } from "@aicr/conditions"

export interface RecipeRef {
  readonly configMap: string
  readonly digest: string
}

export interface UpgradeCheckRequest {
  /** Names the Job: digestOf({image, from, to}). */
  readonly key: string
  readonly image: string
  readonly from: RecipeRef
  readonly to: RecipeRef
}

/** What the run said: the Job's state, or why it could not start (a recipe gone or changed). */
export type UpgradeCheckRun =
  | { readonly _tag: "Job"; readonly key: string; readonly job: string; readonly state: JobState }
  | { readonly _tag: "InputUnreadable"; readonly key: string; readonly message: string }

const recipeOf = (p: Plan): RecipeRef | undefined => {
  const c = recipeContentOf(p)
  return c === undefined ? undefined : { configMap: c.configMap, digest: c.digest }
}

/** The run for from → to, or why there is none: a plan that recorded no recipe, or no image. */
export const upgradeCheckRequest = (from: Plan, to: Plan): UpgradeCheckRequest | { readonly why: string } => {
  const image = to.aicr?.image
  if (image === undefined) return { why: `the target plan ${shortDigest(to.desiredStateDigest)} records no AICR image to run upgrade-check with` }
  const [f, t] = [recipeOf(from), recipeOf(to)]
  if (f === undefined || t === undefined) {
    return {
      why: `the ${f === undefined ? "active" : "target"} plan ${shortDigest((f === undefined ? from : to).desiredStateDigest)} records no recipe.json content, which upgrade-check compares`,
    }
  }
  return { key: digestOf({ image, from: f.digest, to: t.digest }), image, from: f, to: t }
}
