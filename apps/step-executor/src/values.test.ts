import { describe, expect, it } from "vitest"
import { mergeValues, releaseValues, valueFilesOf } from "./values"

// The shape of AICR v0.11.1's deploy.sh (one `helm upgrade --install` per release, values passed with -f).
const DEPLOY = `#!/usr/bin/env bash
retry "cert-manager helm install" \\
  helm upgrade --install cert-manager cert-manager \\
  --repo https://charts.jetstack.io \\
  --version v1.20.2 \\
  -n cert-manager --create-namespace \\
  -f "\${SCRIPT_DIR}/cert-manager/values.yaml" \\
  -f "\${SCRIPT_DIR}/cert-manager/cluster-values.yaml" \\
  \${COMPONENT_WAIT_ARGS} \\
  || helm_failed "cert-manager"
retry "gpu-operator helm install" \\
  helm upgrade --install gpu-operator gpu-operator \\
  -f "\${SCRIPT_DIR}/gpu-operator/values.yaml" \\
  || helm_failed "gpu-operator"
`

describe("values", () => {
  it("reads the -f files of the release's own helm command, in order", () => {
    expect(valueFilesOf(DEPLOY, "cert-manager")).toEqual(["cert-manager/values.yaml", "cert-manager/cluster-values.yaml"])
    expect(valueFilesOf(DEPLOY, "gpu-operator")).toEqual(["gpu-operator/values.yaml"])
    expect(valueFilesOf(DEPLOY, "gpu-operator-manifests")).toBeUndefined()
    expect(valueFilesOf(undefined, "x")).toBeUndefined()
  })

  it("merges like helm: maps deep-merge, lists and scalars are replaced by the later file", () => {
    expect(mergeValues({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3], e: 2 }, d: null })).toEqual({ a: { b: 1, c: [3], e: 2 }, d: null })
  })

  it("gives each release its merged values, the wrapper releases nothing, and refuses what it cannot read", () => {
    const files = {
      "deploy.sh": DEPLOY,
      "cert-manager/values.yaml": "installCRDs: true\nresources: {limits: {cpu: 1}}\n",
      "cert-manager/cluster-values.yaml": "resources: {limits: {memory: 1Gi}}\n",
      "gpu-operator/values.yaml": "",
    }
    expect(releaseValues(files, "cert-manager")).toEqual({
      ok: true,
      files: ["cert-manager/values.yaml", "cert-manager/cluster-values.yaml"],
      values: { installCRDs: true, resources: { limits: { cpu: 1, memory: "1Gi" } } },
    })
    expect(releaseValues(files, "gpu-operator")).toMatchObject({ ok: true, values: {} })
    expect(releaseValues(files, "gpu-operator-manifests")).toEqual({ ok: true, values: {}, files: [] })
    expect(releaseValues({ "x/values.yaml": "a: [" }, "x")).toMatchObject({ ok: false, why: expect.stringContaining("x/values.yaml is not YAML") })
    expect(releaseValues({ "x/values.yaml": "- 1\n" }, "x")).toEqual({ ok: false, why: "x/values.yaml is not a YAML map" })
    expect(releaseValues({ "deploy.sh": DEPLOY }, "gpu-operator")).toEqual({
      ok: false,
      why: "deploy.sh passes gpu-operator/values.yaml for release gpu-operator, which the bundle does not hold",
    })
  })
})
