/**
 * The bundle as AICR pushed it, read back with `@aicr/oras`: the manifest by digest, its one tar+gzip layer,
 * unpacked into a file tree and made the tree `aicr bundle -o <dir>` writes (`fromPushedBundle`: AICR's OCI store
 * dropped, checksums.txt paths made relative).
 */
import { BUNDLE_WORK_DIR, type BundleFiles, bundleFromEntries, fromPushedBundle, MAX_BUNDLE_BYTES } from "@aicr/aicr"
import { dockerConfigCredentials, isOciError, OciClient, readTgz } from "@aicr/oras"
import { Effect } from "effect"
import type { ResolverSettings } from "./config"
import { BundlePullError, type BundleStoreShape, credentialOf, readConfig } from "./services"

const classify = (e: unknown): BundlePullError => {
  if (isOciError(e)) {
    const tag = e.reason._tag
    if (tag === "Unauthorized" || tag === "Denied") return new BundlePullError({ kind: "unauthorized", message: e.message })
    if (tag === "Unavailable") return new BundlePullError({ kind: "transient", message: e.message })
    return new BundlePullError({ kind: "invalid", message: e.message })
  }
  return new BundlePullError({ kind: "invalid", message: e instanceof Error ? e.message : String(e) })
}

export const openBundleStore = (
  settings: Pick<ResolverSettings, "dockerConfig" | "plainHttp">,
  userAgent: string,
): { readonly store: BundleStoreShape; readonly close: () => Promise<void> } => {
  const credentials = async (registry: string) => dockerConfigCredentials({ config: JSON.parse(await readConfig(settings.dockerConfig)) })(registry)
  const client = new OciClient({ credentials, plainHttp: [...settings.plainHttp], userAgent })
  return { store: storeOver(client, settings.dockerConfig), close: () => client.close() }
}

export const storeOver = (client: OciClient, dockerConfig: string | undefined): BundleStoreShape => ({
  pull: (reference) =>
    Effect.tryPromise({
      try: async () => {
        const fetched = await client.fetchManifest(reference)
        const manifest = fetched.manifest as { layers?: Array<{ digest: string; size: number; mediaType: string }> }
        const layers = manifest.layers ?? []
        if (layers.length !== 1 || !layers[0]!.mediaType.endsWith("tar+gzip")) throw new Error(`${reference} is not an AICR bundle (one tar+gzip layer)`)
        const repo = reference.replace(/@sha256:[0-9a-f]{64}$/u, "")
        const blob = await client.fetchBlob(repo, { digest: layers[0]!.digest, size: layers[0]!.size }, { maxBytes: MAX_BUNDLE_BYTES })
        return fromPushedBundle(bundleFromEntries(readTgz(blob, MAX_BUNDLE_BYTES)), BUNDLE_WORK_DIR)
      },
      catch: classify,
    }),
  credential: () => credentialOf(dockerConfig),
})

export type { BundleFiles }
