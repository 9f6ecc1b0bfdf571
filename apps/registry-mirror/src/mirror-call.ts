/**
 * The `Registry` as calls to the mirror process (mirror-process.ts): each `mirror` and `resolveTags` is one child
 * process that opens the OCI client, does the call, closes it and exits, so the controller holds neither the client
 * (undici) nor what a mirror allocates ([ADR](../../../docs/adr/20261204-mirror-process.md)). The request carries the
 * plan (wrapper archives' bytes in base64) and the settings the client needs, the docker config's path included but
 * never a credential: the child reads the file at each handshake, as the controller did. Failures come back as the
 * same `MirrorError`s (tag and fields, rebuilt as the same class, so conditions read exactly as in this process); a
 * child that ends without an answer is a transient `RegistryUnavailableError` naming "the mirror process"; a defect
 * it reports is a defect.
 */
import { callInProcess, type CallDecoder, type ProcessCallError, type TaggedErrorClasses, taggedErrorFromWire, taggedErrorToWire } from "@aicr/runtime"
import type { TarEntry } from "@aicr/oras"
import { Effect } from "effect"
import type { RegistryShape } from "./act"
import type { MirrorSettings } from "./config"
import {
  ChartSourceUnsupportedError,
  ConflictError,
  ContentInvalidError,
  ContentTooLargeError,
  type MirrorError,
  RegistryCredentialsUnavailableError,
  RegistryUnavailableError,
  ResolutionMissingError,
  UnauthorizedError,
} from "./errors"
import type { MirrorResult } from "./mirror"
import type { MirrorPlan, PlanItem } from "./plan"
import type { TagFound } from "./verify"

/** What the child needs to open the client and run the mirror: paths and hosts, never credentials. */
export type RegistrySettings = Pick<MirrorSettings, "dockerConfig" | "plainHttp" | "rewrites" | "concurrency">

/** A `TarEntry` as JSON: its bytes in base64. */
interface TarEntryWire {
  readonly path: string
  readonly data: string
  readonly mode?: number
}
type PlanItemWire =
  Exclude<PlanItem, { _tag: "Wrapper" }> | (Omit<Extract<PlanItem, { _tag: "Wrapper" }>, "files"> & { readonly files: readonly TarEntryWire[] })
/** A `MirrorPlan` as JSON: the wrappers' archive entries in base64 (everything else is strings and numbers). */
export interface MirrorPlanWire extends Omit<MirrorPlan, "items"> {
  readonly items: readonly PlanItemWire[]
}

/** One request to the mirror process. */
export type MirrorCall =
  | { readonly op: "mirror"; readonly settings: RegistrySettings; readonly userAgent: string; readonly plan: MirrorPlanWire }
  | { readonly op: "resolveTags"; readonly settings: RegistrySettings; readonly userAgent: string; readonly references: ReadonlyArray<string> }

/** A `TagFound` as JSON: a gone tag's digest is `null` (an undefined field would vanish from the object). */
export interface TagFoundWire {
  readonly reference: string
  readonly digest: string | null
}

const entryToWire = (e: TarEntry): TarEntryWire => ({ path: e.path, data: e.data.toString("base64"), ...(e.mode !== undefined ? { mode: e.mode } : {}) })
const entryFromWire = (e: TarEntryWire): TarEntry => ({ path: e.path, data: Buffer.from(e.data, "base64"), ...(e.mode !== undefined ? { mode: e.mode } : {}) })

export const planToWire = (p: MirrorPlan): MirrorPlanWire => ({
  ...p,
  items: p.items.map((i) => (i._tag === "Wrapper" ? { ...i, files: i.files.map(entryToWire) } : i)),
})
export const planFromWire = (p: MirrorPlanWire): MirrorPlan => ({
  ...p,
  items: p.items.map((i) => (i._tag === "Wrapper" ? { ...i, files: i.files.map(entryFromWire) } : i)),
})

export const tagsToWire = (found: ReadonlyArray<TagFound>): TagFoundWire[] => found.map((f) => ({ reference: f.reference, digest: f.digest ?? null }))
const tagsFromWire = (found: ReadonlyArray<TagFoundWire>): TagFound[] => found.map((f) => ({ reference: f.reference, digest: f.digest ?? undefined }))

/**
 * Every `MirrorError` class by its tag: what the caller rebuilds a failure as. A new error class does not compile
 * until it has an entry here (and mirror-call.test.ts round-trips every entry).
 */
export const MIRROR_ERRORS: TaggedErrorClasses<MirrorError> = {
  RegistryUnavailableError,
  UnauthorizedError,
  RegistryCredentialsUnavailableError,
  ConflictError,
  ChartSourceUnsupportedError,
  ContentTooLargeError,
  ResolutionMissingError,
  ContentInvalidError,
}

/** A `MirrorError` as JSON (its tag and fields), and back as the same class; undefined: none of them (a defect). */
export const errorToWire = taggedErrorToWire
export const errorFromWire = taggedErrorFromWire(MIRROR_ERRORS)

/** A child that ended without an answer (it could not start, or was killed: OOM, a node under pressure) is retried. */
const lost = (e: ProcessCallError): MirrorError =>
  new RegistryUnavailableError({
    registry: "the mirror process",
    cause: e.ended === "did not start" ? e.ended : `${e.ended} without an answer`,
    message: `the mirror process failed: ${e.message}`,
  })

const isString = (v: unknown): v is string => typeof v === "string"
const isArtifact = (v: unknown): boolean => {
  const a = v as Record<string, unknown> | null
  return (
    typeof a === "object" &&
    a !== null &&
    isString(a["key"]) &&
    isString(a["ref"]) &&
    isString(a["digest"]) &&
    (a["action"] === "pushed" || a["action"] === "present")
  )
}

const mirrored: CallDecoder<MirrorResult, MirrorError> = {
  what: "the mirror process",
  ok: (v): v is MirrorResult => {
    const r = v as Record<string, unknown> | null
    return (
      typeof r === "object" &&
      r !== null &&
      isString(r["inputDigest"]) &&
      Array.isArray(r["charts"]) &&
      r["charts"].every(isArtifact) &&
      isArtifact(r["bundle"]) &&
      typeof r["bytesUploaded"] === "number" &&
      typeof r["pushed"] === "number" &&
      typeof r["present"] === "number"
    )
  },
  failed: errorFromWire,
  lost,
}

const tagsFound: CallDecoder<ReadonlyArray<TagFoundWire>, MirrorError> = {
  what: "the mirror process",
  ok: (v): v is ReadonlyArray<TagFoundWire> =>
    Array.isArray(v) &&
    v.every((f: unknown) => {
      const t = f as Record<string, unknown> | null
      return typeof t === "object" && t !== null && isString(t["reference"]) && (t["digest"] === null || isString(t["digest"]))
    }),
  failed: errorFromWire,
  lost,
}

/** The `Registry`, each call in its own process started from `entry` (the bundle's `mirror-process.mjs`). */
export const processRegistry = (entry: string, settings: RegistrySettings, userAgent: string): RegistryShape => {
  const s: RegistrySettings = {
    dockerConfig: settings.dockerConfig,
    plainHttp: settings.plainHttp,
    rewrites: settings.rewrites,
    concurrency: settings.concurrency,
  }
  return {
    mirror: (plan) => callInProcess(entry, { op: "mirror", settings: s, userAgent, plan: planToWire(plan) } satisfies MirrorCall, mirrored),
    resolveTags: (references) =>
      callInProcess(entry, { op: "resolveTags", settings: s, userAgent, references } satisfies MirrorCall, tagsFound).pipe(Effect.map(tagsFromWire)),
  }
}
