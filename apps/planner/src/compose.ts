/**
 * compose: pure. The plan document of a resolution, from the content ConfigMap the resolver published
 * (docs/adr/20261202-registry-mirror-content.md) and the registry-mirror's `status.mirror`. Every release of the
 * bundle becomes a plan release pinned to the chart digest the mirror recorded; a release with a chart *and*
 * manifests gets a second release `<name>-manifests` (its wrapper chart), installed right after it.
 *
 * The same resolution always composes the same `desiredStateDigest` (packages/api `desiredStateDigest`).
 */
import { type ClusterRuntimeStatus, desiredStateDigest, type Plan, type PlanRelease, sha256 } from "@aicr/api"

type Resolution = NonNullable<ClusterRuntimeStatus["resolution"]>
type Mirror = NonNullable<ClusterRuntimeStatus["mirror"]>

export interface ComponentRef {
  readonly name: string
  readonly namespace: string
  readonly source: string
  readonly chart?: string
  readonly version?: string
  readonly dependsOn: ReadonlyArray<string>
}

/** What the planner reads of a content ConfigMap. */
export interface Content {
  readonly components: ReadonlyArray<ComponentRef>
  /** Bundle file tree: relative path → text. */
  readonly files: Readonly<Record<string, string>>
  /** The `aicr bundle` argv the resolver ran (`flags.json`), when it recorded one. */
  readonly flags: ReadonlyArray<string>
  /** sha256 of each data key, for `plan.content`. */
  readonly digests: Readonly<Record<string, string>>
}

export type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly why: string }
const fail = (why: string): Result<never> => ({ ok: false, why })

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const str = (u: unknown): string | undefined => (typeof u === "string" && u !== "" ? u : undefined)

const json = (data: Readonly<Record<string, string>>, key: string): Result<unknown> => {
  const text = data[key]
  if (text === undefined) return fail(`it has no ${key}`)
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return fail(`its ${key} is not JSON`)
  }
}

/** Reads recipe.json (componentRefs in deploymentOrder, with dependencyRefs) and values.json (the bundle tree). */
export const readContent = (data: Readonly<Record<string, string>>): Result<Content> => {
  const recipe = json(data, "recipe.json")
  if (!recipe.ok) return recipe
  const bundle = json(data, "values.json")
  if (!bundle.ok) return bundle
  const r = recipe.value
  if (!isRecord(r) || !Array.isArray(r["componentRefs"]) || !Array.isArray(r["deploymentOrder"]))
    return fail("its recipe.json is not a RecipeResult (componentRefs, deploymentOrder)")
  const b = bundle.value
  if (!isRecord(b) || !isRecord(b["files"])) return fail("its values.json is not a Bundle file tree")
  const files: Record<string, string> = {}
  for (const [p, t] of Object.entries(b["files"])) if (typeof t === "string") files[p] = t
  const refs = new Map<string, Record<string, unknown>>()
  for (const c of r["componentRefs"] as unknown[]) if (isRecord(c) && str(c["name"])) refs.set(c["name"] as string, c)
  const components: ComponentRef[] = []
  for (const name of r["deploymentOrder"] as unknown[]) {
    const c = typeof name === "string" ? refs.get(name) : undefined
    if (c === undefined) return fail(`its recipe.json deploymentOrder names ${String(name)}, which has no componentRef`)
    const namespace = str(c["namespace"])
    if (namespace === undefined) return fail(`component ${name as string} has no namespace`)
    const chart = str(c["chart"])
    const version = str(c["version"])
    components.push({
      name: name as string,
      namespace,
      source: str(c["source"]) ?? "",
      ...(chart ? { chart } : {}),
      ...(version ? { version } : {}),
      dependsOn: Array.isArray(c["dependencyRefs"]) ? (c["dependencyRefs"] as unknown[]).filter((d): d is string => typeof d === "string") : [],
    })
  }
  let flags: string[] = []
  if (data["flags.json"] !== undefined) {
    const f = json(data, "flags.json")
    if (!f.ok || !Array.isArray(f.value) || !f.value.every((x) => typeof x === "string")) return fail("its flags.json is not a list of strings")
    flags = f.value as string[]
  }
  const digests = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, sha256(v)]))
  return { ok: true, value: { components, files, flags, digests } }
}

/** `host/repo:tag@sha256:…` → the ref without the digest, and the digest. */
export const splitPinned = (ref: string): { ref: string; digest: string } | undefined => {
  const at = ref.lastIndexOf("@sha256:")
  if (at < 0) return undefined
  const digest = ref.slice(at + 1)
  return /^sha256:[a-f0-9]{64}$/u.test(digest) ? { ref: ref.slice(0, at), digest } : undefined
}

export interface ComposeInput {
  readonly runtimeUID: string
  readonly resolution: Resolution
  readonly mirror: Mirror
  readonly contentConfigMap: string
  readonly content: Content
  readonly project: string
  readonly now: string
}

const EMPTY_VALUES = sha256("")

/** The plan of one resolution; fails (the message says what is missing) when the mirror does not cover it. */
export const composePlan = (i: ComposeInput): Result<Plan> => {
  const charts = new Map((i.mirror.charts ?? []).map((c) => [c.release, c.ref]))
  const inBundle = (name: string) => Object.keys(i.content.files).some((p) => p.startsWith(`${name}/`))
  const components = i.content.components.filter((c) => inBundle(c.name))
  const present = new Set(components.map((c) => c.name))
  const releases: Omit<PlanRelease, "order">[] = []
  for (const c of components) {
    const pinned = charts.get(c.name)
    if (pinned === undefined) return fail(`the mirror recorded no chart for release ${c.name}`)
    const chart = splitPinned(pinned)
    if (chart === undefined) return fail(`the mirror's chart of release ${c.name} is not digest-pinned: ${pinned}`)
    const values = i.content.files[`${c.name}/values.yaml`]
    releases.push({
      name: c.name,
      namespace: c.namespace,
      dependsOn: c.dependsOn.filter((d) => present.has(d)),
      chart,
      ...(c.chart !== undefined && c.version !== undefined && c.source !== "" ? { upstream: { repo: c.source, chart: c.chart, version: c.version } } : {}),
      values: { digest: values === undefined ? EMPTY_VALUES : sha256(values) },
    })
    const wrapper = charts.get(`${c.name}-manifests`)
    if (wrapper !== undefined) {
      const w = splitPinned(wrapper)
      if (w === undefined) return fail(`the mirror's manifests wrapper of release ${c.name} is not digest-pinned: ${wrapper}`)
      releases.push({ name: `${c.name}-manifests`, namespace: c.namespace, dependsOn: [c.name], chart: w, values: { digest: EMPTY_VALUES } })
    }
  }
  const ordered = releases.map((r, order) => ({ ...r, order }))
  const engine = { kind: "argocd" as const, project: i.project }
  const content = (["recipe.json", "values.json", "snapshot.json"] as const)
    .filter((k) => i.content.digests[k] !== undefined)
    .map((key) => ({ key, configMap: i.contentConfigMap, digest: i.content.digests[key]! }))
  const plan: Plan = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Plan",
    runtimeUID: i.runtimeUID,
    createdAt: i.now,
    source: "Resolution",
    desiredStateDigest: desiredStateDigest({ engine, releases: ordered }),
    ...(i.resolution.inputDigest ? { inputDigest: i.resolution.inputDigest } : {}),
    ...(i.resolution.aicr ? { aicr: i.resolution.aicr } : {}),
    flags: [...i.content.flags],
    ...(i.mirror.bundle ? { bundle: { ref: i.mirror.bundle } } : {}),
    engine,
    releases: ordered,
    content,
  }
  return { ok: true, value: plan }
}
