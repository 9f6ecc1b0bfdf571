import { ArgoCD, ClusterRuntimeKind, Core } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { collectionPath, objectPath, withQuery } from "./paths"

describe("paths", () => {
  it.each([
    { name: "core namespaced object", got: objectPath(Core.ConfigMap, "aicr-system/plan"), want: "/api/v1/namespaces/aicr-system/configmaps/plan" },
    { name: "core collection across namespaces", got: collectionPath(Core.ConfigMap), want: "/api/v1/configmaps" },
    {
      name: "custom cluster-scoped object status",
      got: objectPath(ClusterRuntimeKind, "cluster", "status"),
      want: "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster/status",
    },
    {
      name: "custom namespaced collection",
      got: collectionPath(ArgoCD.Application, "argocd"),
      want: "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications",
    },
    { name: "cluster-scoped collection ignores a namespace", got: collectionPath(Core.Node, "x"), want: "/api/v1/nodes" },
    { name: "query drops undefined values", got: withQuery("/p", { a: "x y", b: undefined, force: false }), want: "/p?a=x+y&force=false" },
  ])("$name", ({ got, want }) => expect(got).toBe(want))

  it("refuses a namespaced key without a namespace and a cluster-scoped key with one", () => {
    expect(() => objectPath(Core.ConfigMap, "plan")).toThrow(/needs a namespace/)
    expect(() => objectPath(ClusterRuntimeKind, "ns/cluster")).toThrow(/must not carry a namespace/)
  })
})
