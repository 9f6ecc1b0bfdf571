import { describe, expect, it } from "vitest"
import type { NodeView } from "./discovery"
import { makeNodeIndex } from "./node-index"

const node = (name: string, labels: Record<string, string>): NodeView => ({ metadata: { name, labels }, status: { nodeInfo: { osImage: "Ubuntu" } } })
const PLACEMENT = { accelerated: { nodeSelector: { group: "gpu" } } }

describe("node index", () => {
  it("keeps discovery until a Node event may change it; an update of a label discovery does not read keeps it", () => {
    const nodes = [node("g1", { group: "gpu" }), node("g2", { group: "gpu" })]
    let lists = 0
    const index = makeNodeIndex(() => (lists++, nodes))
    const first = index.discover(PLACEMENT)
    expect(first.accelerated?.nodeCount).toBe(2)
    expect(index.discover(PLACEMENT)).toBe(first)

    const touched = node("g1", { group: "gpu", "bench.aicr.run/touched": "yes" })
    index.observe({ type: "update", old: nodes[0]!, object: touched })
    nodes[0] = touched
    expect(index.discover(PLACEMENT)).toBe(first)
    expect(lists).toBe(1)

    const moved = node("g2", { group: "system" })
    index.observe({ type: "update", old: nodes[1]!, object: moved })
    nodes[1] = moved
    expect(index.discover(PLACEMENT).accelerated?.nodeCount).toBe(1)

    nodes.push(node("g3", { group: "gpu" }))
    index.observe({ type: "add", object: nodes[2]! })
    expect(index.discover(PLACEMENT).accelerated?.nodes).toEqual(["g1", "g3"])
    expect(lists).toBe(3)
  })

  it("another placement is discovered anew, and an update is judged by the placement the kept result was made for", () => {
    const nodes = [node("a", { group: "gpu", pool: "x" })]
    const index = makeNodeIndex(() => nodes)
    expect(index.discover(PLACEMENT).accelerated?.nodeCount).toBe(1)
    const byPool = { accelerated: { nodeSelector: { pool: "x" } } }
    expect(index.discover(byPool).accelerated?.nodeCount).toBe(1)
    // `pool` is read under byPool (the kept result's placement): the change drops it.
    const changed = node("a", { group: "gpu", pool: "y" })
    index.observe({ type: "update", old: nodes[0]!, object: changed })
    nodes[0] = changed
    expect(index.discover(byPool).problem?.reason).toBe("NodeGroupEmpty")
  })
})
