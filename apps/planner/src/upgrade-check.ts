/**
 * upgrade-check: the planner's `aicr upgrade-check` run (operator.md §4.5) for an AICR that has it (1.x,
 * `capabilitiesOf(version).upgradeCheck`). `upgradeCheckRequest` (pure) names the run: the target plan's AICR image,
 * and the two plans' `recipe.json` content (ConfigMap and sha256); its key — the digest of the three — names the
 * Job, so one transition is checked once. `runUpgradeCheck` reads both recipes, verifies them against the digests
 * the plans recorded, and moves the Job one step (`runAicrJob`, packages/aicr): created suspended, its input
 * ConfigMap created owned by it, resumed; then how it ended, with the report from its output ConfigMap.
 */
import { digestOf, type JobState, runAicrJob, upgradeCheckInput, upgradeCheckJob, upgradeCheckJobName } from "@aicr/aicr"
import { Core, type KubeObject, type Plan, sha256 } from "@aicr/api"
import { shortDigest } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Effect, Option } from "effect"
import type { PlannerSettings } from "./config"

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
  const c = p.content?.find((x) => x.key === "recipe.json")
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

type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

const readRecipe = (namespace: string, r: RecipeRef) =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const cm = yield* kube.get<ConfigMap>(Core.ConfigMap, `${namespace}/${r.configMap}`)
    const text = Option.isSome(cm) ? cm.value.data?.["recipe.json"] : undefined
    if (text === undefined)
      return { ok: false as const, why: `content ConfigMap ${namespace}/${r.configMap} ${Option.isNone(cm) ? "is gone" : "has no recipe.json"}` }
    if (sha256(text) !== r.digest)
      return { ok: false as const, why: `the recipe.json of ${namespace}/${r.configMap} is not the one the plan recorded (${shortDigest(r.digest)})` }
    return { ok: true as const, text }
  })

export const runUpgradeCheck = (req: UpgradeCheckRequest, settings: PlannerSettings, fieldManager: string): Effect.Effect<UpgradeCheckRun, KubeError, Kube> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const name = upgradeCheckJobName(req.key)
    const job = upgradeCheckJob({ ...settings.jobs, image: req.image }, req.key)
    const where = `${settings.jobs.namespace}/${name}`
    // Once the Job runs its input is its own (owned ConfigMap): the recipes are read only to start it.
    const found = yield* kube.get<KubeObject & { readonly spec?: { readonly suspend?: boolean } }>(Core.Job, where)
    const starting = Option.isNone(found) || found.value.spec?.suspend === true
    let recipes = { from: "", to: "" }
    if (starting) {
      const [from, to] = [yield* readRecipe(settings.namespace, req.from), yield* readRecipe(settings.namespace, req.to)]
      if (!from.ok) return { _tag: "InputUnreadable", key: req.key, message: from.why }
      if (!to.ok) return { _tag: "InputUnreadable", key: req.key, message: to.why }
      recipes = { from: from.text, to: to.text }
    }
    const state = yield* runAicrJob(kube, fieldManager, job, (created) => (starting ? [upgradeCheckInput(created, req.key, recipes)] : []))
    return { _tag: "Job", key: req.key, job: where, state }
  })
