/**
 * One resolver pass over the `cluster` runtime: discovery, then resolution, one step at a time (each AICR Job's
 * end is a watched event that brings the next pass). The pure parts live in discovery.ts, inputs.ts and
 * @aicr/aicr; this file sequences them and does the Kube and registry I/O. It returns the status to write.
 *
 *   nodes ─ discover ─ problem? ─────────────────────────────► Discovered=False/<reason>, Resolved=False/<reason>
 *                     └ version gate refuses? ───────────────────► AICRVersionMismatch (no AICR run)
 *                       └ snapshot (per AICR image + accelerated profile) ─ running/failed ─► Discovered=False/…
 *                         (spec.paused: not started ──────────────► Discovering/Resolving "spec.paused is set")
 *                         └ criteria confirmed? ─ no ──────────────► CriteriaConflict
 *                           └ inputDigest = status.resolution's ─► Resolved=True (no AICR run)
 *                             └ spec.paused ─────────────────────► Resolving "spec.paused is set" (no AICR run)
 *                               └ recipe Job ─ bundle Job ─ pull ─ checks ─ content ConfigMap ─► Resolved=True
 */
import {
  bundleArgs,
  bundleDocument,
  bundleJob,
  capabilitiesOf,
  componentsInOrder,
  credentialSecret,
  invalidCriterionOf,
  invalidSetFlagOf,
  jobName,
  outputConfigMap,
  overrideProblems,
  parseAicrErrorText,
  parseBundle,
  parseRecipe,
  parseSnapshot,
  parseText,
  recipeJob,
  type RecipeResult,
  snapshotFacts,
  snapshotJob,
} from "@aicr/aicr"
import {
  type ClusterRuntime,
  type ClusterRuntimeStatus,
  contentConfigMapName,
  Core,
  Discovered,
  LABEL_ROLE,
  type KubeObject,
  Resolved,
  ROLE_CONTENT,
} from "@aicr/api"
import { type ConditionIntent, listOf, shortDigest, toConditionTime } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Requeue } from "@aicr/runtime"
import { Clock, Effect, Option, Result } from "effect"
import { ResolverConfig, type ResolverSettings } from "./config"
import { type Discovery, discover } from "./discovery"
import { bundleRequest, effectiveCriteria, inputDigestOf, invalidCriteria, type ObservedCriteria, recipeRequest, snapshotKeyOf } from "./inputs"
import { type JobState, runJob } from "./jobs"
import { BundleStore, Nodes } from "./services"

export type DiscoveryStatus = NonNullable<ClusterRuntimeStatus["discovery"]>
export type ResolutionStatus = NonNullable<ClusterRuntimeStatus["resolution"]>

export interface Pass {
  readonly discovered: ConditionIntent<"Discovered">
  readonly resolved: ConditionIntent<"Resolved">
  readonly discovery: DiscoveryStatus
  readonly resolution: ResolutionStatus | undefined
  /** Set for a transient failure: the reconcile fails after writing status, and the driver backs off. */
  readonly transient?: string | undefined
  readonly requeue: Requeue
}

/** A content ConfigMap holds at most this much (operator.md §3.4, `MaxConfigMapBytes`). */
export const MAX_CONTENT_BYTES = 1024 * 1024

type Reason = Parameters<typeof Resolved.false>[0]
type DiscoveryReason = Parameters<typeof Discovered.false>[0]

const groupStatus = (g: Discovery["system"]) => (g === undefined ? undefined : { nodeCount: g.nodeCount, nodes: g.nodes.slice(0, 16) })

const discoveryStatusOf = (
  d: Discovery,
  previous: DiscoveryStatus | undefined,
  snapshot?: { criteria: ObservedCriteria; digest: string; takenAt: string },
): DiscoveryStatus => {
  const sys = groupStatus(d.system)
  const acc = groupStatus(d.accelerated)
  const snap =
    snapshot ??
    (previous?.snapshot !== undefined ? { criteria: previous.criteria ?? {}, digest: previous.snapshot.digest, takenAt: previous.snapshot.takenAt } : undefined)
  const criteria = snap === undefined ? undefined : Object.fromEntries(Object.entries(snap.criteria).filter(([, v]) => v !== undefined))
  return {
    ...(sys !== undefined ? { system: sys } : {}),
    ...(acc !== undefined ? { accelerated: acc } : {}),
    ...(criteria !== undefined ? { criteria } : {}),
    ...(snap !== undefined ? { snapshot: { digest: snap.digest, takenAt: snap.takenAt } } : {}),
  }
}

const groupsText = (d: Discovery): string =>
  [
    d.system && `system: ${d.system.nodeCount} node(s)`,
    d.accelerated && `accelerated: ${d.accelerated.nodeCount} node(s)${d.facts.accelerated?.product ? ` of ${d.facts.accelerated.product}` : ""}`,
  ]
    .filter((x) => x)
    .join(", ")

const failed = (
  base: Omit<Pass, "discovered" | "resolved" | "requeue">,
  reason: DiscoveryReason & Reason,
  message: string,
  requeue: Requeue = Requeue.onChange,
): Pass => ({
  ...base,
  discovered: Discovered.false(reason, message),
  resolved: Resolved.false(reason, message),
  requeue,
})

/** A failed AICR run as the condition message: which Job, what AICR said, and for a bad criterion what it accepts. */
const aicrMessage = (what: string, s: Extract<JobState, { _tag: "Failed" }>, settings: ResolverSettings): string => {
  const bad = invalidCriterionOf(parseAicrErrorText(s.message))
  const accepted = bad === undefined ? "" : `; AICR ${settings.caps.version} accepts ${bad.field} ${settings.caps.criteria[bad.field].join(", ")}`
  return `${what} Job ${settings.jobs.namespace}/${s.name} ${s.message}${accepted}`
}

export const resolvePass = (runtime: ClusterRuntime): Effect.Effect<Pass, KubeError, Kube | Nodes | BundleStore | ResolverConfig> =>
  Effect.gen(function* () {
    const settings = yield* ResolverConfig
    const nodes = yield* Nodes
    const now = toConditionTime(yield* Clock.currentTimeMillis)
    const spec = runtime.spec
    const previous = runtime.status?.discovery
    const pin = { version: settings.version, image: settings.jobs.image }

    // ---- discovery ------------------------------------------------------------------------------------------
    const d = discover(spec.placement, nodes.list())
    const noSnapshotBase = { discovery: discoveryStatusOf(d, previous), resolution: runtime.status?.resolution }
    if (d.problem !== undefined) return failed(noSnapshotBase, d.problem.reason, d.problem.message)
    // The version gate (operator.md §4.3 step 3): an AICR outside the supported range runs no Job, snapshot included.
    if (settings.gate._tag === "Refused") return failed(noSnapshotBase, "AICRVersionMismatch", settings.gate.message)
    // A value the pinned AICR refuses is the user's to fix before any AICR run, snapshot included.
    const badSpec = invalidCriteria(spec, settings.caps)
    if (badSpec !== undefined) {
      return {
        ...noSnapshotBase,
        discovered: Discovered.true("NodeGroupsDiscovered", groupsText(d)),
        resolved: Resolved.false(badSpec.reason, badSpec.message),
        requeue: Requeue.onChange,
      }
    }

    let observed: ObservedCriteria | undefined
    let snapshotRecord: { criteria: ObservedCriteria; digest: string; takenAt: string } | undefined
    let snapshotText: string | undefined
    if (d.snapshotNode !== undefined) {
      const key = snapshotKeyOf(pin, d.facts)
      if (previous?.snapshot?.digest === key) {
        observed = previous.criteria ?? {}
      } else {
        // spec.paused (operator.md §4.13): no AICR Job starts, the snapshot agent included; what is resolved stays.
        if (spec.paused === true) {
          const msg = `spec.paused is set: no snapshot is taken on node ${d.snapshotNode} until it is cleared`
          return { ...noSnapshotBase, discovered: Discovered.false("Discovering", msg), resolved: Resolved.false("Resolving", msg), requeue: Requeue.onChange }
        }
        const s = yield* runJob(snapshotJob(settings.jobs, key, d.snapshotNode), (job) => [outputConfigMap(job, "snapshot", key)])
        const where = `Snapshot Job ${settings.jobs.discoveryNamespace}/${s.name} on node ${d.snapshotNode}`
        if (s._tag === "Started" || s._tag === "Running") {
          const msg = `${where}: ${s._tag === "Started" ? "started" : s.detail}`
          return {
            ...noSnapshotBase,
            discovered: Discovered.false("Discovering", msg),
            resolved: Resolved.false("Resolving", `Waiting for discovery: ${msg}`),
            requeue: Requeue.onChange,
          }
        }
        if (s._tag === "Failed") {
          const pass = failed(noSnapshotBase, s.reason, `${where} ${s.message}`)
          return s.transient ? { ...pass, transient: pass.resolved.message } : pass
        }
        const parsed = parseSnapshot(s.output ?? "", settings.caps)
        if (Result.isFailure(parsed)) return failed(noSnapshotBase, parsed.failure.reason, `${where}: ${parsed.failure.message}`)
        const facts = snapshotFacts(parsed.success)
        if (facts.missing.length > 0) return failed(noSnapshotBase, "SnapshotIncomplete", `${where}: the snapshot lacks ${listOf(facts.missing)}`)
        observed = { service: facts.service, accelerator: facts.accelerator, os: facts.os }
        snapshotRecord = { criteria: observed, digest: key, takenAt: now }
        snapshotText = s.output
      }
    }
    const discovery = discoveryStatusOf(d, previous, snapshotRecord)
    const base = { discovery, resolution: runtime.status?.resolution }
    const eff = effectiveCriteria(spec, observed)
    if ("reason" in eff) return failed(base, eff.reason, eff.message)
    const discoveredTrue = Discovered.true(
      "NodeGroupsDiscovered",
      `${groupsText(d)}${observed?.accelerator !== undefined ? `; the snapshot confirms ${observed.accelerator}` : ""}`,
    )

    // ---- resolution -----------------------------------------------------------------------------------------
    const stop = (reason: Reason, message: string, extra: Partial<Pass> = {}): Pass => ({
      ...base,
      discovered: discoveredTrue,
      resolved: Resolved.false(reason, message),
      requeue: Requeue.onChange,
      ...extra,
    })
    const bad = invalidCriteria({ ...spec, criteria: { ...spec.criteria, ...definedOnly(eff.criteria) } }, settings.caps)
    if (bad !== undefined) return stop(bad.reason, bad.message)
    const br = bundleRequest(spec)
    if ("reason" in br) return stop(br.reason, br.message)
    const inputDigest = inputDigestOf({ aicr: pin, spec, criteria: eff.criteria, facts: d.facts, allowedNamespaces: settings.allowedNamespaces })
    const short = shortDigest(inputDigest)
    const kube = yield* Kube
    const contentName = contentConfigMapName(inputDigest)
    const contentKey = `${settings.namespace}/${contentName}`
    if (
      base.resolution?.inputDigest === inputDigest &&
      base.resolution.contentConfigMap === contentName &&
      Option.isSome(yield* kube.get(Core.ConfigMap, contentKey))
    ) {
      return {
        ...base,
        discovered: discoveredTrue,
        resolved: Resolved.true("InputsResolved", resolvedMessage(base.resolution, settings)),
        requeue: Requeue.onChange,
      }
    }

    if (spec.paused === true) return stop("Resolving", `spec.paused is set: input ${short} is not resolved until it is cleared`)

    const recipe = yield* runJob(recipeJob(settings.jobs, inputDigest, recipeRequest(spec, eff.criteria)), (job) => [
      outputConfigMap(job, "recipe", inputDigest),
    ])
    if (recipe._tag === "Started" || recipe._tag === "Running")
      return stop(
        "Resolving",
        `Resolving input ${short}: recipe Job ${settings.jobs.namespace}/${recipe.name} ${recipe._tag === "Started" ? "started" : recipe.detail}`,
      )
    if (recipe._tag === "Failed") {
      const msg = aicrMessage("Recipe", recipe, settings)
      return recipe.transient
        ? stop("Resolving", `Resolving input ${short}: retrying after a transient failure: ${msg}`, { transient: msg })
        : stop(recipe.reason, msg)
    }
    const parsedRecipe = parseRecipe(recipe.output ?? "", settings.caps)
    if (Result.isFailure(parsedRecipe))
      return stop(parsedRecipe.failure.reason, `Recipe Job ${settings.jobs.namespace}/${recipe.name}: ${parsedRecipe.failure.message}`)
    const outside = namespacesNotAllowed(parsedRecipe.success, settings.allowedNamespaces)
    if (outside.length > 0) {
      return stop(
        "NamespaceNotAllowed",
        `The plan renders ${outside.length} release(s) outside the allowed namespaces (${listOf(settings.allowedNamespaces)}): ${outside.join(", ")}`,
      )
    }

    const store = yield* BundleStore
    const target = {
      reference: `${settings.registry.host}/${settings.registry.prefix}/bundles/cluster:aicr-${inputDigest.slice(7, 39)}`,
      plainHttp: settings.plainHttp.includes(settings.registry.host) || isLoopbackHost(settings.registry.host),
    }
    const credential = yield* store.credential().pipe(Effect.result)
    if (Result.isFailure(credential)) return stop("RegistryCredentialsUnavailable", credential.failure.message)
    const bundle = yield* runJob(bundleJob(settings.jobs, inputDigest, recipe.name, br, target), (job) => [
      credentialSecret(job, inputDigest, credential.success),
    ])
    if (bundle._tag === "Started" || bundle._tag === "Running")
      return stop(
        "Resolving",
        `Resolving input ${short}: bundle Job ${settings.jobs.namespace}/${bundle.name} ${bundle._tag === "Started" ? "started" : bundle.detail}`,
      )
    if (bundle._tag === "Failed") {
      const msg = aicrMessage("Bundle", bundle, settings)
      const badSet = bundle.transient ? undefined : invalidSetFlagOf(parseAicrErrorText(bundle.message))
      if (badSet !== undefined) return stop("InvalidOverride", `AICR refused the override ${badSet}: ${msg}`)
      if (bundle.transient) return stop("Resolving", `Resolving input ${short}: retrying after a transient failure: ${msg}`, { transient: msg })
      return stop(bundle.reason === "AICRUnauthorized" ? "Unauthorized" : bundle.reason, msg)
    }
    const digest = /sha256:[0-9a-f]{64}/u.exec(bundle.terminationMessage)?.[0]
    if (digest === undefined)
      return stop("AICRArtifactUnsupported", `Bundle Job ${settings.jobs.namespace}/${bundle.name} left no pushed digest in its termination message`)
    const pulled = yield* store.pull(`${target.reference.replace(/:[^:/]+$/u, "")}@${digest}`).pipe(Effect.result)
    if (Result.isFailure(pulled)) {
      const e = pulled.failure
      if (e.kind === "transient")
        return stop("Resolving", `Resolving input ${short}: retrying after a transient failure: [SERVICE_UNAVAILABLE] ${e.message}`, { transient: e.message })
      return stop(e.kind === "unauthorized" ? "Unauthorized" : "AICRArtifactUnsupported", `The bundle ${digest} cannot be read back: ${e.message}`)
    }
    const parsedBundle = parseBundle(pulled.success, settings.caps.bundleLayout, componentsInOrder(parsedRecipe.success))
    if (Result.isFailure(parsedBundle))
      return stop(parsedBundle.failure.reason, `Bundle Job ${settings.jobs.namespace}/${bundle.name}: ${parsedBundle.failure.message}`)
    // AICR renders an unknown component key or a path through a non-map without failing: the bundle tells.
    const unapplied = overrideProblems(spec.overrides ?? [], parsedBundle.success.releases)
    if (unapplied.length > 0) {
      return stop(
        unapplied[0]!.reason,
        `Bundle Job ${settings.jobs.namespace}/${bundle.name} did not apply ${unapplied.length} override(s): ${unapplied.map((u) => u.message).join("; ")}`,
      )
    }

    const snapshotYaml = snapshotText ?? (yield* latestSnapshotText(settings, d, pin))
    // The agent always writes YAML (aicr-cli.md §2.1); the content key is snapshot.json, so it is stored as JSON.
    const snapshotJson = snapshotYaml === undefined ? undefined : asJson(snapshotYaml)
    // flags.json: the bundle Job's argv, which the planner copies into plan.flags for `kubectl aicr reproduce`.
    const data: Record<string, string> = {
      "recipe.json": recipe.output!,
      "values.json": bundleDocument(pulled.success),
      "flags.json": JSON.stringify(bundleArgs(settings.jobs, recipe.name, br, target)),
      ...(snapshotJson !== undefined ? { "snapshot.json": snapshotJson } : {}),
    }
    const size = Object.entries(data).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v, "utf8"), 0)
    if (size > MAX_CONTENT_BYTES)
      return stop("ContentTooLarge", `The content of input ${short} is ${size} bytes, more than a ConfigMap holds (${MAX_CONTENT_BYTES})`)
    const content: KubeObject & Record<string, unknown> = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: contentName,
        namespace: settings.namespace,
        labels: { [LABEL_ROLE]: ROLE_CONTENT },
        annotations: { "operator.aicr.run/input-digest": inputDigest, "operator.aicr.run/bundle": `${target.reference.replace(/:[^:/]+$/u, "")}@${digest}` },
      },
      immutable: true,
      data,
    }
    yield* kube.create(Core.ConfigMap, content).pipe(Effect.catchReason("KubeError", "AlreadyExists", () => Effect.void))
    const resolution: ResolutionStatus = {
      inputDigest,
      aicr: { version: settings.version, image: settings.jobs.image },
      contentConfigMap: contentName,
      releases: parsedBundle.success.releases.length,
      resolvedAt: now,
    }
    return {
      discovery,
      resolution,
      discovered: discoveredTrue,
      resolved: Resolved.true("InputsResolved", resolvedMessage(resolution, settings)),
      requeue: Requeue.onChange,
    }
  })

/** A snapshot document as JSON; one that no longer parses is left out of the content (it was checked when taken). */
const asJson = (yaml: string): string | undefined => {
  try {
    return JSON.stringify(parseText(yaml))
  } catch {
    return undefined
  }
}

const definedOnly = (c: ObservedCriteria) => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) as ObservedCriteria

const isLoopbackHost = (host: string) => /^(127\.|localhost|\[::1\])/u.test(host)

/** The development allowance is never silent: a resolution it let through says so. */
export const resolvedMessage = (r: ResolutionStatus, settings: Pick<ResolverSettings, "gate">): string =>
  `Resolved input ${shortDigest(r.inputDigest ?? "")} with AICR ${r.aicr?.version ?? "?"} into ${r.releases ?? 0} releases${settings.gate._tag === "Allowed" ? `; ${settings.gate.note}` : ""}`

/** Every release whose namespace the chart does not allow, as `release (namespace)`. */
export const namespacesNotAllowed = (recipe: RecipeResult, allowed: ReadonlyArray<string>): string[] =>
  componentsInOrder(recipe)
    .filter((c) => c.namespace !== undefined && !allowed.includes(c.namespace))
    .map((c) => `${c.name} (${c.namespace})`)

/** The snapshot the current discovery was confirmed with, if its output ConfigMap is still there. */
const latestSnapshotText = (settings: ResolverSettings, d: Discovery, pin: { version: string; image: string }) =>
  Effect.gen(function* () {
    if (d.snapshotNode === undefined) return undefined
    const kube = yield* Kube
    const cm = yield* kube.get<KubeObject & { data?: Record<string, string> }>(
      Core.ConfigMap,
      `${settings.jobs.discoveryNamespace}/${jobName("snapshot", snapshotKeyOf(pin, d.facts))}`,
    )
    return Option.isSome(cm) ? (cm.value.data?.["snapshot.yaml"] ?? cm.value.data?.["snapshot.json"]) : undefined
  })

export { capabilitiesOf }
