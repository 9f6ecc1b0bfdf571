/**
 * The planner's chart check over the OCI client (`@aicr/oras`, undici): loaded on demand by `lazyChartRegistry`
 * (`charts.ts`), so an idle planner never loads it.
 */
import { dockerConfigCredentials, isOciError, OciClient } from "@aicr/oras"
import { Effect } from "effect"
import type { ChartCheck, ChartRef, ChartRegistryShape } from "./charts"

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
