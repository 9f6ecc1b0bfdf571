/**
 * adopt: pure. Re-adoption (operator.md §4.15, ADR 20261202-re-adoption): when the operator's namespace and its
 * plans were lost but the stack runs, the plan is rebuilt from the live Argo CD Applications — each carries the plan
 * release it was written for, the names of its plan's releases and a digest of the spec as written
 * (`@aicr/argocd` record.ts) — and taken back with one approval by an `Adopt` rollout.
 *
 * - Applications of a runtime UID that is neither this runtime's nor `spec.adoption.fromRuntimeUID` →
 *   `OrphanedObjectsPresent`: nothing rolls out until spec.adoption names that UID (or they are deleted).
 * - The candidates (the adopted runtime's Applications, and this runtime's own whose plan ConfigMap is gone) must
 *   rebuild into exactly the plan they name, unedited: any difference is named in `AdoptionBlocked`.
 * - An Adopt rollout is validated like any other (ADR 20261203-adopted-plan-validation): the rebuilt plan takes the
 *   AICR, the recipe and the bundle of the runtime's current resolution when that resolution renders exactly the
 *   releases that run (`withResolution`: the same desiredStateDigest, so the same charts, chart digests, values
 *   digests, namespaces and comparison exceptions); otherwise `AdoptionBlocked` names the releases that differ.
 */
import { canonicalJson, desiredStateDigest, encodePlan, LABEL_RELEASE, LABEL_RUNTIME_UID, type Plan, type PlanRelease, readPlan } from "@aicr/api"
import { ANNOTATION_PLAN_DIGEST, type Application, chartSourceOf, unchangedSinceWritten } from "@aicr/argocd"
import { shortDigest } from "@aicr/conditions"
import { Result } from "effect"

export type Adoption =
  /** Nothing to adopt: no Application of another runtime, none whose plan was lost. */
  | { readonly _tag: "None" }
  | { readonly _tag: "Orphaned"; readonly message: string }
  | { readonly _tag: "Blocked"; readonly message: string }
  /** The plan rebuilt from live Applications, verified; `from` is the runtime UID the Applications carry. */
  | { readonly _tag: "Adopt"; readonly plan: Plan; readonly from: ReadonlyArray<string> }

export interface AdoptionInput {
  readonly runtimeUID: string
  /** `spec.adoption.fromRuntimeUID`. */
  readonly adoptFrom: string | undefined
  readonly applications: ReadonlyArray<Application>
  /** Whether a readable plan ConfigMap exists for a desiredStateDigest. */
  readonly hasPlan: (digest: string) => boolean
  readonly engineNamespace: string
  readonly project: string
  readonly now: string
}

const MAX_NAMED = 6
const list = (xs: ReadonlyArray<string>) => (xs.length <= MAX_NAMED ? xs.join(", ") : `${xs.slice(0, MAX_NAMED).join(", ")} and ${xs.length - MAX_NAMED} more`)
const uidOf = (a: Application) => a.metadata.labels?.[LABEL_RUNTIME_UID]

/** Why an Application's live spec differs from what the operator wrote, as precisely as its record allows. */
const editOf = (a: Application, r: PlanRelease, project: string): string => {
  const spec = a.spec
  const src = chartSourceOf(r.chart.ref, r.chart.digest)
  if (spec === undefined) return "its spec is gone"
  if (spec.project !== project) return `spec.project is ${spec.project}, the operator wrote ${project}`
  if (spec.destination.namespace !== r.namespace) return `spec.destination.namespace is ${spec.destination.namespace}, the operator wrote ${r.namespace}`
  if (spec.source.repoURL !== src.repoURL || spec.source.chart !== undefined || spec.source.path !== src.path) {
    return `spec.source is ${spec.source.repoURL}${spec.source.chart !== undefined ? ` chart ${spec.source.chart}` : ""} path ${spec.source.path ?? "(none)"}, the operator wrote ${src.repoURL} path ${src.path}`
  }
  if (spec.source.targetRevision !== src.targetRevision)
    return `spec.source.targetRevision is ${spec.source.targetRevision}, the operator wrote ${src.targetRevision}`
  return "its spec (values, sync policy or ignoreDifferences) was changed after the operator wrote it"
}

/**
 * The plan the candidates rebuild into, or every difference that stops it: a missing or malformed record, a spec or
 * marker edited by hand, an Application Argo CD reports OutOfSync (its resources were changed), Applications of
 * different plans that do not add up to one (a rollout that did not finish), releases of the plan that are missing, or
 * extra ones.
 */
export const rebuildPlan = (
  apps: ReadonlyArray<Application>,
  i: Pick<AdoptionInput, "runtimeUID" | "project" | "engineNamespace" | "now">,
): Result.Result<Plan, ReadonlyArray<string>> => {
  const differences: string[] = []
  const releases: PlanRelease[] = []
  const plans = new Map<string, string[]>()
  const names = new Map<string, ReadonlyArray<string>>()
  for (const a of [...apps].sort((x, y) => (x.metadata.name < y.metadata.name ? -1 : 1))) {
    const at = `Application ${i.engineNamespace}/${a.metadata.name}`
    const unchanged = unchangedSinceWritten(a)
    if (!unchanged.ok && unchanged.edit === "record") {
      differences.push(`${at}: ${unchanged.why}; it was not written by this operator version and cannot be rebuilt`)
      continue
    }
    const { release, plan } = unchanged.record
    const digest = a.metadata.annotations?.[ANNOTATION_PLAN_DIGEST]
    if (release.name !== a.metadata.name || a.metadata.labels?.[LABEL_RELEASE] !== release.name)
      differences.push(`${at}: its record names release ${release.name}`)
    else if (a.metadata.deletionTimestamp !== undefined) differences.push(`${at} is being deleted`)
    else if (!unchanged.ok) differences.push(`${at}: ${unchanged.edit === "spec" ? editOf(a, release, i.project) : unchanged.why}`)
    else if (a.status?.sync?.status === "OutOfSync")
      differences.push(`${at}: Argo CD reports it OutOfSync, its resources differ from the chart (changed by hand, or a sync did not finish)`)
    else if (digest === undefined) differences.push(`${at}: it names no plan (${ANNOTATION_PLAN_DIGEST})`)
    else {
      releases.push(release)
      plans.set(digest, [...(plans.get(digest) ?? []), release.name])
      names.set(digest, plan)
    }
  }
  if (differences.length > 0) return Result.fail(differences)
  const engine = { kind: "argocd" as const, project: i.project }
  const ordered = [...releases].sort((x, y) => x.order - y.order)
  const rebuilt = desiredStateDigest({ engine, releases: ordered })
  // An Upgrade writes only the releases it changes: the others keep the earlier plan's marker. Together they still run
  // one plan when the live releases hash to a plan some of them name and that plan lists exactly these releases. A
  // rollout that did not finish leaves releases of the earlier plan that differ from the later one: no such plan.
  const all = [...plans.values()].flat()
  const whole =
    plans.size > 1 && plans.has(rebuilt) && new Set(names.get(rebuilt) ?? []).size === all.length && all.every((n) => (names.get(rebuilt) ?? []).includes(n))
  if (plans.size > 1 && !whole) {
    return Result.fail([
      `the Applications were written by ${plans.size} plans (${[...plans].map(([d, rs]) => `${shortDigest(d)}: ${list(rs)}`).join("; ")}): a rollout did not finish, so no single plan runs`,
    ])
  }
  const [claimed, written] = whole ? [rebuilt, all] : ([...plans][0] ?? ["", []])
  const want = new Set(names.get(claimed) ?? [])
  const missing = [...want].filter((n) => !written.includes(n)).sort()
  const extra = written.filter((n) => !want.has(n))
  if (missing.length > 0) differences.push(`plan ${shortDigest(claimed)} has releases with no Application: ${list(missing)} (deleted by hand?)`)
  if (extra.length > 0) differences.push(`Applications ${list(extra)} are not releases of plan ${shortDigest(claimed)}`)
  if (differences.length > 0) return Result.fail(differences)
  if (rebuilt !== claimed)
    return Result.fail([`the Applications rebuild into plan ${shortDigest(rebuilt)}, not the plan ${shortDigest(claimed)} they name (engine project changed?)`])
  const plan: Plan = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Plan",
    runtimeUID: i.runtimeUID,
    createdAt: i.now,
    source: "Adoption",
    desiredStateDigest: rebuilt,
    flags: [],
    engine,
    releases: ordered,
    content: [],
  }
  // The same checks as any plan ConfigMap read back (duplicates, dangling dependencies, digest).
  const checked = readPlan(encodePlan(plan))
  return Result.isFailure(checked) ? Result.fail([`the rebuilt plan is not valid: ${checked.failure}`]) : Result.succeed(checked.success)
}

/** What re-adoption asks of this pass (nothing, orphans, a refusal, or the plan to adopt). */
export const adoptionOf = (i: AdoptionInput): Adoption => {
  const labelled = i.applications.filter((a) => uidOf(a) !== undefined)
  const orphans = new Map<string, string[]>()
  for (const a of labelled) {
    const uid = uidOf(a)!
    if (uid !== i.runtimeUID && uid !== i.adoptFrom) orphans.set(uid, [...(orphans.get(uid) ?? []), a.metadata.name])
  }
  if (orphans.size > 0) {
    const [uid, names] = [...orphans][0]!
    const others = orphans.size > 1 ? ` (and Applications of ${orphans.size - 1} more runtime UIDs)` : ""
    return {
      _tag: "Orphaned",
      message: `Argo CD Applications ${list(names)} in ${i.engineNamespace} belong to runtime ${uid}, not to this runtime ${i.runtimeUID}${others}: nothing rolls out. To take them back set spec.adoption.fromRuntimeUID: ${uid}; to leave them, delete those Applications`,
    }
  }
  const adopted = i.adoptFrom !== undefined && i.adoptFrom !== i.runtimeUID ? labelled.filter((a) => uidOf(a) === i.adoptFrom) : []
  const own = labelled.filter((a) => uidOf(a) === i.runtimeUID)
  const lost = own.filter((a) => {
    const digest = a.metadata.annotations?.[ANNOTATION_PLAN_DIGEST]
    return digest === undefined || !i.hasPlan(digest)
  })
  if (adopted.length === 0 && lost.length === 0) return { _tag: "None" }
  const from = [...new Set([...adopted, ...own].map((a) => uidOf(a)!))].sort()
  const rebuilt = rebuildPlan([...adopted, ...own], i)
  if (Result.isFailure(rebuilt)) {
    const whose = adopted.length > 0 ? `runtime ${i.adoptFrom}'s Applications` : "the Applications whose plan ConfigMap is gone"
    return {
      _tag: "Blocked",
      message: `${whose} do not rebuild into a plan: ${rebuilt.failure.slice(0, MAX_NAMED).join("; ")}${rebuilt.failure.length > MAX_NAMED ? `; and ${rebuilt.failure.length - MAX_NAMED} more` : ""}`,
    }
  }
  return { _tag: "Adopt", plan: rebuilt.success, from }
}

/** A release as the desiredStateDigest sees it (packages/api desiredStateOf), for naming what differs. */
const differenceOf = (live: PlanRelease, rendered: PlanRelease): string | undefined => {
  if (live.chart.ref !== rendered.chart.ref) return `${live.name} (chart ${live.chart.ref} runs, the resolution renders ${rendered.chart.ref})`
  if (live.chart.digest !== rendered.chart.digest)
    return `${live.name} (chart digest ${shortDigest(live.chart.digest)} runs, the resolution renders ${shortDigest(rendered.chart.digest)})`
  if (live.values.digest !== rendered.values.digest)
    return `${live.name} (values ${shortDigest(live.values.digest)} run, the resolution renders ${shortDigest(rendered.values.digest)})`
  if (live.namespace !== rendered.namespace) return `${live.name} (namespace ${live.namespace} runs, the resolution renders ${rendered.namespace})`
  if (canonicalJson(live.ignoreDifferences ?? []) !== canonicalJson(rendered.ignoreDifferences ?? [])) return `${live.name} (comparison exceptions differ)`
  return undefined
}

/**
 * The rebuilt plan with what deployment validation needs, taken from the plan the runtime's current resolution
 * composes — its AICR (version and image), inputDigest, `aicr bundle` flags, bundle and content (recipe.json among
 * them) — when that resolution renders exactly the releases that run: the same desiredStateDigest, which covers each
 * release's name, namespace, chart reference and digest, values digest and comparison exceptions, and the engine
 * project. The releases stay the rebuilt ones (what runs), and so does `source: Adoption` (only Adopt steps use it).
 * Otherwise the message names every release that differs, for `AdoptionBlocked`.
 */
export const withResolution = (rebuilt: Plan, resolved: Plan): Result.Result<Plan, string> => {
  if (resolved.desiredStateDigest === rebuilt.desiredStateDigest) {
    return Result.succeed({
      ...rebuilt,
      ...(resolved.inputDigest !== undefined ? { inputDigest: resolved.inputDigest } : {}),
      ...(resolved.aicr !== undefined ? { aicr: resolved.aicr } : {}),
      flags: [...resolved.flags],
      ...(resolved.bundle !== undefined ? { bundle: resolved.bundle } : {}),
      content: [...resolved.content],
    })
  }
  const rendered = new Map(resolved.releases.map((r) => [r.name, r]))
  const running = new Set(rebuilt.releases.map((r) => r.name))
  const differ = rebuilt.releases.flatMap((r) => {
    const other = rendered.get(r.name)
    const d = other === undefined ? `${r.name} (runs, the resolution does not render it)` : differenceOf(r, other)
    return d === undefined ? [] : [d]
  })
  const more = resolved.releases.filter((r) => !running.has(r.name)).map((r) => `${r.name} (the resolution renders it, it does not run)`)
  const all = [...differ, ...more]
  const named = all.length === 0 ? `the engine project differs (${rebuilt.engine.project}, the resolution ${resolved.engine.project})` : list(all)
  return Result.fail(
    `the running stack rebuilds into plan ${shortDigest(rebuilt.desiredStateDigest)}, but the runtime's current resolution${resolved.inputDigest !== undefined ? ` (input ${shortDigest(resolved.inputDigest)})` : ""} renders plan ${shortDigest(resolved.desiredStateDigest)}: ${named}. The Adopt rollout is validated with the AICR and the recipe of a resolution that renders what runs: apply the runtime spec that produced the stack (its overrides, platform and criteria); change it afterwards with an ordinary rollout`,
  )
}
