/**
 * The resolution's inputs, pure: criteria checked against what the pinned AICR accepts, confirmed by the snapshot,
 * mapped onto recipe and bundle flags, and `inputDigest` over all of them (operator.md §3.4, §4.3).
 */
import type { ClusterRuntimeSpec, Toleration } from "@aicr/api"
import { type BundleRequest, type Capabilities, type CriteriaValues, digestOf, type RecipeRequest } from "@aicr/aicr"
import { listOf } from "@aicr/conditions"
import type { GroupFacts } from "./discovery"

export interface ObservedCriteria {
  readonly service?: string | undefined
  readonly accelerator?: string | undefined
  readonly os?: string | undefined
}

export type InputProblem =
  | { readonly reason: "AICRInvalidRequest"; readonly message: string }
  | { readonly reason: "CriteriaConflict"; readonly message: string }
  | { readonly reason: "SnapshotIncomplete"; readonly message: string }
  | { readonly reason: "InvalidPlacement"; readonly message: string }

const FIELDS = [
  ["service", "spec.criteria.service"],
  ["accelerator", "spec.criteria.accelerator"],
  ["os", "spec.criteria.os"],
  ["intent", "spec.intent"],
  ["platform", "spec.platform"],
] as const

/** AICR treats these service values as "any"; they are accepted too. */
const SERVICE_ANY = ["any", "self", "self-managed", "vanilla"]
const OS_ALIASES = ["al2", "al2023"]

/** Every criterion value the pinned AICR would refuse, named with what it accepts. Undefined when all are valid. */
export const invalidCriteria = (spec: ClusterRuntimeSpec, caps: Capabilities): InputProblem | undefined => {
  const values: Record<string, string | undefined> = { ...spec.criteria, intent: spec.intent, platform: spec.platform }
  const bad = FIELDS.flatMap(([field, path]) => {
    const v = values[field]
    if (v === undefined) return []
    const accepted: ReadonlyArray<string> = caps.criteria[field as keyof CriteriaValues]
    const lower = v.toLowerCase()
    const ok =
      accepted.includes(lower) || lower === "any" || (field === "service" && SERVICE_ANY.includes(lower)) || (field === "os" && OS_ALIASES.includes(lower))
    return ok ? [] : [`${path} ${JSON.stringify(v)} is not one AICR ${caps.version} accepts (${accepted.join(", ")})`]
  })
  return bad.length === 0 ? undefined : { reason: "AICRInvalidRequest", message: bad.join("; ") }
}

/**
 * The criteria the recipe resolves with: `spec.criteria` where declared, the snapshot's where not. A snapshot that
 * shows a value (its GPUs, its OS) must agree with a declared one (`CriteriaConflict`); a snapshot without GPUs (no
 * driver yet) leaves the declared accelerator standing.
 */
export const effectiveCriteria = (
  spec: ClusterRuntimeSpec,
  observed: ObservedCriteria | undefined,
): { readonly criteria: ObservedCriteria } | Extract<InputProblem, { reason: "CriteriaConflict" }> => {
  const declared = spec.criteria ?? {}
  const conflicts = (["service", "accelerator", "os"] as const).flatMap((k) => {
    const d = declared[k]?.toLowerCase()
    const o = observed?.[k]
    return d !== undefined && o !== undefined && d !== "any" && d !== o
      ? [`spec.criteria.${k} is ${JSON.stringify(declared[k])} but the snapshot shows ${JSON.stringify(o)}`]
      : []
  })
  if (conflicts.length > 0) return { reason: "CriteriaConflict", message: conflicts.join("; ") }
  const pick = (k: "service" | "accelerator" | "os") => declared[k] ?? observed?.[k]
  return { criteria: { service: pick("service"), accelerator: pick("accelerator"), os: pick("os") } }
}

export const recipeRequest = (spec: ClusterRuntimeSpec, criteria: ObservedCriteria): RecipeRequest => ({
  service: criteria.service,
  accelerator: criteria.accelerator,
  os: criteria.os,
  intent: spec.intent,
  platform: spec.platform,
})

/**
 * The placement and overrides as bundle flags; a toleration AICR cannot express is `InvalidPlacement`: no key or no
 * effect, or Equal without a value (AICR reads `key:effect` as Exists; admission refuses it too, this catches a
 * runtime admitted before that rule).
 */
export const bundleRequest = (spec: ClusterRuntimeSpec): BundleRequest | InputProblem => {
  const p = spec.placement
  const inexpressible = (t: Toleration) => t.key === undefined || t.key === "" || (t.effect ?? "") === "" || (t.operator !== "Exists" && (t.value ?? "") === "")
  const bad = (["system", "accelerated"] as const).flatMap((g) =>
    (p?.[g]?.tolerations ?? []).flatMap((t, i) => (inexpressible(t) ? [`spec.placement.${g}.tolerations[${i}]`] : [])),
  )
  if (bad.length > 0) {
    return {
      reason: "InvalidPlacement",
      message: `AICR takes tolerations as key=value:effect (operator Equal) or key:effect (operator Exists); ${listOf(bad)} lack a key, an effect or the value of an Equal`,
    }
  }
  return {
    systemNodeSelector: p?.system?.nodeSelector,
    systemTolerations: p?.system?.tolerations,
    acceleratedNodeSelector: p?.accelerated?.nodeSelector,
    acceleratedTolerations: p?.accelerated?.tolerations,
    set: spec.overrides?.map((o) => ({ path: o.path, value: o.value })),
  }
}

export interface AicrPin {
  readonly version: string
  readonly image: string
}

/** inputDigest: every input of the resolution, canonical JSON, sha256 (operator.md §3.4). */
export const inputDigestOf = (i: {
  readonly aicr: AicrPin
  readonly spec: ClusterRuntimeSpec
  readonly criteria: ObservedCriteria
  readonly facts: GroupFacts
  readonly allowedNamespaces: ReadonlyArray<string>
}): string =>
  digestOf({
    aicr: i.aicr,
    intent: i.spec.intent ?? null,
    platform: i.spec.platform ?? null,
    criteria: i.criteria,
    placement: i.spec.placement ?? null,
    overrides: i.spec.overrides ?? [],
    facts: i.facts,
    namespaces: i.allowedNamespaces,
  })

/** The snapshot is retaken when the AICR image or the accelerated group's profile changes. */
export const snapshotKeyOf = (aicr: AicrPin, facts: GroupFacts): string => digestOf({ aicr, facts })
