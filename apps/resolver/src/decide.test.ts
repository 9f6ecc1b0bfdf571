import { capabilitiesOf, DEFAULT_JOB_SETTINGS, versionGate } from "@aicr/aicr"
import type { ClusterRuntime } from "@aicr/api"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { ResolverSettings } from "./config"
import { decide, decideInputs, namespacesNotAllowed } from "./decide"
import { discover, type NodeView } from "./discovery"
import type { Observed } from "./gather"
import { snapshotKeyOf } from "./inputs"

const settings = (outsideRange = false, version = "v1.1.2"): ResolverSettings => ({
  caps: capabilitiesOf(version)!,
  version,
  gate: versionGate(capabilitiesOf(version)!, { prerelease: false, outsideRange }),
  jobs: { ...DEFAULT_JOB_SETTINGS, image: `ghcr.io/nvidia/aicr:${version}` },
  namespace: "aicr-system",
  registry: { host: "registry.example", prefix: "aicr" },
  plainHttp: [],
  dockerConfig: undefined,
  allowedNamespaces: ["gpu-operator"],
})
const node = (name: string, group: string, product?: string): NodeView => ({
  metadata: { name, labels: { group, ...(product !== undefined ? { "nvidia.com/gpu.product": product } : {}) } },
  status: { nodeInfo: { osImage: "Ubuntu 24.04.3 LTS" } },
})
const NODES = [node("s1", "system"), node("g1", "gpu", "NVIDIA-H100-80GB-HBM3"), node("g2", "gpu", "NVIDIA-H100-80GB-HBM3")]
const PLACEMENT = { system: { nodeSelector: { group: "system" } }, accelerated: { nodeSelector: { group: "gpu" } } }
const observed = (spec: object, over: { settings?: ResolverSettings; nodes?: NodeView[]; status?: ClusterRuntime["status"] } = {}): Observed => {
  const s = over.settings ?? settings()
  const runtime = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster", generation: 1 },
    spec,
    status: over.status,
  } as ClusterRuntime
  return {
    runtime,
    settings: s,
    discovery: discover((spec as { placement?: typeof PLACEMENT }).placement, over.nodes ?? NODES),
    previous: over.status?.discovery,
    resolution: over.status?.resolution,
    pin: { version: s.version, image: s.jobs.image },
    now: 0,
  }
}
const SPEC = { intent: "training", criteria: { service: "eks" }, placement: PLACEMENT }

describe("decide", () => {
  it("a discovery problem, the version gate and a refused criterion fail before any AICR run, in that order", () => {
    const empty = decide(observed(SPEC, { nodes: [node("s1", "system")] }))
    expect(empty).toMatchObject({ _tag: "Fail", error: { _tag: "DiscoveryFailedError", reason: "NodeGroupEmpty" } })
    expect(decide(observed(SPEC, { settings: settings(false, "v0.11.1") }))).toMatchObject({ _tag: "Fail", error: { _tag: "VersionGateError" } })
    expect(decide(observed({ ...SPEC, intent: "gaming" }))).toMatchObject({
      _tag: "Fail",
      error: { _tag: "InvalidRequestError", reason: "AICRInvalidRequest", message: expect.stringContaining('spec.intent "gaming"') },
    })
  })

  it("a snapshot on the first accelerated node, unless one is recorded for this profile; none while paused", () => {
    expect(decide(observed(SPEC))).toMatchObject({ _tag: "Snapshot", node: "g1" })
    expect(decide(observed({ ...SPEC, paused: true }))).toEqual({
      _tag: "Wait",
      message: "spec.paused is set: no snapshot is taken on node g1 until it is cleared",
    })
    const o = observed(SPEC)
    const key = snapshotKeyOf(o.pin, o.discovery.facts)
    const recorded = { discovery: { criteria: { accelerator: "h100" }, snapshot: { digest: key, takenAt: "2026-12-02T10:00:00Z" } } }
    expect(decide(observed(SPEC, { status: recorded }))).toEqual({ _tag: "Resolve", criteria: { accelerator: "h100" } })
    expect(decide(observed({ ...SPEC, placement: { system: PLACEMENT.system } }))).toEqual({ _tag: "Resolve", criteria: undefined })
  })
})

describe("decideInputs", () => {
  it("a snapshot that contradicts spec.criteria is CriteriaConflict; an inexpressible toleration InvalidPlacement", () => {
    const conflict = decideInputs(observed({ ...SPEC, criteria: { service: "eks", accelerator: "gb200" } }), { accelerator: "h100" })
    expect(Result.isFailure(conflict) && conflict.failure).toMatchObject({ _tag: "DiscoveryFailedError", reason: "CriteriaConflict" })
    const badToleration = { ...SPEC, placement: { ...PLACEMENT, accelerated: { ...PLACEMENT.accelerated, tolerations: [{ operator: "Exists" }] } } }
    const placement = decideInputs(observed(badToleration), undefined)
    expect(Result.isFailure(placement) && placement.failure).toMatchObject({ _tag: "InvalidRequestError", reason: "InvalidPlacement" })
  })

  it("the inputDigest covers the criteria the snapshot confirmed; its content ConfigMap is named after it", () => {
    const a = decideInputs(observed(SPEC), { accelerator: "h100" })
    const b = decideInputs(observed(SPEC), { accelerator: "h100", os: "ubuntu" })
    expect(Result.isSuccess(a) && Result.isSuccess(b)).toBe(true)
    if (Result.isSuccess(a) && Result.isSuccess(b)) {
      expect(a.success.inputDigest).not.toBe(b.success.inputDigest)
      expect(a.success.contentName).toBe(`aicr-content-${a.success.inputDigest.slice(7, 39)}`)
      expect(a.success.criteria).toEqual({ service: "eks", accelerator: "h100", os: undefined })
    }
  })
})

describe("namespacesNotAllowed", () => {
  it("names each release outside the allowed namespaces", () => {
    const recipe = {
      componentRefs: [
        { name: "gpu-operator", namespace: "gpu-operator" },
        { name: "cert-manager", namespace: "cert-manager" },
      ],
      deploymentOrder: ["cert-manager", "gpu-operator"],
    } as unknown as Parameters<typeof namespacesNotAllowed>[0]
    expect(namespacesNotAllowed(recipe, ["gpu-operator"])).toEqual(["cert-manager (cert-manager)"])
  })
})
