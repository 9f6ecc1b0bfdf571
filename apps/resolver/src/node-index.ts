/**
 * The node groups of a placement, kept between passes: discovery over every cached node runs again only after a
 * Node event that may change it (an add, a delete, an update of something discovery reads under the current
 * placement), or for another placement. A pass brought by anything else (a Job's end, the runtime's status) reads
 * the kept result: at 5,000 nodes a pass over every node costs milliseconds of sorting and filtering; a compare
 * costs nothing.
 */
import { type Discovery, discover, type NodeView, type PlacementView, sameUnder } from "./discovery"

export interface NodeEvent {
  readonly type: "add" | "update" | "delete"
  readonly object: NodeView
  readonly old?: NodeView | undefined
}

export interface NodeIndex {
  /** Every Node event the cache applies: drops the kept result unless the event changes nothing it was made from. */
  readonly observe: (event: NodeEvent) => void
  readonly discover: (placement: PlacementView | undefined) => Discovery
}

export const makeNodeIndex = (list: () => ReadonlyArray<NodeView>): NodeIndex => {
  let kept: { readonly key: string; readonly placement: PlacementView | undefined; readonly discovery: Discovery } | undefined
  return {
    observe: (event) => {
      if (kept === undefined) return
      if (event.type === "update" && event.old !== undefined && sameUnder(kept.placement, event.old, event.object)) return
      kept = undefined
    },
    discover: (placement) => {
      const key = JSON.stringify(placement ?? null)
      if (kept !== undefined && kept.key === key) return kept.discovery
      const discovery = discover(placement, list())
      kept = { key, placement, discovery }
      return discovery
    },
  }
}
