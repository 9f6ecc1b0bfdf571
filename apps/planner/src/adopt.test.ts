import {
  ANNOTATION_EDITED_BY,
  type ClusterRuntime,
  desiredStateDigest,
  LABEL_OUTCOME,
  LABEL_PLAN,
  LABEL_RELEASE,
  LABEL_RUNTIME_UID,
  type Plan,
  type PlanRelease,
  planKey,
  type RuntimeRollout,
  sha256,
} from "@aicr/api"
import { type Application, releaseApplication } from "@aicr/argocd"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { adoptionOf, type AdoptionInput, rebuildPlan, withResolution } from "./adopt"
import { decide } from "./decide"
import type { Observed, PlanRead } from "./gather"
import { readyCondition, stalledCondition } from "./status"

const OLD = "11111111-1111-4111-8111-111111111111"
const NEW = "22222222-2222-4222-8222-222222222222"
const NOW = Date.parse("2026-12-02T12:00:00Z")
const REG = "127.0.0.1:5000/aicr/cluster"

const rel = (name: string, order: number, version: string, dependsOn: string[] = []): PlanRelease => ({
  name,
  namespace: name,
  order,
  dependsOn,
  chart: { ref: `${REG}/charts/${name}:${version}`, digest: sha256(`${name}@${version}`) },
  upstream: { repo: "https://charts.example", chart: name, version },
  values: { digest: sha256(`${name} values`) },
})
const RELEASES = [rel("cert-manager", 0, "v1.17.2"), rel("gpu-operator", 1, "v25.10.1", ["cert-manager"]), rel("kai-scheduler", 2, "v0.13.0", ["gpu-operator"])]
const engine = { kind: "argocd" as const, project: "aicr" }
const PLAN: Plan = {
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "Plan",
  runtimeUID: OLD,
  createdAt: "2026-12-01T09:00:00Z",
  source: "Resolution",
  desiredStateDigest: desiredStateDigest({ engine, releases: RELEASES }),
  flags: ["bundle"],
  engine,
  releases: RELEASES,
  content: [],
}

type Mutable = { -readonly [K in keyof Application]: Application[K] }
/** The Application the step-executor writes for a release of plan, with Argo CD's status Synced and Healthy. */
const written = (r: PlanRelease, uid = OLD, plan: Plan = PLAN, edit: (a: Mutable) => void = () => undefined): Application => {
  const a = releaseApplication({
    name: r.name,
    namespace: "argocd",
    project: "aicr",
    release: r.name,
    destinationNamespace: r.namespace,
    chartRef: r.chart.ref,
    chartDigest: r.chart.digest,
    valuesDigest: r.values.digest,
    values: { message: `${r.name} values`, storage: { emptyDir: null } },
    labels: { [LABEL_RUNTIME_UID]: uid, [LABEL_RELEASE]: r.name, [LABEL_PLAN]: planKey(plan.desiredStateDigest) },
    planDigest: plan.desiredStateDigest,
    writtenAt: "2026-12-01T09:05:00Z",
    syncRetries: 2,
    record: { release: r, plan: plan.releases.map((x) => x.name) },
  })
  const app = structuredClone({
    ...a,
    status: { sync: { status: "Synced", revision: a.spec.source.targetRevision }, health: { status: "Healthy" } },
  }) as Mutable
  edit(app)
  return app as Application
}
const stack = (uid = OLD) => RELEASES.map((r) => written(r, uid))

const input = (apps: ReadonlyArray<Application>, o: Partial<AdoptionInput> = {}): AdoptionInput => ({
  runtimeUID: NEW,
  adoptFrom: OLD,
  applications: apps,
  hasPlan: () => false,
  engineNamespace: "argocd",
  project: "aicr",
  now: "2026-12-02T12:00:00Z",
  ...o,
})
const differences = (apps: ReadonlyArray<Application>) => {
  const r = rebuildPlan(apps, input(apps))
  if (Result.isSuccess(r)) throw new Error("expected the rebuild to fail")
  return r.failure
}

describe("re-adoption: rebuilding the plan from live Applications", () => {
  it("rebuilds exactly the plan that wrote them: same digest, order, dependencies and upstream versions", () => {
    const r = rebuildPlan(stack(), input(stack()))
    expect(Result.isSuccess(r)).toBe(true)
    const plan = Result.getOrThrow(r)
    expect(plan.desiredStateDigest).toBe(PLAN.desiredStateDigest)
    expect(plan).toMatchObject({ source: "Adoption", runtimeUID: NEW, engine, flags: [], content: [] })
    expect(plan.releases).toEqual(RELEASES)
  })

  it("a suspended Application (automated.enabled false) and a spec whose nulls Argo CD dropped still rebuild", () => {
    const apps = stack().map((a) => {
      const b = structuredClone(a) as Mutable & {
        spec: { syncPolicy: { automated: { enabled?: boolean } }; source: { helm: { valuesObject: { storage: unknown } } } }
      }
      b.spec.syncPolicy.automated.enabled = false
      b.spec.source.helm.valuesObject.storage = {}
      return b as Application
    })
    expect(Result.isSuccess(rebuildPlan(apps, input(apps)))).toBe(true)
  })

  it("names an Application whose values, chart version, namespace or markers were edited by hand", () => {
    const edited = [
      written(RELEASES[0]!),
      written(RELEASES[1]!, OLD, PLAN, (a) => {
        ;(a.spec!.source.helm as { valuesObject: unknown }).valuesObject = { message: "edited" }
      }),
      written(RELEASES[2]!, OLD, PLAN, (a) => {
        ;(a.spec!.source as { targetRevision: string }).targetRevision = sha256("a moved tag")
      }),
    ]
    expect(differences(edited)).toEqual([
      "Application argocd/gpu-operator: its spec (values, sync policy or ignoreDifferences) was changed after the operator wrote it",
      `Application argocd/kai-scheduler: spec.source.targetRevision is ${sha256("a moved tag")}, the operator wrote ${RELEASES[2]!.chart.digest}`,
    ])
    // Pinned by tag instead of digest (Argo CD's Helm-repository shape) is an edit too.
    const byTag = [
      written(RELEASES[2]!, OLD, PLAN, (a) => {
        ;(a.spec as { source: unknown }).source = { repoURL: "registry.example/aicr/cluster/charts", chart: "kai-scheduler", targetRevision: "v0.13.0" }
      }),
    ]
    expect(differences(byTag)[0]).toBe(
      `Application argocd/kai-scheduler: spec.source is registry.example/aicr/cluster/charts chart kai-scheduler path (none), the operator wrote oci://${REG}/charts/kai-scheduler path .`,
    )
    const moved = [
      written(RELEASES[0]!, OLD, PLAN, (a) => {
        ;(a.spec!.destination as { namespace: string }).namespace = "elsewhere"
      }),
    ]
    expect(differences(moved)[0]).toBe("Application argocd/cert-manager: spec.destination.namespace is elsewhere, the operator wrote cert-manager")
    const marker = [
      written(RELEASES[0]!, OLD, PLAN, (a) => {
        ;(a.metadata.annotations as Record<string, string>)["operator.aicr.run/values-digest"] = sha256("other")
      }),
    ]
    expect(differences(marker)[0]).toBe("Application argocd/cert-manager: its chart or values digest annotation was changed")
  })

  it("names releases deleted by hand, Applications Argo CD reports OutOfSync, and ones without a record", () => {
    expect(differences(stack().slice(0, 2))).toEqual([
      `plan ${PLAN.desiredStateDigest.slice(7, 19)} has releases with no Application: kai-scheduler (deleted by hand?)`,
    ])
    const drifted = stack().map((a, i) => (i === 0 ? { ...a, status: { ...a.status, sync: { status: "OutOfSync" } } } : a))
    expect(differences(drifted)[0]).toContain("Application argocd/cert-manager: Argo CD reports it OutOfSync")
    const bare = stack().map((a, i) => (i === 2 ? { ...a, metadata: { ...a.metadata, annotations: { "operator.aicr.run/chart-digest": "x" } } } : a))
    expect(differences(bare)[0]).toBe(
      "Application argocd/kai-scheduler: it has no operator.aicr.run/plan-release annotation; it was not written by this operator version and cannot be rebuilt",
    )
  })

  it("refuses Applications of two plans that add up to neither: a rollout that did not finish", () => {
    // The newer plan changes gpu-operator and kai-scheduler; its rollout wrote gpu-operator only.
    const newer = {
      ...PLAN,
      releases: [RELEASES[0]!, { ...RELEASES[1]!, values: { digest: sha256("v2") } }, { ...RELEASES[2]!, values: { digest: sha256("v2") } }],
    }
    const mixed = { ...newer, desiredStateDigest: desiredStateDigest(newer) }
    const apps = [written(RELEASES[0]!), written(mixed.releases[1]!, OLD, mixed), written(RELEASES[2]!)]
    expect(differences(apps)[0]).toMatch(/^the Applications were written by 2 plans \([0-9a-f]{12}: cert-manager, kai-scheduler; [0-9a-f]{12}: gpu-operator\)/u)
  })

  it("rebuilds the later plan from a finished Upgrade that wrote only the release it changed (the others keep the earlier plan's marker)", () => {
    const newer = { ...PLAN, releases: [RELEASES[0]!, { ...RELEASES[1]!, values: { digest: sha256("v2") } }, RELEASES[2]!] }
    const later = { ...newer, desiredStateDigest: desiredStateDigest(newer) }
    const apps = [written(RELEASES[0]!), written(later.releases[1]!, OLD, later), written(RELEASES[2]!)]
    const rebuilt = rebuildPlan(apps, { runtimeUID: NEW, project: "aicr", engineNamespace: "argocd", now: "2026-12-02T12:00:00Z" })
    expect(Result.isSuccess(rebuilt) && rebuilt.success.desiredStateDigest).toBe(later.desiredStateDigest)
    expect(Result.isSuccess(rebuilt) && rebuilt.success.releases.map((r) => r.values.digest)).toEqual(later.releases.map((r) => r.values.digest))
  })
})

describe("re-adoption: what a pass asks for", () => {
  it("Applications of a runtime nobody names are orphans: the message names the UID and both ways out", () => {
    const a = adoptionOf(input(stack(), { adoptFrom: undefined }))
    expect(a).toEqual({
      _tag: "Orphaned",
      message: `Argo CD Applications cert-manager, gpu-operator, kai-scheduler in argocd belong to runtime ${OLD}, not to this runtime ${NEW}: nothing rolls out. To take them back set spec.adoption.fromRuntimeUID: ${OLD}; to leave them, delete those Applications`,
    })
  })

  it("the named runtime's Applications rebuild into the plan to adopt; an edit blocks it with the difference", () => {
    const a = adoptionOf(input(stack()))
    expect(a._tag).toBe("Adopt")
    expect(a._tag === "Adopt" && [a.plan.desiredStateDigest, a.from]).toEqual([PLAN.desiredStateDigest, [OLD]])
    const edited = [
      written(RELEASES[0]!),
      written(RELEASES[1]!, OLD, PLAN, (x) => {
        ;(x.spec!.source.helm as { valuesObject: unknown }).valuesObject = {}
      }),
      written(RELEASES[2]!),
    ]
    expect(adoptionOf(input(edited))).toEqual({
      _tag: "Blocked",
      message: `runtime ${OLD}'s Applications do not rebuild into a plan: Application argocd/gpu-operator: its spec (values, sync policy or ignoreDifferences) was changed after the operator wrote it`,
    })
  })

  it("this runtime's own Applications: adopted only when their plan ConfigMap is gone, never during a normal rollout", () => {
    expect(adoptionOf(input(stack(NEW), { adoptFrom: undefined, hasPlan: () => true }))).toEqual({ _tag: "None" })
    expect(adoptionOf(input(stack(NEW), { adoptFrom: undefined, hasPlan: () => false }))._tag).toBe("Adopt")
    expect(adoptionOf(input([], { adoptFrom: OLD }))).toEqual({ _tag: "None" })
    // Unlabelled Applications (someone else's) are no business of adoption: the executor reports ForeignObject.
    const foreign = { ...stack()[0]!, metadata: { ...stack()[0]!.metadata, labels: {} } }
    expect(adoptionOf(input([foreign], { adoptFrom: undefined }))).toEqual({ _tag: "None" })
  })
})

const runtime = (spec: Record<string, unknown> = {}): ClusterRuntime => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "ClusterRuntime",
  metadata: { name: "cluster", uid: NEW, generation: 2, annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
  spec: { intent: "training", validation: { deployment: "Disabled" }, ...spec },
})
const none = { type: "Resolved", status: "Unknown" as const, reason: "NotYetReported", message: "", current: false }
const observed = (o: Partial<Observed> = {}): Observed => ({
  runtime: runtime({ adoption: { fromRuntimeUID: OLD } }),
  generation: 2,
  resolved: none,
  mirrored: none,
  resolution: undefined,
  mirror: undefined,
  status: undefined,
  content: { _tag: "NotRead" },
  plans: new Map(),
  rollouts: [],
  applications: stack(),
  engineNamespace: "argocd",
  namespace: "aicr-system",
  project: "aicr",
  windowMs: 600_000,
  deadlineMs: 86_400_000,
  now: NOW,
  ...o,
})
const cond = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: "",
  observedGeneration: 1,
  lastTransitionTime: "2026-12-02T12:00:00Z",
})

describe("re-adoption: decide", () => {
  it("orphans: Planned False OrphanedObjectsPresent, Stalled says what to do, and no rollout", () => {
    const o = observed({ runtime: runtime() })
    const d = decide(o)
    expect(d.plan).toMatchObject({ _tag: "Blocked", reason: "OrphanedObjectsPresent" })
    expect(d.create).toBeUndefined()
    expect(d.writePlan).toBeUndefined()
    expect(stalledCondition(o, d)).toMatchObject({ status: "True", reason: "OrphanedObjectsPresent" })
    expect(stalledCondition(o, d).message).toContain(`spec.adoption.fromRuntimeUID: ${OLD}`)
  })

  it("adopts at once (no resolution, no window): writes the rebuilt plan and an Adopt rollout from and to it, a step per release", () => {
    const d = decide(observed())
    expect(d.writePlan).toMatchObject({ source: "Adoption", desiredStateDigest: PLAN.desiredStateDigest, runtimeUID: NEW })
    const r = d.create!.rollout
    expect(r.spec).toMatchObject({
      runtimeUID: NEW,
      kind: "Adopt",
      fromDigest: PLAN.desiredStateDigest,
      toDigest: PLAN.desiredStateDigest,
      requiresApproval: true,
      requestedBy: "alice",
    })
    expect(r.spec.steps).toEqual(
      RELEASES.map((x) => ({ release: x.name, namespace: x.namespace, action: "Adopt", from: x.upstream!.version, to: x.upstream!.version })),
    )
    expect(d.create!.assessment.components).toEqual([])
    expect(d.plan).toEqual({
      _tag: "Planned",
      message: `Rollout ${r.metadata.name} adopts the running stack (runtime ${OLD}) as plan ${PLAN.desiredStateDigest.slice(7, 19)}, rebuilt from its Applications`,
    })
    expect(readyCondition(observed(), d).message).toBe(`rollout ${r.metadata.name} awaiting approval (kubectl aicr approve ${r.metadata.name} --reason "…")`)
  })

  it("an open Adopt rollout is never superseded by a resolution's target, and after it succeeded the plan is active", () => {
    const first = decide(observed())
    const adopt = first.create!.rollout as RuntimeRollout
    const planRead: [string, PlanRead] = [PLAN.desiredStateDigest, { ok: true, plan: first.writePlan!, configMap: "aicr-plan-x" }]
    const d = decide(
      observed({
        rollouts: [{ ...adopt, metadata: { ...adopt.metadata, creationTimestamp: "2026-12-02T12:00:00Z" } }],
        plans: new Map([planRead]),
        resolved: { ...cond("Resolved", "True", "InputsResolved"), current: true } as never,
      }),
    )
    expect(d.create).toBeUndefined()
    expect(d.closes).toEqual([])
    expect(d.plan.message).toContain(`Rollout ${adopt.metadata.name} adopts the running stack`)
    // Succeeded and relabelled: the Applications are this runtime's, of a plan that exists — nothing left to adopt.
    const done = {
      ...adopt,
      metadata: { ...adopt.metadata, creationTimestamp: "2026-12-02T12:00:00Z", labels: { ...adopt.metadata.labels, [LABEL_OUTCOME]: "Succeeded" } },
    }
    const after = decide(observed({ rollouts: [done], plans: new Map([planRead]), applications: stack(NEW) }))
    expect(after.active).toBe(PLAN.desiredStateDigest)
    expect(after.create).toBeUndefined()
    expect(after.plan._tag).toBe("AwaitingResolution")
  })

  it("the same runtime lost only its plans, and its rollout history says the stack is active: the plan is rewritten, nothing else", () => {
    const done: RuntimeRollout = {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "RuntimeRollout",
      metadata: { name: "cluster-aaaa-1", creationTimestamp: "2026-12-01T09:00:00Z", labels: { [LABEL_OUTCOME]: "Succeeded" } },
      spec: { runtimeUID: NEW, toDigest: PLAN.desiredStateDigest, kind: "Install", deadline: "2026-12-02T09:00:00Z", requiresApproval: true },
    }
    const d = decide(observed({ runtime: runtime(), applications: stack(NEW), rollouts: [done] }))
    expect(d.writePlan).toMatchObject({ source: "Adoption", desiredStateDigest: PLAN.desiredStateDigest })
    expect(d.create).toBeUndefined()
    expect(d.active).toBe(PLAN.desiredStateDigest)
    expect(readyCondition(observed({ runtime: runtime(), applications: stack(NEW), rollouts: [done] }), d)).toMatchObject({
      status: "True",
      reason: "ValidationDisabled",
    })
  })

  it("a rollout already approved and running is left alone; one awaiting approval is superseded by the adoption", () => {
    const open = (approved: boolean): RuntimeRollout => ({
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "RuntimeRollout",
      metadata: { name: "cluster-aaaa-1", creationTimestamp: "2026-12-02T11:00:00Z", labels: {} },
      spec: {
        runtimeUID: NEW,
        toDigest: sha256("other"),
        kind: "Install",
        deadline: "2026-12-03T11:00:00Z",
        requiresApproval: true,
        ...(approved
          ? { approval: { approvedBy: "bob", reason: "ok", approvedAt: "2026-12-02T11:10:00Z", expiresAt: "2026-12-02T17:00:00Z", toDigest: sha256("other") } }
          : {}),
      },
    })
    const running = decide(observed({ rollouts: [open(true)] }))
    expect(running.create).toBeUndefined()
    const waiting = decide(observed({ rollouts: [open(false)] }))
    expect(waiting.closes.map((c) => [c.rollout.metadata.name, c.outcome])).toEqual([["cluster-aaaa-1", "Superseded"]])
    expect(waiting.create?.rollout.spec.kind).toBe("Adopt")
  })

  it("a pin to a plan rebuilt at an adoption is refused: it holds no values", () => {
    const adopted: Plan = { ...PLAN, source: "Adoption", runtimeUID: NEW }
    const d = decide(
      observed({
        runtime: runtime({ pin: { desiredStateDigest: PLAN.desiredStateDigest } }),
        applications: [],
        plans: new Map([[PLAN.desiredStateDigest, { ok: true, plan: adopted, configMap: "aicr-plan-x" }]]),
      }),
    )
    expect(d.plan).toMatchObject({ _tag: "Blocked", reason: "PlanUnreadable" })
    expect(d.plan.message).toContain("rebuilt from live Applications")
  })
})

// The runtime's current resolution, as the resolver and the registry-mirror publish it, of the releases RELEASES runs;
// `values` changes what it renders for some of them.
const INPUT = sha256("inputs as the team had them")
const AICR = { version: "v0.11.1", image: "ghcr.io/nvidia/aicr:v0.11.1" }
const BUNDLE_REF = `${REG}/bundles/cluster:input-1@${sha256("bundle")}`
const contentOf = (values: Record<string, string> = {}) => ({
  "recipe.json": JSON.stringify({
    componentRefs: RELEASES.map((r) => ({
      name: r.name,
      namespace: r.namespace,
      chart: r.name,
      version: r.upstream!.version,
      source: "https://charts.example",
      dependencyRefs: r.dependsOn,
    })),
    deploymentOrder: RELEASES.map((r) => r.name),
  }),
  "values.json": JSON.stringify({
    kind: "Bundle",
    files: Object.fromEntries(RELEASES.map((r) => [`${r.name}/values.yaml`, values[r.name] ?? `${r.name} values`])),
  }),
})
const resolvedAs = (values: Record<string, string> = {}): Partial<Observed> => ({
  runtime: runtime({ adoption: { fromRuntimeUID: OLD }, validation: { deployment: "Required" } }),
  resolved: { ...cond("Resolved", "True", "InputsResolved"), observedGeneration: 2, current: true } as never,
  mirrored: { ...cond("Mirrored", "True", "ContentMirrored"), observedGeneration: 2, current: true } as never,
  resolution: { inputDigest: INPUT, contentConfigMap: "aicr-content-in", aicr: AICR },
  mirror: {
    inputDigest: INPUT,
    bundle: BUNDLE_REF,
    charts: RELEASES.map((r) => ({ release: r.name, ref: `${r.chart.ref}@${r.chart.digest}` })),
  },
  content: { _tag: "Found", data: contentOf(values) },
})
const RECIPE_DIGEST = sha256(contentOf()["recipe.json"])

describe("re-adoption: what an adopted plan is validated with", () => {
  const rebuilt = Result.getOrThrow(rebuildPlan(stack(), input(stack())))
  const composed = (over: Partial<Plan>): Plan => ({ ...PLAN, source: "Resolution", inputDigest: INPUT, aicr: AICR, bundle: { ref: BUNDLE_REF }, ...over })

  it("a resolution that renders exactly what runs lends the rebuilt plan its AICR, inputs, flags, bundle and content; the releases stay the rebuilt ones", () => {
    const content = [{ key: "recipe.json" as const, configMap: "aicr-content-in", digest: RECIPE_DIGEST }]
    // Another order and no upstream versions in the resolution's plan: not covered by the digest, so what runs stays.
    const resolution = composed({ flags: ["bundle", "--recipe", "recipe.yaml"], content, releases: [...RELEASES].reverse().map(({ upstream: _, ...r }) => r) })
    expect(Result.getOrThrow(withResolution(rebuilt, resolution))).toEqual({
      ...rebuilt,
      inputDigest: INPUT,
      aicr: AICR,
      flags: ["bundle", "--recipe", "recipe.yaml"],
      bundle: { ref: BUNDLE_REF },
      content,
    })
  })

  it("a resolution that renders something else is refused, naming each release that differs and how", () => {
    const releases = [
      { ...RELEASES[0]!, values: { digest: sha256("other values") } },
      { ...RELEASES[2]!, chart: { ...RELEASES[2]!.chart, digest: sha256("another build") } },
      { ...RELEASES[2]!, name: "nvsentinel", namespace: "nvsentinel", order: 3 },
    ]
    const other = composed({ releases, desiredStateDigest: desiredStateDigest({ engine, releases }) })
    const why = withResolution(rebuilt, other)
    expect(Result.isFailure(why) && why.failure).toBe(
      `the running stack rebuilds into plan ${PLAN.desiredStateDigest.slice(7, 19)}, but the runtime's current resolution (input ${INPUT.slice(7, 19)}) renders plan ${other.desiredStateDigest.slice(7, 19)}: ` +
        `cert-manager (values ${sha256("cert-manager values").slice(7, 19)} run, the resolution renders ${sha256("other values").slice(7, 19)}), ` +
        "gpu-operator (runs, the resolution does not render it), " +
        `kai-scheduler (chart digest ${RELEASES[2]!.chart.digest.slice(7, 19)} runs, the resolution renders ${sha256("another build").slice(7, 19)}), ` +
        "nvsentinel (the resolution renders it, it does not run). " +
        "The Adopt rollout is validated with the AICR and the recipe of a resolution that renders what runs: apply the runtime spec that produced the stack (its overrides, platform and criteria); change it afterwards with an ordinary rollout",
    )
  })

  it("validation Required and no resolution yet: the adoption waits for it (AwaitingResolution), writing no plan and no rollout", () => {
    const o = observed({ runtime: runtime({ adoption: { fromRuntimeUID: OLD }, validation: { deployment: "Required" } }) })
    const d = decide(o)
    expect(d.plan).toEqual({
      _tag: "AwaitingResolution",
      message: `The running stack rebuilds into plan ${PLAN.desiredStateDigest.slice(7, 19)}; its Adopt rollout is validated with the AICR and the recipe of the runtime's resolution, once that renders what runs. Waiting for Resolved=True at generation 2: Resolved is Unknown/NotYetReported`,
    })
    expect([d.writePlan, d.create]).toEqual([undefined, undefined])
    expect(stalledCondition(o, d).status).toBe("False")
  })

  it("validation Required and the resolution renders what runs: the Adopt rollout's plan records the resolution's AICR and recipe", () => {
    const d = decide(observed(resolvedAs()))
    expect(d.writePlan).toMatchObject({
      source: "Adoption",
      runtimeUID: NEW,
      desiredStateDigest: PLAN.desiredStateDigest,
      inputDigest: INPUT,
      aicr: AICR,
      bundle: { ref: BUNDLE_REF },
      releases: RELEASES,
    })
    expect(d.writePlan!.content).toContainEqual({ key: "recipe.json", configMap: "aicr-content-in", digest: RECIPE_DIGEST })
    expect(d.create!.rollout.spec).toMatchObject({ kind: "Adopt", fromDigest: PLAN.desiredStateDigest, toDigest: PLAN.desiredStateDigest })
  })

  it("validation Required and the resolution renders other values: AdoptionBlocked names the release, Stalled says so, nothing is written", () => {
    const o = observed(resolvedAs({ "gpu-operator": "replicas: 2" }))
    const d = decide(o)
    expect(d.plan).toMatchObject({ _tag: "Blocked", reason: "AdoptionBlocked" })
    expect(d.plan.message).toContain(
      `gpu-operator (values ${RELEASES[1]!.values.digest.slice(7, 19)} run, the resolution renders ${sha256("replicas: 2").slice(7, 19)})`,
    )
    expect([d.writePlan, d.create]).toEqual([undefined, undefined])
    expect(stalledCondition(o, d)).toMatchObject({ status: "True", reason: "AdoptionBlocked" })
  })

  it("validation Required, but the rebuilt plan is already active (the same runtime lost only its plans): rewritten at once, nothing to validate", () => {
    const done: RuntimeRollout = {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "RuntimeRollout",
      metadata: { name: "cluster-aaaa-1", creationTimestamp: "2026-12-01T09:00:00Z", labels: { [LABEL_OUTCOME]: "Succeeded" } },
      spec: { runtimeUID: NEW, toDigest: PLAN.desiredStateDigest, kind: "Install", deadline: "2026-12-02T09:00:00Z", requiresApproval: true },
    }
    const d = decide(observed({ runtime: runtime({ validation: { deployment: "Required" } }), applications: stack(NEW), rollouts: [done] }))
    expect(d.writePlan).toMatchObject({ source: "Adoption", desiredStateDigest: PLAN.desiredStateDigest })
    expect(d.create).toBeUndefined()
  })
})
