import { describe, expect, it } from "vitest"
import { parseRegistryPrefix, parseRewrites, parseSource, repositoryIn, rewrite } from "./source"

describe("parseSource", () => {
  const cases: Array<{ name: string; given: { source: string; chart?: string; version?: string }; want: unknown }> = [
    {
      name: "reads an https repository as a Helm HTTP repository with the exact version",
      given: { source: "https://charts.jetstack.io", chart: "cert-manager", version: "v1.17.2" },
      want: { ok: true, source: { _tag: "HelmRepo", repoUrl: "https://charts.jetstack.io", chart: "cert-manager", version: "v1.17.2" } },
    },
    {
      name: "reads oci://host/path as the repository path/<chart> tagged with the version, as deploy.sh installs it",
      given: { source: "oci://ghcr.io/nvidia/kai-scheduler", chart: "kai-scheduler", version: "v0.13.0" },
      want: { ok: true, source: { _tag: "Oci", repository: "ghcr.io/nvidia/kai-scheduler/kai-scheduler", tag: "v0.13.0" } },
    },
    {
      name: "tags a version with build metadata the way helm push does (+ → _)",
      given: { source: "oci://ghcr.io/nvidia", chart: "nvsentinel", version: "1.1.0+build.3" },
      want: { ok: true, source: { _tag: "Oci", tag: "1.1.0_build.3", version: "1.1.0+build.3" } },
    },
    { name: "refuses an empty source", given: { source: "" }, want: { ok: false, why: "it names no chart source" } },
    { name: "refuses a source without a chart name", given: { source: "https://x.example", version: "1" }, want: { ok: false } },
    { name: "refuses a chart without a version (a mirror pins exact versions)", given: { source: "https://x.example", chart: "a" }, want: { ok: false } },
    {
      name: "refuses a git source",
      given: { source: "git://github.com/x/y", chart: "a", version: "1" },
      want: { ok: false, why: expect.stringContaining("git://") },
    },
    { name: "refuses a bare path", given: { source: "charts/local", chart: "a", version: "1" }, want: { ok: false, why: expect.stringContaining("neither") } },
  ]
  it.each(cases)("$name", ({ given, want }) => {
    expect(parseSource(given)).toMatchObject(want as object)
  })

  it("applies upstream rewrites before parsing, keeping the original for messages", () => {
    const r = parseSource({ source: "oci://ghcr.io/nvidia", chart: "nvsentinel", version: "v1.1.0" }, [["oci://ghcr.io", "oci://127.0.0.1:5001/ghcr.io"]])
    expect(r).toMatchObject({ ok: true, source: { repository: "127.0.0.1:5001/ghcr.io/nvidia/nvsentinel", original: "oci://ghcr.io/nvidia" } })
  })
})

describe("rewrite", () => {
  const rules = parseRewrites([
    "https://helm.ngc.nvidia.com/nvidia=http://127.0.0.1:1/a",
    "https://helm.ngc.nvidia.com/nvidia/skyhook=http://127.0.0.1:1/b,oci://ghcr.io/=oci://h:2/ghcr.io/",
  ])
  it.each([
    ["the longest matching prefix wins", "https://helm.ngc.nvidia.com/nvidia/skyhook", "http://127.0.0.1:1/b"],
    ["a prefix matches only at a path boundary", "https://helm.ngc.nvidia.com/nvidiax", "https://helm.ngc.nvidia.com/nvidiax"],
    ["the rest of the path is kept", "https://helm.ngc.nvidia.com/nvidia/gpu-operator-v1.tgz", "http://127.0.0.1:1/a/gpu-operator-v1.tgz"],
    ["trailing slashes do not matter", "oci://ghcr.io/kubeflow/charts/", "oci://h:2/ghcr.io/kubeflow/charts"],
    ["sources no rule matches pass unchanged", "https://charts.jetstack.io", "https://charts.jetstack.io"],
  ])("%s", (_name, source, want) => expect(rewrite(source, rules)).toBe(want))

  it("refuses an entry without =", () => expect(() => parseRewrites(["https://a"])).toThrow(/<from>=<to>/))
})

describe("parseRegistryPrefix", () => {
  it("splits oci://host:port/prefix", () =>
    expect(parseRegistryPrefix("oci://127.0.0.1:5000/aicr/cluster-1")).toEqual({ registry: "127.0.0.1:5000", prefix: "aicr/cluster-1" }))
  it("allows an empty prefix", () => expect(parseRegistryPrefix("oci://registry.example/")).toEqual({ registry: "registry.example", prefix: "" }))
  it("refuses a value without oci://", () => expect(() => parseRegistryPrefix("registry.example/aicr")).toThrow(/oci:\/\//))
  it("refuses upper-case repository paths", () => expect(() => parseRegistryPrefix("oci://registry.example/AICR")).toThrow(/repository path/))
  it("places areas under the prefix", () => {
    expect(repositoryIn({ registry: "r:1", prefix: "aicr/c" }, "charts", "gpu-operator")).toBe("r:1/aicr/c/charts/gpu-operator")
    expect(repositoryIn({ registry: "r:1", prefix: "" }, "bundles", "cluster")).toBe("r:1/bundles/cluster")
  })
})
