// writesOutsideContract against the planner's contract: what it allows, and each kind of overreach it names (a
// RuntimeRollout is a kind the planner creates, so it may write it whole; the runtime only its finalizer and status).
import { ArgoCD, ClusterRuntimeKind, Core, FINALIZER_CLEANUP, LABEL_OUTCOME, RuntimeRolloutKind } from "@aicr/api"
import { planner } from "@aicr/contracts"
import { describe, expect, it } from "vitest"
import { writesOutsideContract } from "./contract-writes"
import type { RecordedWrite } from "./fake-kube"

const write = (w: Partial<RecordedWrite> & Pick<RecordedWrite, "verb" | "kind">): RecordedWrite => ({
  key: "cluster",
  path: "/x",
  body: {},
  result: "ok",
  ...w,
})

describe("writesOutsideContract", () => {
  it("allows status rooms, created kinds, owned labels and finalizers, and Events", () => {
    const writes = [
      write({ verb: "apply", kind: ClusterRuntimeKind.kind, subresource: "status" }),
      write({ verb: "create", kind: Core.ConfigMap.kind, key: "aicr-system/plan" }),
      write({ verb: "delete", kind: Core.Job.kind, key: "aicr-system/j" }),
      write({ verb: "create", kind: RuntimeRolloutKind.kind, key: "r-1" }),
      write({
        verb: "apply",
        kind: RuntimeRolloutKind.kind,
        key: "r-1",
        body: { apiVersion: "v", kind: "RuntimeRollout", metadata: { name: "r-1", labels: { [LABEL_OUTCOME]: "Succeeded" } } },
      }),
      write({
        verb: "patch",
        kind: ClusterRuntimeKind.kind,
        body: [
          { op: "test", path: "/metadata/resourceVersion", value: "1" },
          { op: "add", path: "/metadata/finalizers", value: [FINALIZER_CLEANUP] },
        ],
      }),
      write({ verb: "create", kind: "Event", key: "default/e" }),
    ]
    expect(writesOutsideContract(planner, writes)).toEqual([])
  })

  it("names a status write, an object write and metadata beyond what the contract owns", () => {
    const got = writesOutsideContract(planner, [
      write({ verb: "apply", kind: ArgoCD.Application.kind, key: "argocd/a", subresource: "status" }),
      write({ verb: "create", kind: ArgoCD.Application.kind, key: "argocd/a" }),
      write({ verb: "patch", kind: ClusterRuntimeKind.kind, body: { spec: { paused: true } } }),
      write({ verb: "patch", kind: ClusterRuntimeKind.kind, body: [{ op: "replace", path: "/spec/paused", value: true }] }),
      write({ verb: "apply", kind: ClusterRuntimeKind.kind, body: { metadata: { labels: { team: "a" } } } }),
      write({ verb: "apply", kind: ClusterRuntimeKind.kind, body: { metadata: { name: "cluster" }, spec: {} } }),
    ])
    expect(got).toEqual([
      "apply Application argocd/a/status: the contract writes no status on Application",
      "create Application argocd/a: the contract neither creates Application nor writes its metadata",
      expect.stringMatching(/^patch ClusterRuntime cluster: writes the object \(patch\)/u),
      expect.stringMatching(/^patch ClusterRuntime cluster: patches replace \/spec\/paused/u),
      expect.stringMatching(/^apply ClusterRuntime cluster: applies labels team/u),
      expect.stringMatching(/^apply ClusterRuntime cluster: applies spec/u),
    ])
  })
})
