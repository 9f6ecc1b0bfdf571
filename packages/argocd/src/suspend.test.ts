// When a suspension does not hold on an Application: a sync operation requested, running or terminating (Argo CD
// finishes it although automated sync is off; measured on Argo CD v3.4.2 by the step-executor's int test). Status
// shapes as Argo CD writes them.
import { describe, expect, it } from "vitest"
import type { Application } from "./application"
import { automatedSyncEnabled, suspended, suspensionBlockedBy, suspensionPatch } from "./suspend"

const app = (extra: Partial<Application>): Application => ({ apiVersion: "argoproj.io/v1alpha1", kind: "Application", metadata: { name: "a" }, ...extra })
const op = (phase: string, message?: string) => ({
  status: { operationState: { phase, ...(message ? { message } : {}), operation: { sync: { revision: "0.2.0" } } } },
})

describe("suspensionBlockedBy", () => {
  it.each([
    ["no operation ever", app({}), undefined],
    ["the last operation Succeeded", app(op("Succeeded", "successfully synced (all tasks run)")), undefined],
    ["the last operation Failed", app(op("Failed", "one or more objects failed to apply")), undefined],
    [
      "an operation requested, not started",
      app({ operation: { sync: { revision: "0.2.0" } } }),
      "a sync operation is requested; Argo CD finishes it before automated sync stays off",
    ],
    [
      "an operation running",
      app(op("Running", "waiting for healthy state of apps/Deployment/a")),
      "a sync operation is running at 0.2.0 (waiting for healthy state of apps/Deployment/a); Argo CD finishes it before automated sync stays off",
    ],
    ["an operation terminating", app(op("Terminating")), "a sync operation is terminating at 0.2.0; Argo CD finishes it before automated sync stays off"],
  ] as const)("%s", (_name, a, want) => {
    expect(suspensionBlockedBy(a)).toBe(want)
  })
})

describe("the suspension patch", () => {
  it("turns automated sync off and back on, touching nothing else", () => {
    const on = app({
      spec: {
        project: "aicr",
        source: { repoURL: "r", chart: "c", targetRevision: "1" },
        destination: { server: "s", namespace: "n" },
        syncPolicy: { automated: { prune: true, selfHeal: true } },
      },
    })
    expect(automatedSyncEnabled(on)).toBe(true)
    expect(suspensionPatch(true)).toEqual({ spec: { syncPolicy: { automated: { enabled: false } } } })
    const off = app({ spec: { ...on.spec!, syncPolicy: { automated: { enabled: false, prune: true, selfHeal: true } } } })
    expect([automatedSyncEnabled(off), suspended(off)]).toEqual([false, true])
    expect(suspensionPatch(false)).toEqual({ spec: { syncPolicy: { automated: { enabled: null } } } })
  })
})
