/**
 * Discovery, pure: which nodes `spec.placement` selects, and whether the groups are usable (operator.md §4.2).
 *
 * - a declared selector that matches no node → `NodeGroupEmpty`;
 * - a node both selectors match → `PlacementOverlap` (naming the nodes);
 * - accelerated nodes with different GPU products or OS images → `AcceleratedGroupHeterogeneous` (naming the profiles).
 *
 * The facts that feed `inputDigest` are the group's *profile* (GPU product, OS image, GPU driver versions), never
 * node names or counts, so adding or removing a node of the same profile changes no input and runs no AICR.
 */
import { listOf } from "@aicr/conditions"

export interface NodeView {
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> | undefined }
  readonly status?: { readonly nodeInfo?: { readonly osImage?: string | undefined } | undefined } | undefined
}

export interface GroupSelector {
  readonly nodeSelector: Readonly<Record<string, string>>
}

export const GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
export const DRIVER_LABELS = ["nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"] as const

/** The node's view that discovery reads; everything else of a Node is dropped before it is cached. */
export const nodeView = (n: NodeView): NodeView => ({
  metadata: { name: n.metadata.name, labels: n.metadata.labels ?? {} },
  status: { nodeInfo: { osImage: n.status?.nodeInfo?.osImage } },
})

/**
 * Whether two views of one node are the same for discovery under this placement: the same name and OS image,
 * and the same values of every label discovery reads (the placement selectors' keys, the GPU product and driver
 * labels). An update that changes anything else (another label) cannot change discovery's result, so it need not
 * start a pass; a change of the placement itself starts one through the runtime's own event.
 */
export const sameUnder = (placement: PlacementView | undefined, a: NodeView, b: NodeView): boolean => {
  if (a.metadata.name !== b.metadata.name) return false
  if (a.status?.nodeInfo?.osImage !== b.status?.nodeInfo?.osImage) return false
  const keys = [
    GPU_PRODUCT_LABEL,
    ...DRIVER_LABELS,
    ...Object.keys(placement?.system?.nodeSelector ?? {}),
    ...Object.keys(placement?.accelerated?.nodeSelector ?? {}),
  ]
  return keys.every((k) => a.metadata.labels?.[k] === b.metadata.labels?.[k])
}

export const matches = (n: NodeView, sel: GroupSelector): boolean => {
  const labels = n.metadata.labels ?? {}
  const entries = Object.entries(sel.nodeSelector)
  // An empty selector is refused at admission; should one slip through, it selects nothing rather than everything.
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v)
}

export interface AcceleratedProfile {
  readonly product: string | undefined
  readonly osImage: string | undefined
}

const profileOf = (n: NodeView): AcceleratedProfile => ({ product: n.metadata.labels?.[GPU_PRODUCT_LABEL], osImage: n.status?.nodeInfo?.osImage })
const profileText = (p: AcceleratedProfile): string => `${p.product ?? "no GPU product label"} on ${p.osImage ?? "an unknown OS"}`
const driverOf = (n: NodeView): string | undefined => {
  const parts = DRIVER_LABELS.map((l) => n.metadata.labels?.[l])
  return parts[0] === undefined ? undefined : parts.filter((p) => p !== undefined).join(".")
}

export interface Group {
  readonly nodeCount: number
  /** Sorted by name. */
  readonly nodes: ReadonlyArray<string>
}

/** What feeds inputDigest and the snapshot: the accelerated group's profile and drivers. */
export interface GroupFacts {
  readonly accelerated?: { readonly product: string | undefined; readonly osImage: string | undefined; readonly drivers: ReadonlyArray<string> }
}

export type DiscoveryProblem =
  | { readonly reason: "NodeGroupEmpty"; readonly message: string }
  | { readonly reason: "PlacementOverlap"; readonly message: string }
  | { readonly reason: "AcceleratedGroupHeterogeneous"; readonly message: string }

export interface Discovery {
  readonly system: Group | undefined
  readonly accelerated: Group | undefined
  readonly facts: GroupFacts
  /** The node the snapshot agent runs on (the first accelerated node by name). */
  readonly snapshotNode: string | undefined
  readonly problem: DiscoveryProblem | undefined
}

export interface PlacementView {
  readonly system?: GroupSelector | undefined
  readonly accelerated?: GroupSelector | undefined
}

const selectorText = (sel: GroupSelector): string => listOf(Object.entries(sel.nodeSelector).map(([k, v]) => `${k}=${v}`))

export const discover = (placement: PlacementView | undefined, nodes: ReadonlyArray<NodeView>): Discovery => {
  const pick = (sel: GroupSelector | undefined) =>
    sel === undefined ? undefined : nodes.filter((n) => matches(n, sel)).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
  const sys = pick(placement?.system)
  const acc = pick(placement?.accelerated)
  const group = (ns: ReadonlyArray<NodeView> | undefined): Group | undefined =>
    ns === undefined ? undefined : { nodeCount: ns.length, nodes: ns.map((n) => n.metadata.name) }
  const profiles = new Map((acc ?? []).map((n) => [profileText(profileOf(n)), profileOf(n)]))
  const first = acc?.[0]
  const facts: GroupFacts =
    first === undefined
      ? {}
      : { accelerated: { ...profileOf(first), drivers: [...new Set((acc ?? []).map(driverOf).filter((d): d is string => d !== undefined))].sort() } }
  const base = { system: group(sys), accelerated: group(acc), facts, snapshotNode: first?.metadata.name }

  const empty = [
    ...(placement?.system !== undefined && sys!.length === 0 ? [`spec.placement.system (${selectorText(placement.system)})`] : []),
    ...(placement?.accelerated !== undefined && acc!.length === 0 ? [`spec.placement.accelerated (${selectorText(placement.accelerated)})`] : []),
  ]
  if (empty.length > 0) return { ...base, problem: { reason: "NodeGroupEmpty", message: `No node matches ${empty.join(" or ")}` } }
  const overlap = (sys ?? []).filter((n) => (acc ?? []).some((m) => m.metadata.name === n.metadata.name)).map((n) => n.metadata.name)
  if (overlap.length > 0) {
    return {
      ...base,
      problem: { reason: "PlacementOverlap", message: `${overlap.length} node(s) match both the system and the accelerated nodeSelector: ${listOf(overlap)}` },
    }
  }
  if (profiles.size > 1) {
    return {
      ...base,
      problem: {
        reason: "AcceleratedGroupHeterogeneous",
        message: `The accelerated group mixes ${profiles.size} profiles (${listOf(profiles.keys())}); one homogeneous accelerator and OS profile is supported`,
      },
    }
  }
  return { ...base, problem: undefined }
}
