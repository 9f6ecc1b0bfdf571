/**
 * Whether the charts of a pinned plan are still in the runtime registry (operator.md §4.11): a rollback to a plan
 * whose charts are gone would fail at its first step, so the planner refuses it before any rollout exists.
 *
 * Each release's chart is checked by digest with a manifest HEAD (`@aicr/oras` `manifestExists`), with the runtime
 * registry's credentials (the registry-mirror's docker config, re-read at each check so rotated tokens count).
 * A manifest the registry does not have is `Missing`; a registry that does not answer is `Unavailable` (transient:
 * retried); any other refusal (unauthorized, denied, a malformed reference) is `Refused`.
 *
 * The OCI client (`./chart-registry`: `@aicr/oras` with undici, ~10 MiB of RSS) is loaded by the first check, then
 * kept: a pinned plan is rare, and an idle planner never loads it (a dynamic `import()`, which the split bundle keeps
 * in a chunk of its own, as registry-mirror does).
 */
import type { Plan } from "@aicr/api"
import { openOnFirstUse } from "@aicr/runtime"
import { Context, Effect, type Scope } from "effect"

export interface ChartRef {
  readonly release: string
  /** `host/repository@sha256:…` */
  readonly ref: string
}

export type ChartCheck =
  | { readonly _tag: "Present"; readonly checked: number }
  | { readonly _tag: "Missing"; readonly missing: ReadonlyArray<ChartRef>; readonly checked: number }
  | { readonly _tag: "Unavailable"; readonly message: string }
  | { readonly _tag: "Refused"; readonly release: string; readonly message: string }

export interface ChartRegistryShape {
  readonly check: (charts: ReadonlyArray<ChartRef>) => Effect.Effect<ChartCheck>
}

export class ChartRegistry extends Context.Service<ChartRegistry, ChartRegistryShape>()("@aicr/planner/ChartRegistry") {}

/** Every release's chart of a plan, by digest (the tag is dropped: the digest is what the plan pins). */
export const chartsOf = (plan: Plan): ChartRef[] =>
  plan.releases.map((r) => ({ release: r.name, ref: `${r.chart.ref.replace(/:[^:/@]+$/u, "")}@${r.chart.digest}` }))

/** The running controller's `ChartRegistry`: the OCI client loaded by the first check, closed with the scope. */
export const lazyChartRegistry = (
  settings: { readonly dockerConfig: string | undefined; readonly plainHttp: ReadonlyArray<string> },
  userAgent: string,
): Effect.Effect<ChartRegistryShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const opened = yield* openOnFirstUse(() => import("./chart-registry").then((m) => m.openChartRegistry(settings, userAgent)))
    return { check: (charts) => opened.pipe(Effect.flatMap((o) => o.registry.check(charts))) }
  })
