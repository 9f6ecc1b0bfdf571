/**
 * decide: pure. What a pass does next, from what it has seen so far. No I/O, no clock. A resolution is a sequence
 * of AICR Jobs, each one pass (its end is a watched event), so act.ts calls these between its reads:
 *
 *   decide ─ discovery problem? ─────────────────────────────────────► DiscoveryFailedError (both conditions)
 *          └ version gate refuses? ──────────────────────────────────► VersionGateError (no AICR run)
 *            └ a criterion the pinned AICR refuses? ─────────────────► InvalidRequestError (no AICR run)
 *              └ snapshot (per AICR image + accelerated profile) ─ recorded? ─► Resolve with its criteria
 *                (spec.paused: not started ───────────────────────────► Wait "spec.paused is set")
 *   snapshotCriteria: the snapshot's output ─ unreadable, incomplete ─► ArtifactInvalidError, SnapshotIncomplete
 *   decideInputs: criteria confirmed? ─ no ───────────────────────────► CriteriaConflict
 *                 └ placement, criteria valid ─► the inputDigest, the recipe and bundle requests
 *   checkRecipe, bundleFailure, checkBundle, contentOf: each AICR output checked before the next step.
 */
import {
  type BundleFiles,
  bundleArgs,
  bundleDocument,
  type BundleRequest,
  type BundleTarget,
  componentsInOrder,
  invalidCriterionOf,
  invalidSetFlagOf,
  type JobState,
  overrideProblems,
  parseAicrErrorText,
  parseBundle,
  parseRecipe,
  parseSnapshot,
  parseText,
  type RecipeRequest,
  type RecipeResult,
  snapshotFacts,
} from "@aicr/aicr"
import { contentConfigMapName, type KubeObject, LABEL_ROLE, ROLE_CONTENT } from "@aicr/api"
import { listOf, shortDigest } from "@aicr/conditions"
import { Result } from "effect"
import type { ResolverSettings } from "./config"
import {
  AicrJobFailedError,
  ArtifactInvalidError,
  ContentTooLargeError,
  DiscoveryFailedError,
  InvalidRequestError,
  NamespaceNotAllowedError,
  type ResolverError,
  VersionGateError,
} from "./errors"
import type { Observed } from "./gather"
import { bundleRequest, effectiveCriteria, inputDigestOf, invalidCriteria, type ObservedCriteria, recipeRequest, snapshotKeyOf } from "./inputs"

/** A content ConfigMap holds at most this much (operator.md §3.4, `MaxConfigMapBytes`). */
export const MAX_CONTENT_BYTES = 1024 * 1024

export type Decision =
  | { readonly _tag: "Fail"; readonly error: ResolverError }
  /** spec.paused while a snapshot is due: no Job starts. */
  | { readonly _tag: "Wait"; readonly message: string }
  | { readonly _tag: "Snapshot"; readonly key: string; readonly node: string }
  /** Discovery is done: resolve with these criteria (the recorded snapshot's; none when there is no accelerated group). */
  | { readonly _tag: "Resolve"; readonly criteria: ObservedCriteria | undefined }

export const decide = (o: Observed): Decision => {
  const d = o.discovery
  const spec = o.runtime.spec
  if (d.problem !== undefined) return { _tag: "Fail", error: new DiscoveryFailedError(d.problem) }
  // The version gate (operator.md §4.3 step 3): an AICR outside the supported range runs no Job, snapshot included.
  if (o.settings.gate._tag === "Refused") return { _tag: "Fail", error: new VersionGateError({ message: o.settings.gate.message }) }
  // A value the pinned AICR refuses is the user's to fix before any AICR run, snapshot included.
  const bad = invalidCriteria(spec, o.settings.caps)
  if (bad !== undefined) return { _tag: "Fail", error: new InvalidRequestError({ reason: "AICRInvalidRequest", message: bad.message }) }
  if (d.snapshotNode === undefined) return { _tag: "Resolve", criteria: undefined }
  const key = snapshotKeyOf(o.pin, d.facts)
  if (o.previous?.snapshot?.digest === key) return { _tag: "Resolve", criteria: o.previous.criteria ?? {} }
  // spec.paused (operator.md §4.13): no AICR Job starts, the snapshot agent included; what is resolved stays.
  if (spec.paused === true) return { _tag: "Wait", message: `spec.paused is set: no snapshot is taken on node ${d.snapshotNode} until it is cleared` }
  return { _tag: "Snapshot", key, node: d.snapshotNode }
}

/** The criteria a finished snapshot shows; `where` names its Job and node. */
export const snapshotCriteria = (output: string, settings: Pick<ResolverSettings, "caps">, where: string): Result.Result<ObservedCriteria, ResolverError> => {
  const parsed = parseSnapshot(output, settings.caps)
  if (Result.isFailure(parsed))
    return Result.fail(new ArtifactInvalidError({ stage: "discovery", reason: parsed.failure.reason, message: `${where}: ${parsed.failure.message}` }))
  const facts = snapshotFacts(parsed.success)
  if (facts.missing.length > 0)
    return Result.fail(new DiscoveryFailedError({ reason: "SnapshotIncomplete", message: `${where}: the snapshot lacks ${listOf(facts.missing)}` }))
  return Result.succeed({ service: facts.service, accelerator: facts.accelerator, os: facts.os })
}

export interface Inputs {
  readonly inputDigest: string
  readonly criteria: ObservedCriteria
  readonly recipe: RecipeRequest
  readonly bundle: BundleRequest
  /** The content ConfigMap this inputDigest publishes. */
  readonly contentName: string
}

const definedOnly = (c: ObservedCriteria) => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) as ObservedCriteria

/** The inputs of the resolution: the declared criteria confirmed by the snapshot's, placement and overrides expressible. */
export const decideInputs = (o: Observed, observed: ObservedCriteria | undefined): Result.Result<Inputs, ResolverError> => {
  const spec = o.runtime.spec
  const eff = effectiveCriteria(spec, observed)
  if ("reason" in eff) return Result.fail(new DiscoveryFailedError({ reason: eff.reason, message: eff.message }))
  const bad = invalidCriteria({ ...spec, criteria: { ...spec.criteria, ...definedOnly(eff.criteria) } }, o.settings.caps)
  if (bad !== undefined) return Result.fail(new InvalidRequestError({ reason: "AICRInvalidRequest", message: bad.message }))
  const br = bundleRequest(spec)
  if ("reason" in br) return Result.fail(new InvalidRequestError({ reason: "InvalidPlacement", message: br.message }))
  const inputDigest = inputDigestOf({
    aicr: o.pin,
    spec,
    criteria: eff.criteria,
    facts: o.discovery.facts,
    allowedNamespaces: o.settings.allowedNamespaces,
  })
  return Result.succeed({
    inputDigest,
    criteria: eff.criteria,
    recipe: recipeRequest(spec, eff.criteria),
    bundle: br,
    contentName: contentConfigMapName(inputDigest),
  })
}

/** "Resolving input <12 hex>": the work in progress, for waiting and transient messages. */
export const resolvingText = (inputDigest: string): string => `Resolving input ${shortDigest(inputDigest)}`

/** A failed AICR run as the condition message: which Job, what AICR said, and for a bad criterion what it accepts. */
export const aicrMessage = (what: string, s: Extract<JobState, { _tag: "Failed" }>, settings: Pick<ResolverSettings, "caps" | "jobs">): string => {
  const bad = invalidCriterionOf(parseAicrErrorText(s.message))
  const accepted = bad === undefined ? "" : `; AICR ${settings.caps.version} accepts ${bad.field} ${settings.caps.criteria[bad.field].join(", ")}`
  return `${what} Job ${settings.jobs.namespace}/${s.name} ${s.message}${accepted}`
}

/** Every release whose namespace the chart does not allow, as `release (namespace)`. */
export const namespacesNotAllowed = (recipe: RecipeResult, allowed: ReadonlyArray<string>): string[] =>
  componentsInOrder(recipe)
    .filter((c) => c.namespace !== undefined && !allowed.includes(c.namespace))
    .map((c) => `${c.name} (${c.namespace})`)

/** A finished recipe Job's output, parsed, every release in an allowed namespace. */
export const checkRecipe = (output: string, job: string, settings: ResolverSettings): Result.Result<RecipeResult, ResolverError> => {
  const parsed = parseRecipe(output, settings.caps)
  if (Result.isFailure(parsed))
    return Result.fail(
      new ArtifactInvalidError({
        stage: "resolution",
        reason: parsed.failure.reason,
        message: `Recipe Job ${settings.jobs.namespace}/${job}: ${parsed.failure.message}`,
      }),
    )
  const outside = namespacesNotAllowed(parsed.success, settings.allowedNamespaces)
  if (outside.length > 0) {
    return Result.fail(
      new NamespaceNotAllowedError({
        message: `The plan renders ${outside.length} release(s) outside the allowed namespaces (${listOf(settings.allowedNamespaces)}): ${outside.join(", ")}`,
      }),
    )
  }
  return Result.succeed(parsed.success)
}

/** A failed bundle Job: an override AICR refused (`InvalidOverride`), or the Job's own failure. */
export const bundleFailure = (s: Extract<JobState, { _tag: "Failed" }>, settings: ResolverSettings): ResolverError => {
  const msg = aicrMessage("Bundle", s, settings)
  const badSet = s.transient ? undefined : invalidSetFlagOf(parseAicrErrorText(s.message))
  if (badSet !== undefined) return new InvalidRequestError({ reason: "InvalidOverride", message: `AICR refused the override ${badSet}: ${msg}` })
  return new AicrJobFailedError({ job: "Bundle", reason: s.reason, transient: s.transient, message: msg })
}

/** The digest a bundle Job pushed, from its termination message. */
export const pushedDigest = (terminationMessage: string, job: string, settings: ResolverSettings): Result.Result<string, ResolverError> => {
  const digest = /sha256:[0-9a-f]{64}/u.exec(terminationMessage)?.[0]
  return digest === undefined
    ? Result.fail(
        new ArtifactInvalidError({
          stage: "resolution",
          reason: "AICRArtifactUnsupported",
          message: `Bundle Job ${settings.jobs.namespace}/${job} left no pushed digest in its termination message`,
        }),
      )
    : Result.succeed(digest)
}

/** The bundle read back: parsed in the recipe's order, every override visible in the rendered values. */
export const checkBundle = (
  files: BundleFiles,
  recipe: RecipeResult,
  o: Pick<Observed, "runtime" | "settings">,
  job: string,
): Result.Result<{ readonly releases: number }, ResolverError> => {
  const where = `Bundle Job ${o.settings.jobs.namespace}/${job}`
  const parsed = parseBundle(files, o.settings.caps.bundleLayout, componentsInOrder(recipe))
  if (Result.isFailure(parsed))
    return Result.fail(new ArtifactInvalidError({ stage: "resolution", reason: parsed.failure.reason, message: `${where}: ${parsed.failure.message}` }))
  // AICR renders an unknown component key or a path through a non-map without failing: the bundle tells.
  const unapplied = overrideProblems(o.runtime.spec.overrides ?? [], parsed.success.releases)
  if (unapplied.length > 0) {
    return Result.fail(
      new InvalidRequestError({
        reason: unapplied[0]!.reason,
        message: `${where} did not apply ${unapplied.length} override(s): ${unapplied.map((u) => u.message).join("; ")}`,
      }),
    )
  }
  return Result.succeed({ releases: parsed.success.releases.length })
}

/** A snapshot document as JSON; one that no longer parses is left out of the content (it was checked when taken). */
const asJson = (yaml: string): string | undefined => {
  try {
    return JSON.stringify(parseText(yaml))
  } catch {
    return undefined
  }
}

export type ContentConfigMap = KubeObject & { readonly immutable: true; readonly data: Readonly<Record<string, string>> }

/** The immutable content ConfigMap of a resolution (docs/adr/20261202-registry-mirror-content.md), within 1 MiB. */
export const contentOf = (c: {
  readonly settings: ResolverSettings
  readonly inputs: Inputs
  readonly recipeJob: string
  readonly recipeOutput: string
  readonly files: BundleFiles
  readonly target: BundleTarget
  /** `host/repository@sha256:…` of the bundle. */
  readonly bundle: string
  readonly snapshotYaml: string | undefined
}): Result.Result<ContentConfigMap, ResolverError> => {
  // The agent always writes YAML (aicr-cli.md §2.1); the content key is snapshot.json, so it is stored as JSON.
  const snapshotJson = c.snapshotYaml === undefined ? undefined : asJson(c.snapshotYaml)
  // flags.json: the bundle Job's argv, which the planner copies into plan.flags for `kubectl aicr reproduce`.
  const data: Record<string, string> = {
    "recipe.json": c.recipeOutput,
    "values.json": bundleDocument(c.files),
    "flags.json": JSON.stringify(bundleArgs(c.settings.jobs, c.recipeJob, c.inputs.bundle, c.target)),
    ...(snapshotJson !== undefined ? { "snapshot.json": snapshotJson } : {}),
  }
  const sizes = Object.entries(data).map(([k, v]) => [k, k.length + Buffer.byteLength(v, "utf8")] as const)
  const size = sizes.reduce((n, [, b]) => n + b, 0)
  if (size > MAX_CONTENT_BYTES) {
    return Result.fail(new ContentTooLargeError({ message: tooLargeMessage(c.inputs, size, sizes) }))
  }
  return Result.succeed({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: c.inputs.contentName,
      namespace: c.settings.namespace,
      labels: { [LABEL_ROLE]: ROLE_CONTENT },
      annotations: { "operator.aicr.run/input-digest": c.inputs.inputDigest, "operator.aicr.run/bundle": c.bundle },
    },
    immutable: true,
    data,
  })
}

/**
 * ContentTooLarge's message: the size of each key, and what the spec adds. Every override is written twice, JSON-escaped
 * (into its release's values in values.json and as a `--set` flag in flags.json), so overrides near the CRD's limits
 * (64 values of 4 KiB) can carry the content past 1 MiB on their own.
 */
const tooLargeMessage = (inputs: Inputs, size: number, sizes: ReadonlyArray<readonly [string, number]>): string => {
  const parts = [...sizes]
    .sort(([, a], [, b]) => b - a)
    .map(([k, b]) => `${k} ${b}`)
    .join(", ")
  const set = inputs.bundle.set ?? []
  const valueBytes = set.reduce((n, o) => n + Buffer.byteLength(o.value, "utf8"), 0)
  const cause =
    set.length > 0
      ? `spec.overrides (${set.length}, ${valueBytes} bytes of values) are written twice, JSON-escaped, into values.json and flags.json: shorten or remove overrides`
      : "spec.overrides is empty: the rendered recipe and bundle alone pass the limit"
  return `The content of input ${shortDigest(inputs.inputDigest)} is ${size} bytes, more than a ConfigMap holds (${MAX_CONTENT_BYTES}): ${parts} bytes; ${cause}`
}
