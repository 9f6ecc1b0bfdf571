// decide and reported, pure: what suspendEngine does to each operator Application and when it is
// EngineSuspensionRefused (ADR 20261202-engine-suspension-refused). Application shapes as Argo CD v3.4.2 writes them.
import type { ClusterRuntime } from "@aicr/api"
import type { Application } from "@aicr/argocd"
import { describe, expect, it } from "vitest"
import type { ExecutorSettings } from "./config"
import { decide, type Refusal, reported } from "./decide"
import type { Observed } from "./gather"

const UID = "00000000-0000-4000-8000-000000000001"
const settings: ExecutorSettings = {
  namespace: "aicr-system",
  engineNamespace: "argocd",
  project: "aicr",
  stepTimeoutMs: 600_000,
  releaseTimeoutsMs: {},
  syncRetries: 2,
  engineStaleAfterMs: 600_000,
  componentPodSecurity: {},
}
const runtime = (suspendEngine: boolean): ClusterRuntime =>
  ({
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster", uid: UID, generation: 1 },
    spec: { ...(suspendEngine ? { suspendEngine } : {}) },
  }) as ClusterRuntime

type Shape = "automated" | "suspended" | "running" | "requested" | "deleting" | "foreign"
const app = (name: string, shape: Shape): Application => ({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Application",
  metadata: {
    name,
    namespace: "argocd",
    labels: { "operator.aicr.run/runtime-uid": shape === "foreign" ? "another" : UID },
    ...(shape === "deleting" ? { deletionTimestamp: "2026-12-02T10:00:00Z" } : {}),
  },
  spec: {
    project: "aicr",
    source: { repoURL: "r", chart: name, targetRevision: "0.1.0" },
    destination: { server: "https://kubernetes.default.svc", namespace: name },
    syncPolicy: { automated: { ...(shape === "suspended" || shape === "running" ? { enabled: false } : {}), prune: true, selfHeal: true } },
  },
  ...(shape === "requested" ? { operation: { sync: { revision: "0.1.0" } } } : {}),
  status: { operationState: { phase: shape === "running" ? "Running" : "Succeeded", operation: { sync: { revision: "0.1.0" } } } },
})
const observed = (suspendEngine: boolean, apps: ReadonlyArray<Application>, engine: Observed["engine"] = { _tag: "Ready" }): Observed => ({
  runtime: runtime(suspendEngine),
  generation: 1,
  engine,
  applications: apps,
  rollout: undefined,
  plan: undefined,
  namespaces: new Set(),
  settings,
  now: Date.parse("2026-12-02T10:00:00Z"),
})

describe("suspendEngine: what is patched, what is suspended, what is refused", () => {
  const forbidden: Refusal = { name: "b", why: "the API server refused the suspension patch (Forbidden): change freeze" }
  it.each([
    ["nothing to suspend without suspendEngine", false, ["automated", "automated"], [], [], 0, undefined],
    ["suspendEngine patches every automated Application", true, ["automated", "automated"], ["a", "b"], [], 2, undefined],
    ["already suspended: nothing to patch", true, ["suspended", "suspended"], [], [], 2, undefined],
    [
      "a running operation on a suspended Application is refused",
      true,
      ["running", "suspended"],
      [],
      [],
      1,
      "spec.suspendEngine is set but 1 of 2 Applications are not suspended: argocd/a: a sync operation is running at 0.1.0; Argo CD finishes it before automated sync stays off",
    ],
    [
      "a requested operation is patched and refused",
      true,
      ["requested", "suspended"],
      ["a"],
      [],
      1,
      "spec.suspendEngine is set but 1 of 2 Applications are not suspended: argocd/a: a sync operation is requested; Argo CD finishes it before automated sync stays off",
    ],
    [
      "a refused patch",
      true,
      ["suspended", "automated"],
      ["b"],
      [forbidden],
      1,
      "spec.suspendEngine is set but 1 of 2 Applications are not suspended: argocd/b: the API server refused the suspension patch (Forbidden): change freeze",
    ],
    [
      "a refused patch on a busy Application counts once",
      true,
      ["suspended", "requested"],
      ["b"],
      [forbidden],
      1,
      "spec.suspendEngine is set but 1 of 2 Applications are not suspended: argocd/b: the API server refused the suspension patch (Forbidden): change freeze",
    ],
    ["foreign and deleting Applications are neither patched nor refused", true, ["foreign", "deleting", "automated"], ["c"], [], 1, undefined],
    ["resuming removes the field", false, ["suspended", "running"], ["a", "b"], [], 0, undefined],
  ] as const)("%s", (_name, suspend, shapes, patched, refused, suspendedCount, refusal) => {
    const o = observed(
      suspend,
      shapes.map((s, i) => app("abc"[i]!, s)),
    )
    const d = decide(o)
    expect(d.suspend.map((s) => s.name)).toEqual(patched)
    expect(d.suspend.every((s) => s.suspend === suspend)).toBe(true)
    const r = reported(o, d, refused)
    expect(r.refusal).toBe(refusal)
    expect(r.decision.suspendedCount).toBe(suspendedCount)
  })

  it("Argo CD missing: nothing is patched or refused; not responding: suspension is still written", () => {
    const apps = [app("a", "running"), app("b", "automated")]
    const missing = decide(observed(true, apps, { _tag: "EngineMissing", message: "no CRD" }))
    expect([missing.suspend, missing.busy]).toEqual([[], []])
    const stuck = decide(observed(true, apps, { _tag: "EngineNotResponding", message: "stale" }))
    expect(stuck.suspend.map((s) => s.name)).toEqual(["b"])
    expect(stuck.busy.map((s) => s.name)).toEqual(["a"])
  })
})
