/**
 * Whether the charts of a pinned plan are still in the runtime registry (operator.md §4.11): a rollback to a plan
 * whose charts are gone would fail at its first step, so the planner refuses it before any rollout exists.
 *
 * Each release's chart is checked by digest with a manifest HEAD (`@aicr/oras` `manifestExists`), with the runtime
 * registry's credentials (the registry-mirror's docker config, re-read at each check so rotated tokens count).
 * A manifest the registry does not have is `Missing`; a registry that does not answer is `Unavailable` (transient:
 * retried); any other refusal (unauthorized, denied, a malformed reference) is `Refused`.
 */
import type { Plan } from "@aicr/api"
import { dockerConfigCredentials, isOciError, OciClient } from "@aicr/oras"
import { Context, Effect } from "effect"

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
export const chartsOf = (plan: Plan): ChartRef[] => plan.releases.map((r) => ({ release: r.name, ref: `${r.chart.ref.replace(/:[^:/@]+$/u, "")}@${r.chart.digest}` }))

/** The check over an OCI client: HEAD every manifest, in order, stopping at the first registry failure. */
export const checkWith = (client: Pick<OciClient, "manifestExists">): ChartRegistryShape => ({
  check: (charts) =>
    Effect.promise(async (): Promise<ChartCheck> => {
      const missing: ChartRef[] = []
      for (const c of charts) {
        try {
          if ((await client.manifestExists(c.ref)) === undefined) missing.push(c)
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e)
          if (isOciError(e, "Unavailable")) return { _tag: "Unavailable", message }
          return { _tag: "Refused", release: c.release, message }
        }
      }
      return missing.length === 0 ? { _tag: "Present", checked: charts.length } : { _tag: "Missing", missing, checked: charts.length }
    }),
})

/** The controller's registry client: the settings' credentials and plain-HTTP hosts, and how to close it. */
export const openChartRegistry = (settings: { readonly dockerConfig: string | undefined; readonly plainHttp: ReadonlyArray<string> }, userAgent: string) => {
  const path = settings.dockerConfig
  const client = new OciClient({
    ...(path !== undefined ? { credentials: (registry: string) => dockerConfigCredentials({ path })(registry) } : {}),
    plainHttp: [...settings.plainHttp],
    userAgent,
  })
  return { registry: checkWith(client), close: () => client.close() }
}
