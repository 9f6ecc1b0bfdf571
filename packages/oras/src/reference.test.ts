import { describe, expect, it } from "vitest"
import { isOciError } from "./errors"
import { formatReference, isLoopback, manifestReference, parseReference, registryEndpoint, withReference } from "./reference"

const D = `sha256:${"a".repeat(64)}`

describe("parseReference", () => {
  it.each([
    { name: "a bare name is a Docker Hub official image", input: "alpine", want: { registry: "docker.io", repository: "library/alpine" } },
    { name: "a bare name with a tag keeps the tag", input: "alpine:3.20", want: { registry: "docker.io", repository: "library/alpine", tag: "3.20" } },
    {
      name: "a user repository on Docker Hub gets no library/ prefix",
      input: "bitnami/redis:7",
      want: { registry: "docker.io", repository: "bitnami/redis", tag: "7" },
    },
    { name: "index.docker.io normalises to docker.io", input: "index.docker.io/nginx", want: { registry: "docker.io", repository: "library/nginx" } },
    {
      name: "registry-1.docker.io normalises to docker.io",
      input: "registry-1.docker.io/org/app:1",
      want: { registry: "docker.io", repository: "org/app", tag: "1" },
    },
    {
      name: "a dotted first component is a registry",
      input: "ghcr.io/org/charts/demo:1.2.3",
      want: { registry: "ghcr.io", repository: "org/charts/demo", tag: "1.2.3" },
    },
    {
      name: "a host with a port is a registry, and the port is not a tag",
      input: "127.0.0.1:5000/charts/demo",
      want: { registry: "127.0.0.1:5000", repository: "charts/demo" },
    },
    {
      name: "a host with a port and a tag keeps both apart",
      input: "127.0.0.1:5000/charts/demo:1.0.0",
      want: { registry: "127.0.0.1:5000", repository: "charts/demo", tag: "1.0.0" },
    },
    { name: "localhost without a dot or port is a registry", input: "localhost/demo:1", want: { registry: "localhost", repository: "demo", tag: "1" } },
    { name: "an upper-case first component is a registry (Docker's rule)", input: "MyHost/demo", want: { registry: "MyHost", repository: "demo" } },
    { name: "an IPv6 loopback with a port is a registry", input: "[::1]:5000/demo@" + D, want: { registry: "[::1]:5000", repository: "demo", digest: D } },
    { name: "a digest reference has no tag", input: `ghcr.io/org/app@${D}`, want: { registry: "ghcr.io", repository: "org/app", digest: D } },
    { name: "a tag and a digest are both kept", input: `ghcr.io/org/app:v1@${D}`, want: { registry: "ghcr.io", repository: "org/app", tag: "v1", digest: D } },
    {
      name: "the oci:// scheme Helm uses is accepted",
      input: "oci://127.0.0.1:5000/aicr/c1/charts/gpu-operator:25.3.0",
      want: { registry: "127.0.0.1:5000", repository: "aicr/c1/charts/gpu-operator", tag: "25.3.0" },
    },
    {
      name: "separators inside path components are allowed",
      input: "r.io/a.b/c__d/e-f---g:t_1.x-2",
      want: { registry: "r.io", repository: "a.b/c__d/e-f---g", tag: "t_1.x-2" },
    },
    {
      name: "the spec's bundle path with a digest parses",
      input: `r.io/aicr/c1/bundles/cluster@${D}`,
      want: { registry: "r.io", repository: "aicr/c1/bundles/cluster", digest: D },
    },
  ])("$name", ({ input, want }) => {
    expect(parseReference(input)).toEqual(want)
  })

  it.each([
    { name: "an empty string", input: "" },
    { name: "an upper-case repository", input: "r.io/Org/app" },
    { name: "a plus sign in a tag (Helm mangles it to _)", input: "r.io/app:1.0.0+build" },
    { name: "a tag longer than 128 characters", input: `r.io/app:${"t".repeat(129)}` },
    { name: "a digest with a short hex part", input: "r.io/app@sha256:abc" },
    { name: "a digest with upper-case hex", input: `r.io/app@sha256:${"A".repeat(64)}` },
    { name: "a doubled slash", input: "r.io//app" },
    { name: "a trailing separator", input: "r.io/app-" },
    { name: "a registry with an invalid host", input: "bad_host.io:x/app" },
  ])("rejects $name with reason Invalid", ({ input }) => {
    let caught: unknown
    try {
      parseReference(input)
    } catch (e) {
      caught = e
    }
    expect(isOciError(caught, "Invalid")).toBe(true)
  })
})

describe("reference helpers", () => {
  it("formats a reference back to the string it came from", () => {
    for (const s of ["127.0.0.1:5000/charts/demo:1.0.0", `ghcr.io/org/app:v1@${D}`, "docker.io/library/alpine"]) {
      expect(formatReference(parseReference(s))).toBe(s)
    }
  })

  it("addresses manifests by digest when a reference has both tag and digest", () => {
    expect(manifestReference({ registry: "r", repository: "a", tag: "v1", digest: D })).toBe(D)
    expect(manifestReference({ registry: "r", repository: "a", tag: "v1" })).toBe("v1")
  })

  it("refuses to address a manifest without a tag or digest", () => {
    expect(() => manifestReference({ registry: "r", repository: "a" })).toThrow(/neither a tag nor a digest/)
  })

  it("swaps a tag for a digest and back", () => {
    const r = parseReference("r.io/a:v1")
    expect(withReference(r, { digest: D })).toEqual({ registry: "r.io", repository: "a", digest: D })
    expect(withReference({ ...r, digest: D }, { tag: "v2" })).toEqual({ registry: "r.io", repository: "a", tag: "v2" })
  })

  it.each([
    { registry: "localhost", want: true },
    { registry: "localhost:5000", want: true },
    { registry: "127.0.0.1:41234", want: true },
    { registry: "127.1.2.3", want: true },
    { registry: "[::1]:5000", want: true },
    { registry: "10.0.0.1:5000", want: false },
    { registry: "registry.local", want: false },
    { registry: "127.0.0.1.nip.io", want: false },
  ])("treats $registry as loopback: $want", ({ registry, want }) => {
    expect(isLoopback(registry)).toBe(want)
  })

  it("talks to Docker Hub's API host for docker.io and to the registry itself otherwise", () => {
    expect(registryEndpoint("docker.io")).toBe("registry-1.docker.io")
    expect(registryEndpoint("ghcr.io")).toBe("ghcr.io")
  })
})
