/**
 * The resolver's bundle store as calls to its bundle process (bundle-process.ts): each pull is one child process that
 * pulls, unpacks, answers the file tree and exits, so the resolver holds neither the OCI client nor what a pull
 * allocates ([ADR](../../../docs/adr/20261204-resolver-memory.md)). Failures come back as the same `BundlePullError`s;
 * a child that ends without an answer is a transient one (the resolution is retried), a defect it reports is a defect.
 * The per-run credential is the docker config file, read here.
 */
import type { BundleFiles } from "@aicr/aicr"
import { callInProcess, type CallDecoder } from "@aicr/runtime"
import type { ResolverSettings } from "./config"
import { BundlePullError, type BundleStoreShape, credentialOf } from "./services"

type RegistrySettings = Pick<ResolverSettings, "dockerConfig" | "plainHttp">

/** One request to the bundle process. */
export interface BundleCall {
  readonly settings: RegistrySettings
  readonly userAgent: string
  readonly reference: string
}

const bundle: CallDecoder<BundleFiles, BundlePullError> = {
  what: "the bundle process",
  ok: (v): v is BundleFiles =>
    typeof v === "object" && v !== null && typeof (v as BundleFiles).files === "object" && typeof (v as BundleFiles).modes === "object",
  failed: (v) => {
    const f = v as { kind?: unknown; message?: unknown }
    return (f.kind === "transient" || f.kind === "unauthorized" || f.kind === "invalid") && typeof f.message === "string"
      ? new BundlePullError({ kind: f.kind, message: f.message })
      : undefined
  },
  lost: (e) => new BundlePullError({ kind: "transient", message: `the bundle process failed: ${e.message}` }),
}

/** The bundle store, each pull in its own process started from `entry` (the bundle's `bundle-process.mjs`). */
export const processBundleStore = (entry: string, settings: RegistrySettings, userAgent: string): BundleStoreShape => {
  const s: RegistrySettings = { dockerConfig: settings.dockerConfig, plainHttp: settings.plainHttp }
  return {
    pull: (reference) => callInProcess(entry, { settings: s, userAgent, reference } satisfies BundleCall, bundle),
    credential: () => credentialOf(s.dockerConfig),
  }
}
