// The readiness predicate against real Argo CD v3.4.2 status sequences (fixtures recorded on the local control plane
// by the step-executor int test and trimmed by hack/argocd-fixtures.ts), with the Applications as the executor writes
// them: native OCI sources pinned by digest, so each event's target is a manifest digest (and `version` the chart
// version it stands for). Each event says whether the release's Deployment had really rolled out the targeted chart
// at that etcd revision. The predicate must never say ready
// before that (no early advance), must say ready in every sequence that rolled out, and every weaker predicate the
// research note names advances early on these same sequences (argocd-local.md §7–8), which proves the fixtures can
// catch a weakened predicate.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { Application } from "./application"
import { isReadyAt, notReadyAt, syncFailureAt } from "./ready"

interface Event {
  readonly target: string
  readonly version: string
  readonly deployed: boolean
  readonly app: Application
}
interface Fixture {
  readonly recordedWith: string
  readonly sequences: ReadonlyArray<{ readonly release: string; readonly events: ReadonlyArray<Event> }>
}

const fixture: Fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "argocd-3.4.2-sequences.json"), "utf8"))
const all = fixture.sequences.flatMap((s) => s.events.map((e) => ({ ...e, release: s.release })))

type Predicate = (app: Application, revision: string) => boolean
/** Events where the predicate says ready although the targeted chart was not rolled out. */
const early = (p: Predicate) => all.filter((e) => p(e.app, e.target) && !e.deployed).map((e) => `${e.release}@${e.app.metadata.resourceVersion} ${e.target}`)

const healthy = (a: Application) => a.status?.health?.status === "Healthy"
const weaker: Record<string, Predicate> = {
  "Healthy only": (a) => healthy(a),
  "Healthy and sync.revision": (a, r) => healthy(a) && a.status?.sync?.revision === r,
  "Healthy and the operation Succeeded at the revision": (a, r) =>
    healthy(a) && a.status?.operationState?.phase === "Succeeded" && a.status.operationState.syncResult?.revision === r,
  // The full predicate without its sync.status check: the operation done at the revision while health is stale.
  // The full predicate comparing only the source: after a Move the old namespace's comparison passes for ready.
  "everything but the destination comparison": (a, r) =>
    isReadyAt({ ...a, spec: { ...a.spec!, destination: a.status?.sync?.comparedTo?.destination } } as Application, r),
  "everything but Synced": (a, r) =>
    healthy(a) &&
    a.operation === undefined &&
    a.status?.sync?.revision === r &&
    a.status.operationState?.phase === "Succeeded" &&
    a.status.operationState.syncResult?.revision === r,
}
// The comparedTo, operation and last-operation checks did not matter alone on these recordings (the others covered
// for them); they stay because the research note's recordings (argocd-local.md §7) show events where each did, and
// the step-executor's component tests hold the operation check with a follow-up sync in flight.

describe("ready at the revision written (real Argo CD sequences)", () => {
  it("the fixtures are real and cover installs, upgrades, a suspension with drift, a failing sync and a Move", () => {
    expect(fixture.recordedWith).toContain("Argo CD v3.4.2")
    expect(all.length).toBeGreaterThan(100)
    expect(new Set(all.map((e) => e.version))).toEqual(new Set(["0.1.0", "0.2.0", "0.3.0"]))
    // Pinned by digest: every Application targets a manifest digest through Argo CD's native OCI source.
    expect(
      all.every(
        (e) =>
          /^sha256:[a-f0-9]{64}$/u.test(e.target) &&
          e.app.spec?.source.targetRevision === e.target &&
          e.app.spec.source.repoURL.startsWith("oci://") &&
          e.app.spec.source.path === ".",
      ),
    ).toBe(true)
    expect(all.some((e) => e.app.spec?.syncPolicy?.automated?.enabled === false)).toBe(true)
    expect(all.some((e) => e.app.status?.operationState?.phase === "Failed")).toBe(true)
    expect(new Set(all.filter((e) => e.release === "demo-m").map((e) => e.app.spec?.destination?.namespace)).size).toBe(2)
  })

  it("never says ready before the targeted chart has rolled out", () => {
    expect(early(isReadyAt)).toEqual([])
  })

  it("says ready in every sequence that rolled out its target", () => {
    const targets = new Set(all.filter((e) => e.deployed).map((e) => `${e.release} ${e.target}`))
    expect(new Set(all.filter((e) => e.deployed).map((e) => e.target)).size).toBeGreaterThanOrEqual(3)
    const reached = new Set(all.filter((e) => isReadyAt(e.app, e.target)).map((e) => `${e.release} ${e.target}`))
    expect(targets.size).toBeGreaterThanOrEqual(7)
    expect([...targets].filter((t) => !reached.has(t))).toEqual([])
  })

  it("is about the revision written: every ready event is not ready at any other digest (the revision check holds)", () => {
    const ready = all.filter((e) => isReadyAt(e.app, e.target))
    expect(ready.length).toBeGreaterThan(0)
    const other = `sha256:${"f".repeat(64)}`
    expect(ready.filter((e) => isReadyAt(e.app, other)).map((e) => `${e.release}@${e.app.metadata.resourceVersion}`)).toEqual([])
    for (const e of ready) expect(notReadyAt(e.app, other)).toContain(`sync revision ${e.target}, want ${other}`)
  })

  it.each(Object.keys(weaker))("a weaker predicate (%s) advances early on the same sequences", (name) => {
    expect(early(weaker[name]!).length).toBeGreaterThan(0)
  })

  it("names what does not hold yet, and reports Argo CD's own message once a sync failed", () => {
    const bad = all.filter((e) => e.release === "demo-bad")
    expect(bad.every((e) => !isReadyAt(e.app, e.target))).toBe(true)
    const failed = bad.filter((e) => syncFailureAt(e.app, e.target) !== undefined)
    expect(failed.length).toBeGreaterThan(0)
    expect(syncFailureAt(failed[0]!.app, failed[0]!.target)).toContain("one or more objects failed to apply")
    expect(all.filter((e) => e.release !== "demo-bad").every((e) => syncFailureAt(e.app, e.target) === undefined)).toBe(true)
    const stale = all.find((e) => healthy(e.app) && !e.deployed && e.app.status?.sync?.status === "OutOfSync")!
    expect(notReadyAt(stale.app, stale.target)).toContain("sync status OutOfSync")
  })
})

describe("the comparison is against the written source, modulo what Argo CD drops", () => {
  // Argo CD writes comparedTo.source without null-valued keys (seen with the real kube-prometheus-stack values of
  // the EKS recipe: prometheus.prometheusSpec.storageSpec.emptyDir: null).
  const app = (spec: unknown, compared: unknown): Application =>
    ({
      metadata: { name: "a" },
      spec: { source: spec },
      status: { sync: { status: "Synced", revision: "1.0.0", comparedTo: { source: compared } }, health: { status: "Healthy" } },
    }) as unknown as Application
  const source = { chart: "c", targetRevision: "1.0.0", helm: { valuesObject: { storageSpec: { emptyDir: null }, keep: [1, null] } } }
  it("a source whose only difference is a dropped null counts as compared", () => {
    expect(isReadyAt(app(source, { chart: "c", targetRevision: "1.0.0", helm: { valuesObject: { storageSpec: {}, keep: [1, null] } } }), "1.0.0")).toBe(true)
  })
  it("any other difference does not", () => {
    expect(
      notReadyAt(app(source, { chart: "c", targetRevision: "1.0.0", helm: { valuesObject: { storageSpec: { emptyDir: {} }, keep: [1, null] } } }), "1.0.0"),
    ).toEqual(["Argo CD has not compared the written source and destination yet"])
  })
})

describe("a Move: the comparison is against the written destination too", () => {
  // The shape Argo CD v3.4.2 writes right after a Move's write (chart and values unchanged, destination changed): the
  // last comparison, the sync and the health are still those of the old namespace.
  const source = { chart: "c", targetRevision: "1.0.0", helm: { valuesObject: { a: 1 } } }
  const moved = (compared: string): Application =>
    ({
      metadata: { name: "a" },
      spec: { source, destination: { server: "https://kubernetes.default.svc", namespace: "new" } },
      status: {
        sync: { status: "Synced", revision: "1.0.0", comparedTo: { source, destination: { server: "https://kubernetes.default.svc", namespace: compared } } },
        health: { status: "Healthy" },
        operationState: { phase: "Succeeded", syncResult: { revision: "1.0.0" } },
      },
    }) as unknown as Application
  it("Synced and Healthy as compared in the old namespace is not ready in the new one", () => {
    expect(notReadyAt(moved("old"), "1.0.0")).toEqual(["Argo CD has not compared the written source and destination yet"])
  })
  it("the same status compared in the new namespace is", () => {
    expect(isReadyAt(moved("new"), "1.0.0")).toBe(true)
  })
})
