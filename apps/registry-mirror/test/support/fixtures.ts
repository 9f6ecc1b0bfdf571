// Fixtures for registry-mirror tests: the content ConfigMap of the reference recipe (from @aicr/chart-upstream) and
// ClusterRuntime objects in the states the controller reacts to.
import { type ClusterRuntime, contentConfigMapName, type KubeObject } from "@aicr/api"
import { type BundleTree, fixtureBundle, fixtureRecipe, type RecipeResult } from "@aicr/chart-upstream"
import type { Condition } from "@aicr/conditions"

export const NAMESPACE = "aicr-system"
export const INPUT_DIGEST = `sha256:${"3f2a9c1d0e4b".padEnd(64, "7")}`
export const OTHER_INPUT_DIGEST = `sha256:${"9".repeat(64)}`

/** The content ConfigMap's data as the resolver publishes it (docs/adr/20261202-registry-mirror-content.md). */
export const contentData = (recipe: RecipeResult = fixtureRecipe(), bundle: BundleTree = fixtureBundle()): Record<string, string> => ({
  "recipe.json": JSON.stringify(recipe),
  "values.json": JSON.stringify({ apiVersion: "operator.aicr.run/v1alpha1", kind: "Bundle", deployer: "helm", files: bundle.files, modes: bundle.modes }),
  "snapshot.json": "{}",
})

export const contentConfigMap = (inputDigest = INPUT_DIGEST, data: Record<string, string> = contentData()): KubeObject & { data: Record<string, string> } => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: contentConfigMapName(inputDigest), namespace: NAMESPACE, labels: { "operator.aicr.run/role": "content" } },
  data,
})

const cond = (type: string, status: Condition["status"], reason: string, observedGeneration: number): Condition => ({
  type,
  status,
  observedGeneration,
  lastTransitionTime: "2026-12-01T00:00:00Z",
  reason,
  message: "",
})

export interface RuntimeState {
  readonly generation?: number
  /** Resolved's status and the generation it was written for (default: True at `generation`). */
  readonly resolved?: { readonly status: Condition["status"]; readonly observedGeneration?: number } | "missing"
  readonly inputDigest?: string | undefined
  readonly mirror?: NonNullable<ClusterRuntime["status"]>["mirror"]
  readonly extraConditions?: ReadonlyArray<Condition>
}

/** The `cluster` runtime with a resolution for `inputDigest` (unless `inputDigest: undefined`). */
export const aRuntime = (s: RuntimeState = {}): ClusterRuntime => {
  const generation = s.generation ?? 1
  const inputDigest = "inputDigest" in s ? s.inputDigest : INPUT_DIGEST
  const resolved = s.resolved ?? { status: "True" as const }
  const conditions = [
    ...(resolved === "missing"
      ? []
      : [cond("Resolved", resolved.status, resolved.status === "True" ? "InputsResolved" : "Resolving", resolved.observedGeneration ?? generation)]),
    ...(s.extraConditions ?? []),
  ]
  return {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster", generation, uid: "0b6f3d0e-7c1a-4d59-9a43-5c1f1f6a2e10" },
    spec: { intent: "training", platform: "kubeflow", criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } },
    status: {
      conditions,
      ...(inputDigest !== undefined ? { resolution: { inputDigest, contentConfigMap: contentConfigMapName(inputDigest), releases: 14 } } : {}),
      ...(s.mirror !== undefined ? { mirror: s.mirror } : {}),
    },
  }
}
