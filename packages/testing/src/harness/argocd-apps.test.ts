import { describe, expect, it } from "vitest"
import { applicationNotReady, type ApplicationView, helmApplication } from "./argocd-apps"

const source = (rev: string) => ({ repoURL: "127.0.0.1:5000/charts", chart: "demo", targetRevision: rev, helm: { releaseName: "demo" } })

/** Synced and healthy at rev after a finished sync: the state the predicate accepts. */
const settled = (rev: string): ApplicationView => ({
  spec: { source: source(rev) },
  status: {
    sync: { status: "Synced", revision: rev, comparedTo: { source: source(rev) } },
    health: { status: "Healthy" },
    operationState: { phase: "Succeeded", syncResult: { revision: rev } },
  },
})

describe("applicationNotReady", () => {
  it("accepts an app synced and healthy at the revision, with or without a finished operation", () => {
    expect(applicationNotReady(settled("0.2.0"), "0.2.0")).toEqual([])
    const { operationState: _, ...noOp } = settled("0.2.0").status!
    expect(applicationNotReady({ ...settled("0.2.0"), status: noOp }, "0.2.0")).toEqual([])
  })

  // The states research argocd-local.md §7 recorded right after a targetRevision change 0.1.0 → 0.2.0.
  it("rejects the old revision that still looks Synced and Healthy before the controller compared the new spec", () => {
    const app = { ...settled("0.1.0"), spec: { source: source("0.2.0") } }
    expect(applicationNotReady(app, "0.2.0")).toEqual([
      "last comparison is not against spec.source",
      "sync.revision 0.1.0, want 0.2.0",
      "operation Succeeded at 0.1.0",
    ])
  })

  it("rejects a finished operation while health has not been re-evaluated (OutOfSync)", () => {
    const app = settled("0.2.0")
    expect(applicationNotReady({ ...app, status: { ...app.status, sync: { ...app.status!.sync, status: "OutOfSync" } } }, "0.2.0")).toEqual([
      "sync status OutOfSync",
    ])
  })

  it("rejects an app with an operation in flight, a non-healthy one and one with an error condition", () => {
    expect(applicationNotReady({ ...settled("0.2.0"), operation: { sync: { revision: "0.2.0" } } }, "0.2.0")).toEqual(["an operation is requested or running"])
    const s = settled("0.2.0").status!
    expect(applicationNotReady({ ...settled("0.2.0"), status: { ...s, health: { status: "Progressing" } } }, "0.2.0")).toEqual(["health Progressing"])
    expect(
      applicationNotReady(
        { ...settled("0.2.0"), status: { ...s, conditions: [{ type: "ComparisonError", message: "chart not found" }, { type: "SyncWarning" }] } },
        "0.2.0",
      ),
    ).toEqual(["ComparisonError: chart not found"])
    expect(
      applicationNotReady(
        {
          ...settled("0.2.0"),
          status: { ...s, operationState: { phase: "Failed", message: "one or more objects failed", syncResult: { revision: "0.2.0" } } },
        },
        "0.2.0",
      ),
    ).toEqual(["operation Failed at 0.2.0: one or more objects failed"])
  })

  it("reports every missing part of an app the controller has not touched yet", () => {
    expect(applicationNotReady({ spec: { source: source("0.1.0") } }, "0.1.0")).toEqual([
      "last comparison is not against spec.source",
      "sync status unset",
      "sync.revision unset, want 0.1.0",
      "health unset",
    ])
  })
})

describe("helmApplication", () => {
  it("builds an automated Application with the resources finalizer unless turned off", () => {
    const app = helmApplication({ name: "demo", repoURL: "r/charts", chart: "demo", targetRevision: "1.0.0", destinationNamespace: "d", values: { a: 1 } })
    expect(app.metadata).toEqual({ name: "demo", namespace: "argocd", finalizers: ["resources-finalizer.argocd.argoproj.io"] })
    expect(app.spec.source).toEqual({ repoURL: "r/charts", chart: "demo", targetRevision: "1.0.0", helm: { releaseName: "demo", valuesObject: { a: 1 } } })
    expect(app.spec.syncPolicy).toEqual({ automated: { prune: true, selfHeal: true }, syncOptions: ["CreateNamespace=true"] })
    expect(helmApplication({ name: "x", repoURL: "r", chart: "c", targetRevision: "1", destinationNamespace: "d", finalizer: false }).metadata).toEqual({
      name: "x",
      namespace: "argocd",
    })
  })
})
