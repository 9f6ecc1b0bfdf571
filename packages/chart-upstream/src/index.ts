/**
 * `@aicr/chart-upstream`: the local stand-in for the public chart repositories (test and dev infrastructure).
 *
 * Fixture charts with the names and versions of the reference recipe `h100-eks-ubuntu-training-kubeflow`, packaged
 * deterministically, served as HTTP Helm repositories and pushed to an OCI registry; plus the recipe and helm
 * bundle the AICR CLI would render for them.
 *
 * @example
 * ```ts
 * import { startChartUpstream } from "@aicr/chart-upstream"
 * const upstream = await startChartUpstream()
 * console.log(upstream.rewrites["https://charts.jetstack.io"]) // http://127.0.0.1:PORT/charts.jetstack.io
 * await upstream.stop()
 * ```
 */
export {
  ALL_AICR_COMPONENTS,
  FIXTURE_CHARTS,
  FIXTURE_COMPONENTS,
  PREVIOUS_AICR_COMPONENTS,
  type FixtureComponent,
  type FixtureCrd,
  type FixtureWorkload,
  GPU_TOLERATION,
  isOciSource,
} from "./fixtures"
export { chartFiles, defaultValues, FIXED_MTIME, fillerBytes, HOLD_PORT, HOLD_SCRIPT, packageChart, type PackagedChart, PAUSE_IMAGE } from "./chart"
export { FIXED_CREATED, indexYaml, ociRepoPath, repoPath } from "./helm-repo"
export { findRealChart, readRealCharts, type RealChart, realChartsDir, upstreamCharts } from "./real"
export { type BundleTree, FIXTURE_AICR_VERSION, fixtureBundle, fixtureRecipe, type RecipeComponentRef, type RecipeResult } from "./recipe"
export { type ChartUpstream, type ChartUpstreamOptions, startChartUpstream, type UpstreamChart } from "./server"
