/**
 * `RecipeResult`: what `aicr recipe -t json` writes (aicr-cli.md §1.4, §2.4–2.5). The operator reads the components,
 * their `dependencyRefs` and `deploymentOrder`; everything else is carried as written.
 */
import { Result, Schema } from "effect"
import type { Capabilities } from "./capabilities"
import { ArtifactError, checkArtifact, decodeWith } from "./artifact"

const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(253))

export const ComponentRef = Schema.Struct({
  name: Name,
  namespace: Schema.optionalKey(Schema.String),
  chart: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.String),
  source: Schema.optionalKey(Schema.String),
  version: Schema.optionalKey(Schema.String),
  tag: Schema.optionalKey(Schema.String),
  path: Schema.optionalKey(Schema.String),
  valuesFile: Schema.optionalKey(Schema.String),
  overrides: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  dependencyRefs: Schema.optionalKey(Schema.Array(Name)),
  manifestFiles: Schema.optionalKey(Schema.Array(Schema.String)),
})
export type ComponentRef = typeof ComponentRef.Type

export const RecipeResult = Schema.Struct({
  kind: Schema.Literal("RecipeResult"),
  apiVersion: Schema.String,
  metadata: Schema.Struct({
    version: Schema.String,
    appliedOverlays: Schema.optionalKey(Schema.Array(Schema.String)),
    excludedOverlays: Schema.optionalKey(Schema.Array(Schema.String)),
  }),
  criteria: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  componentRefs: Schema.Array(ComponentRef).check(Schema.isMaxLength(256)),
  deploymentOrder: Schema.Array(Name).check(Schema.isMaxLength(256)),
})
export type RecipeResult = typeof RecipeResult.Type

/**
 * Decodes and checks a recipe produced by the pinned AICR: schema, apiVersion, recorded version, and that
 * `deploymentOrder` names exactly the components (no duplicates) and every `dependencyRef` exists.
 */
export const parseRecipe = (text: string, caps: Capabilities): Result.Result<RecipeResult, ArtifactError> =>
  Result.flatMap(decodeWith(RecipeResult, "RecipeResult", text), (recipe) => {
    const bad = checkArtifact("RecipeResult", recipe.apiVersion, recipe.metadata.version, caps, caps.recipeApiVersions)
    if (bad !== undefined) return Result.fail(bad)
    const names = new Set(recipe.componentRefs.map((c) => c.name))
    if (names.size !== recipe.componentRefs.length) return Result.fail(unsupported("componentRefs names a component twice"))
    const order = new Set(recipe.deploymentOrder)
    if (order.size !== recipe.deploymentOrder.length || order.size !== names.size || recipe.deploymentOrder.some((n) => !names.has(n))) {
      return Result.fail(unsupported("deploymentOrder does not list each component exactly once"))
    }
    for (const c of recipe.componentRefs) {
      const missing = (c.dependencyRefs ?? []).find((d) => !names.has(d))
      if (missing !== undefined) return Result.fail(unsupported(`component ${c.name} depends on ${missing}, which the recipe does not hold`))
    }
    return Result.succeed(recipe)
  })

const unsupported = (why: string) =>
  new ArtifactError({ reason: "AICRArtifactUnsupported", artifact: "RecipeResult", message: `RecipeResult is not one the operator accepts: ${why}` })

/** Components in deployment order. */
export const componentsInOrder = (recipe: RecipeResult): ReadonlyArray<ComponentRef> => {
  const byName = new Map(recipe.componentRefs.map((c) => [c.name, c]))
  return recipe.deploymentOrder.map((n) => byName.get(n)!)
}
