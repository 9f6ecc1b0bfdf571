// The Application projection the executor's cache holds: every check the executor makes answers the same on the
// projection as on the whole object, on the real Argo CD v3.4.2 status sequences and on a whole Application with
// the parts the projection drops (managed resources, sync result resources, history, managedFields).
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { type Application, gateFailureAt, notReadyAt, suspensionBlockedBy, syncFailureAt, unchangedSinceWritten } from "@aicr/argocd"
import { metadataOnly } from "@aicr/kube"
import { describe, expect, it } from "vitest"
import { projectApplication } from "./caches"

interface Fixture {
  readonly sequences: ReadonlyArray<{ readonly events: ReadonlyArray<{ readonly target: string; readonly app: Application }> }>
}
const fixture: Fixture = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "..", "..", "packages", "argocd", "src", "fixtures", "argocd-3.4.2-sequences.json"), "utf8"),
)
const UID = "00000000-0000-4000-8000-000000000001"
const ours = (a: Application): Application => ({ ...a, metadata: { ...a.metadata, labels: { ...a.metadata.labels, "operator.aicr.run/runtime-uid": UID } } })

const checks = (a: Application, revision: string) => ({
  notReady: notReadyAt(a, revision),
  syncFailure: syncFailureAt(a, revision),
  gateFailure: gateFailureAt(a, revision),
  blocked: suspensionBlockedBy(a),
  unchanged: unchangedSinceWritten(a),
  spec: a.spec,
  metadata: a.metadata,
  reconciledAt: a.status?.reconciledAt,
})

const whole: Application = ours({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Application",
  metadata: {
    name: "gpu-operator",
    namespace: "argocd",
    uid: "u1",
    resourceVersion: "42",
    managedFields: [{ manager: "argocd-application-controller" }],
  } as Application["metadata"],
  spec: {
    project: "aicr",
    source: { repoURL: "r/charts", chart: "gpu-operator", targetRevision: "1.0.0" },
    destination: { server: "https://kubernetes.default.svc", namespace: "gpu-operator" },
  },
  status: {
    reconciledAt: "2026-12-02T10:00:00Z",
    sync: {
      status: "Synced",
      revision: "1.0.0",
      comparedTo: {
        source: { repoURL: "r/charts", chart: "gpu-operator", targetRevision: "1.0.0" },
        destination: { server: "https://kubernetes.default.svc", namespace: "gpu-operator" },
      },
    },
    health: { status: "Degraded", message: "Job failed" },
    operationState: {
      phase: "Succeeded",
      message: "ok",
      finishedAt: "2026-12-02T10:00:00Z",
      operation: { sync: { revision: "1.0.0" } },
      syncResult: {
        revision: "1.0.0",
        resources: Array.from({ length: 50 }, (_, i) => ({ kind: "ConfigMap", name: `c${i}`, message: "configured" })),
      } as never,
    },
    resources: [
      ...Array.from({ length: 50 }, (_, i) => ({ group: "apps", kind: "Deployment", name: `d${i}`, namespace: "gpu-operator", health: { status: "Healthy" } })),
      {
        group: "batch",
        kind: "Job",
        name: "gpu-operator-readiness-gate",
        namespace: "gpu-operator",
        health: { status: "Degraded", message: "BackoffLimitExceeded" },
      },
    ],
    history: [{ revision: "0.9.0" }],
    summary: { images: ["nvcr.io/x"] },
  } as Application["status"],
})

describe("projectApplication", () => {
  it("answers every check the executor makes as the whole object does, on every recorded Argo CD v3.4.2 event", () => {
    const events = fixture.sequences.flatMap((s) => s.events)
    expect(events.length).toBeGreaterThan(100)
    for (const e of events) expect(checks(projectApplication(ours(e.app)), e.target)).toEqual(checks(ours(e.app), e.target))
  })

  it("keeps only the Jobs of the managed resources and drops the sync result's resources, the history and managedFields", () => {
    const p = projectApplication(whole)
    expect(checks(p, "1.0.0")).toEqual(checks({ ...whole, metadata: { ...whole.metadata, managedFields: undefined } as Application["metadata"] }, "1.0.0"))
    expect(checks(p, "1.0.0").gateFailure).toContain("BackoffLimitExceeded")
    expect(p.status?.resources).toEqual([
      {
        group: "batch",
        kind: "Job",
        name: "gpu-operator-readiness-gate",
        namespace: "gpu-operator",
        health: { status: "Degraded", message: "BackoffLimitExceeded" },
      },
    ])
    expect(p.status).not.toHaveProperty("history")
    expect(p.status).not.toHaveProperty("summary")
    expect(p.status?.operationState?.syncResult).toEqual({ revision: "1.0.0" })
    expect(p.metadata).not.toHaveProperty("managedFields")
    expect(JSON.stringify(p).length).toBeLessThan(JSON.stringify(whole).length / 4)
  })

  it("keeps an Application without a runtime-uid label as its metadata only (enough for ForeignObject)", () => {
    const foreign: Application = { ...whole, metadata: { name: "a", namespace: "argocd", labels: { team: "x" }, resourceVersion: "7" } }
    expect(projectApplication(foreign)).toEqual({
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Application",
      metadata: { name: "a", namespace: "argocd", labels: { team: "x" }, resourceVersion: "7" },
    })
    expect(metadataOnly(whole)).toEqual({
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Application",
      metadata: { name: "gpu-operator", namespace: "argocd", uid: "u1", resourceVersion: "42", labels: { "operator.aicr.run/runtime-uid": UID } },
    })
  })
})
