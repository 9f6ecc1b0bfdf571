import { capabilitiesOf } from "@aicr/aicr"
import type { ClusterRuntimeSpec } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { bundleRequest, effectiveCriteria, inputDigestOf, invalidCriteria } from "./inputs"

const v011 = capabilitiesOf("v0.11.1")!
const v010 = capabilitiesOf("v0.10.16")!
const spec: ClusterRuntimeSpec = {
  intent: "training",
  platform: "kubeflow",
  criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
  placement: { accelerated: { nodeSelector: { pool: "gpu" }, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] } },
}

describe("invalidCriteria", () => {
  it.each([
    [{ intent: "gaming" }, v011, 'spec.intent "gaming" is not one AICR 0.11.1 accepts (inference, training)'],
    [{ criteria: { accelerator: "h9000" } }, v011, 'spec.criteria.accelerator "h9000" is not one AICR 0.11.1 accepts (a100, b200, gb200, h100, l40)'],
    [{ criteria: { os: "windows" } }, v011, 'spec.criteria.os "windows" is not one AICR 0.11.1 accepts (amazonlinux, cos, rhel, ubuntu)'],
    [{ criteria: { accelerator: "b200" } }, v010, 'spec.criteria.accelerator "b200" is not one AICR 0.10.16 accepts (a100, gb200, h100, l40)'],
  ])("%j with %s", (patch, caps, message) => {
    expect(invalidCriteria({ ...spec, ...patch } as ClusterRuntimeSpec, caps)).toEqual({ reason: "AICRInvalidRequest", message })
  })
  it("accepts the sample, AICR's any-aliases and case", () => {
    expect(invalidCriteria(spec, v011)).toBeUndefined()
    expect(invalidCriteria({ ...spec, criteria: { service: "self-managed", os: "AL2023", accelerator: "H100" } }, v011)).toBeUndefined()
  })
})

describe("effectiveCriteria", () => {
  it.each([
    ["no snapshot: the declared criteria stand", undefined, { criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } }],
    ["no GPUs yet (no driver): the declared accelerator stands", { os: "ubuntu" }, { criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } }],
    ["the snapshot confirms", { service: "eks", accelerator: "h100", os: "ubuntu" }, { criteria: { service: "eks", accelerator: "h100", os: "ubuntu" } }],
    [
      "the snapshot contradicts",
      { accelerator: "a100", os: "ubuntu" },
      { reason: "CriteriaConflict", message: 'spec.criteria.accelerator is "h100" but the snapshot shows "a100"' },
    ],
  ])("%s", (_n, observed, expected) => {
    expect(effectiveCriteria(spec, observed)).toEqual(expected)
  })
  it("undeclared criteria come from the snapshot", () => {
    expect(effectiveCriteria({ ...spec, criteria: {} }, { accelerator: "h100", os: "ubuntu" })).toEqual({
      criteria: { service: undefined, accelerator: "h100", os: "ubuntu" },
    })
  })
})

describe("bundleRequest and inputDigest", () => {
  it("maps placement and overrides; a toleration without an effect is InvalidPlacement", () => {
    expect(bundleRequest({ ...spec, overrides: [{ path: "gpuoperator:driver.enabled", value: "false" }] })).toMatchObject({
      acceleratedNodeSelector: { pool: "gpu" },
      set: [{ path: "gpuoperator:driver.enabled", value: "false" }],
    })
    expect(
      bundleRequest({ ...spec, placement: { accelerated: { nodeSelector: { pool: "gpu" }, tolerations: [{ key: "x", operator: "Exists" }] } } }),
    ).toMatchObject({ reason: "InvalidPlacement" })
  })
  it("an Equal toleration without a value (AICR would read key:effect as Exists) is InvalidPlacement naming it", () => {
    const withTolerations = (tolerations: ReadonlyArray<Record<string, string>>) =>
      bundleRequest({ ...spec, placement: { accelerated: { nodeSelector: { pool: "gpu" }, tolerations } } } as typeof spec)
    expect(
      withTolerations([
        { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" },
        { key: "x", operator: "Equal", effect: "NoSchedule" },
      ]),
    ).toEqual({
      reason: "InvalidPlacement",
      message:
        "AICR takes tolerations as key=value:effect (operator Equal) or key:effect (operator Exists); spec.placement.accelerated.tolerations[1] lack a key, an effect or the value of an Equal",
    })
    expect(withTolerations([{ key: "x", effect: "NoSchedule" }])).toMatchObject({ reason: "InvalidPlacement" })
    expect(withTolerations([{ key: "x", value: "y", effect: "NoSchedule" }])).toMatchObject({
      acceleratedTolerations: [{ key: "x", value: "y", effect: "NoSchedule" }],
    })
  })
  it("changes with every input, and only with inputs", () => {
    const base = {
      aicr: { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" },
      spec,
      criteria: { accelerator: "h100" },
      facts: {},
      allowedNamespaces: ["gpu-operator"],
    }
    const d = inputDigestOf(base)
    expect(inputDigestOf({ ...base, spec: { ...spec } })).toBe(d)
    // spec.paused is no input: pausing and resuming re-resolves nothing.
    expect(inputDigestOf({ ...base, spec: { ...spec, paused: true } })).toBe(d)
    for (const changed of [
      { ...base, aicr: { ...base.aicr, version: "v0.10.16" } },
      { ...base, spec: { ...spec, intent: "inference" } },
      { ...base, spec: { ...spec, overrides: [{ path: "a:b", value: "1" }] } },
      { ...base, criteria: { accelerator: "a100" } },
      { ...base, facts: { accelerated: { product: "x", osImage: undefined, drivers: [] } } },
      { ...base, allowedNamespaces: ["gpu-operator", "kube-system"] },
    ])
      expect(inputDigestOf(changed)).not.toBe(d)
  })
})
