import { describe, expect, it } from "vitest"
import { discover, nodeView, type NodeView, sameUnder } from "./discovery"

const node = (name: string, labels: Record<string, string>, osImage = "Ubuntu 24.04.2 LTS"): NodeView => ({
  metadata: { name, labels },
  status: { nodeInfo: { osImage } },
})
const sys = (name: string) => node(name, { pool: "system" })
const gpu = (name: string, extra: Record<string, string> = {}, osImage?: string) =>
  node(
    name,
    {
      pool: "gpu",
      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
      "nvidia.com/cuda.driver.major": "570",
      "nvidia.com/cuda.driver.minor": "133",
      "nvidia.com/cuda.driver.rev": "20",
      ...extra,
    },
    osImage,
  )
const placement = { system: { nodeSelector: { pool: "system" } }, accelerated: { nodeSelector: { pool: "gpu" } } }

describe("discover", () => {
  it.each([
    ["both groups selected, disjoint and homogeneous", placement, [sys("s1"), gpu("g2"), gpu("g1")], undefined],
    ["no system node", placement, [gpu("g1")], "NodeGroupEmpty"],
    ["no GPU node", placement, [sys("s1")], "NodeGroupEmpty"],
    [
      "a node in both groups",
      { system: { nodeSelector: { role: "x" } }, accelerated: { nodeSelector: { role: "x" } } },
      [node("n1", { role: "x" })],
      "PlacementOverlap",
    ],
    ["two GPU products", placement, [sys("s1"), gpu("g1"), gpu("g2", { "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB" })], "AcceleratedGroupHeterogeneous"],
    ["two OS images", placement, [sys("s1"), gpu("g1"), gpu("g2", {}, "Red Hat Enterprise Linux 9.4")], "AcceleratedGroupHeterogeneous"],
    ["an empty selector selects nothing", { accelerated: { nodeSelector: {} } }, [gpu("g1")], "NodeGroupEmpty"],
  ])("%s", (_name, p, nodes, reason) => {
    expect(discover(p, nodes).problem?.reason).toBe(reason)
  })

  it("groups are sorted, the snapshot runs on the first GPU node, and messages name the nodes", () => {
    const d = discover(placement, [sys("s1"), gpu("g2"), gpu("g1")])
    expect(d).toMatchObject({ system: { nodeCount: 1, nodes: ["s1"] }, accelerated: { nodeCount: 2, nodes: ["g1", "g2"] }, snapshotNode: "g1" })
    const overlap = discover({ system: { nodeSelector: { pool: "gpu" } }, accelerated: { nodeSelector: { pool: "gpu" } } }, [gpu("g2"), gpu("g1")])
    expect(overlap.problem?.message).toBe("2 node(s) match both the system and the accelerated nodeSelector: g1, g2")
  })

  it("facts are the profile, not the nodes: adding, removing or renaming same-profile nodes changes nothing", () => {
    const a = discover(placement, [sys("s1"), gpu("g1")]).facts
    expect(discover(placement, [sys("s1"), sys("s2"), gpu("g1"), gpu("g7"), gpu("g9")]).facts).toEqual(a)
    expect(discover(placement, [sys("s1"), gpu("g1", { "nvidia.com/cuda.driver.major": "580" })]).facts).not.toEqual(a)
    expect(a).toEqual({ accelerated: { product: "NVIDIA-H100-80GB-HBM3", osImage: "Ubuntu 24.04.2 LTS", drivers: ["570.133.20"] } })
  })
})

describe("sameUnder", () => {
  it("an update of a label discovery does not read is the same node for discovery, and gives the same discovery", () => {
    const before = [sys("s1"), gpu("g1")]
    const after = [sys("s1"), gpu("g1", { "team.example/cost-center": "42" })]
    expect(sameUnder(placement, before[1]!, after[1]!)).toBe(true)
    expect(discover(placement, after)).toEqual(discover(placement, before))
  })

  it("a change of a selector key's value, the GPU product, a driver label or the OS image is not; the kernel is not read", () => {
    const g = gpu("g1")
    expect(sameUnder(placement, g, gpu("g1", { pool: "other" }))).toBe(false)
    expect(sameUnder(placement, g, gpu("g1", { "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB" }))).toBe(false)
    expect(sameUnder(placement, g, gpu("g1", { "nvidia.com/cuda.driver.rev": "21" }))).toBe(false)
    expect(sameUnder(placement, g, gpu("g1", {}, "Ubuntu 22.04.5 LTS"))).toBe(false)
    // The kernel feeds no input (the snapshot reads it on the host): the projection drops it, an update of it is the same node.
    const kernel = { ...g, status: { nodeInfo: { ...g.status!.nodeInfo, kernelVersion: "6.8.0" } } } as typeof g
    expect(sameUnder(placement, g, kernel)).toBe(true)
    expect(nodeView(kernel)).toEqual(nodeView(g))
    // A label the current placement selects by matters; under a placement that does not name it, it does not.
    const labelled = gpu("g1", { zone: "a" })
    const other = gpu("g1", { zone: "b" })
    expect(sameUnder({ ...placement, accelerated: { nodeSelector: { pool: "gpu", zone: "a" } } }, labelled, other)).toBe(false)
    expect(sameUnder(placement, labelled, other)).toBe(true)
  })
})
