/**
 * What reconcile needs besides the Kube service: the node cache (the informer's, trimmed to what discovery reads)
 * and the registry the bundle Jobs push to. Tests provide their own.
 */
import type { BundleFiles } from "@aicr/aicr"
import { readFile } from "node:fs/promises"
import { Context, Data, Effect } from "effect"
import { type Discovery, discover, type NodeView, type PlacementView } from "./discovery"

export interface NodesShape {
  /** The node groups a placement selects, from the node cache. */
  readonly discover: (placement: PlacementView | undefined) => Discovery
}

export class Nodes extends Context.Service<Nodes, NodesShape>()("@aicr/resolver/Nodes") {}

/** Discovery over a fixed list of nodes (tests). */
export const nodesOf = (nodes: ReadonlyArray<NodeView>): NodesShape => ({ discover: (placement) => discover(placement, nodes) })

/** Reading a pushed bundle back failed: registry down (transient), refused, or the artifact is not a bundle. */
export class BundlePullError extends Data.TaggedError("BundlePullError")<{
  readonly kind: "transient" | "unauthorized" | "invalid"
  readonly message: string
}> {}

export interface BundleStoreShape {
  /** The bundle tree AICR pushed (`host/repo@sha256:…`), verified against its digests. */
  readonly pull: (reference: string) => Effect.Effect<BundleFiles, BundlePullError>
  /** The docker config a bundle Job gets as its per-run credential. */
  readonly credential: () => Effect.Effect<string, BundlePullError>
}

export class BundleStore extends Context.Service<BundleStore, BundleStoreShape>()("@aicr/resolver/BundleStore") {}

/** The docker config file's text (`{"auths":{}}` without one), checked to be JSON. */
export const readConfig = async (path: string | undefined): Promise<string> => {
  if (path === undefined) return JSON.stringify({ auths: {} })
  const text = await readFile(path, "utf8")
  JSON.parse(text)
  return text
}

/** A bundle Job's per-run credential: the docker config, re-read each time (no OCI client needed). */
export const credentialOf = (dockerConfig: string | undefined): Effect.Effect<string, BundlePullError> =>
  Effect.tryPromise({
    try: () => readConfig(dockerConfig),
    catch: (e) => new BundlePullError({ kind: "unauthorized", message: `Registry credentials ${dockerConfig} cannot be read: ${String(e)}` }),
  })
