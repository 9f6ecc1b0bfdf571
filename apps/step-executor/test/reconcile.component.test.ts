// reconcile() against FakeKube: the writes it makes, for the properties every component suite proves (first visit,
// idempotence, room, errors; design/style.md §B.7), plus the executor's own: one Application per step, advance only
// at the revision written, the approval and validation gates, ForeignObject, sync failure and deadline, revocation,
// removal, suspendEngine and a restart that rebuilds everything from the API server.
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  ArgoCD,
  ClusterRuntimeKind,
  Core,
  type ClusterRuntime,
  encodePlan,
  type KubeObject,
  LABEL_OUTCOME,
  LABEL_ROLE,
  PLAN_DATA_KEY,
  planConfigMapName,
  ROLE_PLAN,
  type RuntimeRollout,
  RuntimeRolloutKind,
} from "@aicr/api"
import { ANNOTATION_CHART_DIGEST, type Application } from "@aicr/argocd"
import { eventRecorderLayer, type Informer, Kube, type KubeShape } from "@aicr/kube"
import { makeFakeKube, settle, writesDuring, writesOutsideContract } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { Expectations, makeExpectations, makeStatusPacer, Requeue, StatusPacer } from "@aicr/runtime"
import { TestClock } from "effect/testing"
import { afterEach, describe, expect } from "vitest"
import { Caches, type ExecutorCaches, makeCaches } from "../src/caches"
import { ExecutorConfig, type ExecutorSettings } from "../src/config"
import { contract } from "../src/contract"
import { makePlanReads, PlanReads } from "../src/gather"
import { reconcile } from "../src/reconcile"
import {
  aPlan,
  applicationCrd,
  appProject,
  aRollout,
  aRuntime,
  at,
  digestOf,
  failedStatus,
  gateStatus,
  NAMESPACE,
  readyStatus,
  type Rel,
  type RolloutState,
  staleStatus,
  stepsOf,
  T0,
  UID,
} from "./support/fixtures"

const settings: ExecutorSettings = {
  namespace: NAMESPACE,
  engineNamespace: "argocd",
  project: "aicr",
  stepTimeoutMs: 600_000,
  releaseTimeoutsMs: {},
  syncRetries: 2,
  engineStaleAfterMs: 600_000,
  componentPodSecurity: {},
}
const ROLLOUT = "cluster-abc-1"
const CHAIN = [
  { name: "a", version: "0.2.0" },
  { name: "b", version: "0.2.0" },
  { name: "c", version: "0.2.0" },
]

interface Setup {
  readonly runtime?: Partial<ClusterRuntime["spec"]>
  readonly rollout?: RolloutState | false
  readonly engine?: "ok" | "no-crd" | "no-project"
  readonly steps?: ReturnType<typeof stepsOf>
  readonly releases?: ReadonlyArray<Rel>
  readonly settings?: Partial<ExecutorSettings>
  /** Release namespaces not created (the chart creates every other one the tests name). */
  readonly missingNamespaces?: ReadonlyArray<string>
}

/** The executor's own writes in each test (not the test's, nor Argo CD's it plays), checked against its contract after the test. */
const passes: Array<ReturnType<typeof writesDuring>> = []
afterEach(() => {
  for (const p of passes.splice(0)) expect(writesOutsideContract(contract, p.writes())).toEqual([])
})

const setup = (s: Setup = {}) => {
  const fake = makeFakeKube({
    // status.steps.items is a list map keyed by the integer index on the real API server; FakeKube keys list maps by
    // strings only, so here it is an atomic list (the executor is its only writer either way).
    listMapKeys: {
      "RuntimeRollout.operator.aicr.run": { "status.conditions": "type", "spec.acknowledgements": "step" },
      "ClusterRuntime.operator.aicr.run": { "status.conditions": "type" },
    },
  })
  const { plan, configMaps } = aPlan(s.releases ?? CHAIN)
  fake.seed(ClusterRuntimeKind, aRuntime(s.runtime))
  for (const cm of configMaps) fake.seed(Core.ConfigMap, cm as never)
  const namespaces = new Set([...plan.releases.map((r) => r.namespace), "a-new", "b-new"])
  for (const n of namespaces) if (!s.missingNamespaces?.includes(n)) fake.seed(Core.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: n } })
  if (s.engine !== "no-crd") fake.seed(Core.CustomResourceDefinition, applicationCrd)
  if (s.engine !== "no-project" && s.engine !== "no-crd") fake.seed(ArgoCD.AppProject, appProject)
  if (s.rollout !== false)
    fake.seed(
      RuntimeRolloutKind,
      aRollout(
        ROLLOUT,
        plan,
        s.steps ??
          stepsOf(
            "Install",
            (s.releases ?? CHAIN).map((r) => r.name),
          ),
        s.rollout ?? {},
      ),
    )
  const events = eventRecorderLayer({ controller: "operator.aicr.run/step-executor", instance: "test" }).pipe(Layer.provide(fake.layer))
  const config = { ...settings, ...s.settings }
  // The executor's caches on FakeKube, made by the first pass; each pass starts once they show what the test wrote.
  let caches: ExecutorCaches | undefined
  const expectations = makeExpectations()
  const pacer = makeStatusPacer()
  const plans = makePlanReads()
  const ready = Effect.gen(function* () {
    caches ??= (yield* makeCaches(config).pipe(Effect.provide(fake.layer))).caches
    yield* settle(fake, Object.values(caches) as ReadonlyArray<Informer<KubeObject>>)
    return caches
  })
  const mine = writesDuring(fake)
  passes.push(mine)
  const run = ready.pipe(
    Effect.flatMap((c) =>
      mine
        .during(reconcile("cluster"))
        .pipe(
          Effect.provide(Layer.mergeAll(fake.layer, events)),
          Effect.provideService(ExecutorConfig, config),
          Effect.provideService(Caches, c),
          Effect.provideService(Expectations, expectations),
          Effect.provideService(StatusPacer, pacer),
          Effect.provideService(PlanReads, plans),
        ),
    ),
    Effect.exit,
  )
  const app = (name: string) => fake.peek<Application>(ArgoCD.Application, `argocd/${name}`)
  const rollout = () => fake.peek<RuntimeRollout>(RuntimeRolloutKind, ROLLOUT)!
  const progressing = () => rollout().status?.conditions?.find((c) => c.type === "Progressing")
  const runtime = () => fake.peek<ClusterRuntime>(ClusterRuntimeKind, "cluster")!
  const appWrites = () => fake.writes.filter((w) => w.kind === "Application")
  /** The executor's Application writes the API server took (a refused one, e.g. from a stale view, changed nothing). */
  const landed = () => appWrites().filter((w) => w.result === "ok" && w.manager === contract.fieldManager)
  /**
   * Plays Argo CD: writes the Application's status (FakeKube keeps status apart from the main resource, as with a
   * status subresource; the real CRD has none) and, with extra, top-level fields such as `operation`.
   */
  const argo = (name: string, status: (a: Application) => unknown, extra: Record<string, unknown> = {}) =>
    fake.kube
      .patch(
        ArgoCD.Application,
        `argocd/${name}`,
        { type: "merge", body: { status: status(app(name)!) } },
        { fieldManager: "argocd-application-controller", subresource: "status" },
      )
      .pipe(
        Effect.andThen(
          Object.keys(extra).length > 0
            ? fake.kube.patch(ArgoCD.Application, `argocd/${name}`, { type: "merge", body: extra }, { fieldManager: "argocd-application-controller" })
            : Effect.void,
        ),
      )
  return { fake, plan, run, app, rollout, progressing, runtime, appWrites, landed, argo }
}

/** The gate release's chart as messages name it: version and short manifest digest. */
const GATE = `0.1.0@${digestOf("gpu-operator-readiness@0.1.0").slice(0, 19)}`
const at0 = <A, E, R>(body: Effect.Effect<A, E, R>) => TestClock.setTime(T0).pipe(Effect.andThen(body))

describe("step-executor reconcile", () => {
  it.effect("first visit without a rollout: EngineAvailable and status.engine, nothing else", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ rollout: false })
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.runtime().status?.conditions?.find((c) => c.type === "EngineAvailable")).toMatchObject({
          status: "True",
          reason: "EngineReady",
          observedGeneration: 1,
        })
        expect(t.runtime().status?.engine).toEqual({ namespace: "argocd", project: "aicr", applications: 0, suspended: 0 })
        expect(t.appWrites()).toHaveLength(0)
      }),
    ),
  )

  it.effect("engine missing or project missing: EngineAvailable False and no step starts", () =>
    at0(
      Effect.gen(function* () {
        for (const [engine, reason] of [
          ["no-crd", "EngineMissing"],
          ["no-project", "ProjectMissing"],
        ] as const) {
          const t = setup({ engine })
          yield* t.run
          expect(t.runtime().status?.conditions?.find((c) => c.type === "EngineAvailable")).toMatchObject({ status: "False", reason })
          expect(t.progressing()).toMatchObject({ status: "False", reason })
          expect(t.appWrites()).toHaveLength(0)
        }
      }),
    ),
  )

  it.effect("an approved rollout writes the first release's Application only, with its markers, values and project", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        // Created, as the caches showed none: a second create from a stale view would fail AlreadyExists.
        expect(t.appWrites().map((w) => [w.verb, w.key, w.manager])).toEqual([["create", "argocd/a", contract.fieldManager]])
        const a = t.app("a")!
        expect(a.metadata.labels).toEqual({
          "operator.aicr.run/runtime-uid": UID,
          "operator.aicr.run/release": "a",
          "operator.aicr.run/plan": t.plan.desiredStateDigest.slice(7, 39),
        })
        expect(a.metadata.annotations).toMatchObject({ [ANNOTATION_CHART_DIGEST]: digestOf("a@0.2.0"), "operator.aicr.run/written-at": "2026-12-02T10:00:00Z" })
        expect(a.metadata.finalizers).toEqual(["resources-finalizer.argocd.argoproj.io"])
        expect(a.spec).toMatchObject({
          project: "aicr",
          // Pinned by digest: Argo CD's native OCI source, the chart's manifest digest as targetRevision (never the tag).
          source: {
            repoURL: "oci://registry.example/aicr/cluster/charts/a",
            path: ".",
            targetRevision: digestOf("a@0.2.0"),
            helm: { releaseName: "a", valuesObject: { message: "a-0.2.0", nested: { a: 1 } } },
          },
          destination: { server: "https://kubernetes.default.svc", namespace: "a" },
          syncPolicy: { automated: { prune: true, selfHeal: true }, retry: { limit: 2, backoff: { duration: "5s", factor: 2, maxDuration: "1m" } } },
        })
        expect(a.spec!.syncPolicy!.automated!.enabled).toBeUndefined()
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress", observedGeneration: 1 })
        expect(a.spec!.source.chart).toBeUndefined()
        expect(t.progressing()!.message).toBe(
          `step 1/3 a (Install): Waiting for 0.2.0@${digestOf("a@0.2.0").slice(0, 19)}: Argo CD has not compared the written source and destination yet; sync status unknown; sync revision unknown, want ${digestOf("a@0.2.0")}; health unknown`,
        )
        expect(t.rollout().status!.steps).toMatchObject({ total: 3, done: 0, current: "1/3 a (Install)" })
        expect(t.rollout().status!.steps!.items!.map((s) => s.state)).toEqual(["WaitingForReady", "Pending", "Pending"])
        // The step in flight carries its deadline (written-at + the 10 m step timeout); the others none.
        const items = t.rollout().status!.steps!.items!
        expect(Date.parse(items[0]!.deadline!) - Date.parse(items[0]!.startedAt!)).toBe(10 * 60_000)
        expect(items.slice(1).map((s) => s.deadline)).toEqual([undefined, undefined])
      }),
    ),
  )

  it.effect("idempotence and restart: a second pass, or a fresh executor, writes no Application again", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        t.fake.clearWrites()
        yield* TestClock.adjust("5 seconds")
        const reads = () => t.fake.requests.get + t.fake.requests.list
        const before = reads()
        yield* t.run
        expect(t.appWrites()).toHaveLength(0)
        expect(t.fake.writes.filter((w) => w.kind === "RuntimeRollout")).toHaveLength(0)
        // Every read of the second pass came from the caches (the plan was read and verified once, by the first).
        expect(reads()).toBe(before)
      }),
    ),
  )

  it.effect("advances only at the revision written: stale Healthy holds the next step back, ready at revision releases it", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.argo("a", staleStatus)
        t.fake.clearWrites()
        // Only the step's message changes (what it waits for): the rewrite waits for the pacer's 10 s, then comes.
        expect(yield* t.run).toEqual(Exit.succeed(Requeue.after(10_000)))
        expect(t.fake.writes).toHaveLength(0)
        yield* TestClock.adjust("10 seconds")
        yield* t.run
        expect(t.fake.writes.map((w) => w.kind)).toEqual(["RuntimeRollout"])
        expect(t.appWrites()).toHaveLength(0)
        expect(t.rollout().status!.steps!.items![0]).toMatchObject({ state: "WaitingForReady" })
        expect(t.rollout().status!.steps!.items![0]!.message).toContain("sync status OutOfSync")
        yield* t.argo("a", readyStatus)
        yield* t.argo("a", readyStatus, { operation: { sync: { revision: "0.2.0" } } })
        yield* t.run
        expect(t.app("b")).toBeUndefined() // a follow-up sync is still running
        yield* t.fake.kube.patch(ArgoCD.Application, "argocd/a", { type: "merge", body: { operation: null } })
        yield* t.run
        expect(t.app("b")).toBeDefined()
        expect(t.rollout().status!.steps).toMatchObject({ done: 1, current: "2/3 b (Install)" })
        expect(t.rollout().status!.steps!.items![0]).toMatchObject({ state: "Ready", readyAtRevision: expect.stringMatching(/^0\.2\.0@sha256:/u) })
        expect(t.rollout().status!.steps!.items![0]!.deadline).toBeUndefined()
        expect(t.rollout().status!.steps!.items![1]!.deadline).toBeDefined()
        // A finished step records when this executor first saw it ready, and keeps that time on later passes.
        expect(t.rollout().status!.steps!.items![0]!.completedAt).toBe("2026-12-02T10:00:10Z")
        expect(t.rollout().status!.steps!.items![1]!.completedAt).toBeUndefined()
        yield* TestClock.adjust("30 seconds")
        for (const n of ["b", "c"]) {
          yield* t.run
          yield* t.argo(n, readyStatus)
        }
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepsCompleted" })
        expect(t.rollout().status!.steps).toMatchObject({ total: 3, done: 3 })
        expect(t.rollout().status!.steps!.current).toBeUndefined()
        expect(t.rollout().status!.steps!.items!.map((x) => x.completedAt)).toEqual(["2026-12-02T10:00:10Z", "2026-12-02T10:00:40Z", "2026-12-02T10:00:40Z"])
      }),
    ),
  )

  it.effect(
    "pacing: a step writes its Application, its Event and the rollout's room at once; the Application count and message-only rewrites wait 10 s, then are written",
    () =>
      at0(
        Effect.gen(function* () {
          const t = setup()
          yield* t.run
          expect(t.runtime().status?.engine?.applications).toBe(1)
          yield* t.argo("a", readyStatus)
          t.fake.clearWrites()
          // Step 2: its Application, its StepStarted Event and the rollout's room (a Ready, b written) at once; the
          // runtime's Application count (1 → 2) is all that changes there, so it waits.
          const r = yield* t.run
          expect(t.fake.writes.map((w) => `${w.verb} ${w.kind}`).sort()).toEqual(["apply RuntimeRollout", "create Application", "create Event"])
          expect(r).toEqual(Exit.succeed(Requeue.after(10_000)))
          expect(t.runtime().status?.engine?.applications).toBe(1)
          t.fake.clearWrites()
          yield* TestClock.adjust("10 seconds")
          yield* t.run
          expect(t.fake.writes.map((w) => `${w.verb} ${w.kind}`)).toEqual(["apply ClusterRuntime"])
          expect(t.runtime().status?.engine?.applications).toBe(2)
          t.fake.clearWrites()
          yield* t.run
          expect(t.fake.writes).toHaveLength(0)
        }),
      ),
  )

  it.effect("gates: no approval, a stale approval, AwaitingAcknowledgement, validation Required without ValidationReady", () =>
    at0(
      Effect.gen(function* () {
        const cases: Array<[Setup, string]> = [
          [{ rollout: { approved: "missing" } }, "AwaitingApproval"],
          [{ rollout: { approved: "stale" } }, "AwaitingApproval"],
          [{ rollout: { approved: "False", approvedReason: "AwaitingAcknowledgement" } }, "AwaitingAcknowledgement"],
          [{ runtime: { validation: { deployment: "Required" } } }, "AwaitingValidationReady"],
          [{ runtime: { paused: true } }, "Paused"],
          [{ runtime: { suspendEngine: true } }, "EngineSuspended"],
        ]
        for (const [s, reason] of cases) {
          const t = setup(s)
          yield* t.run
          expect(t.progressing(), reason).toMatchObject({ status: "False", reason })
          expect(t.appWrites()).toHaveLength(0)
        }
        const ok = setup({ runtime: { validation: { deployment: "Required" } }, rollout: { validationReady: "True" } })
        yield* ok.run
        expect(ok.app("a")).toBeDefined()
      }),
    ),
  )

  it.effect("ForeignObject: an Application with the wanted name that is not ours is never touched", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        t.fake.seed(ArgoCD.Application, {
          apiVersion: "argoproj.io/v1alpha1",
          kind: "Application",
          metadata: { name: "a", namespace: "argocd", labels: { team: "x" } },
        })
        t.fake.clearWrites()
        yield* t.run
        expect(t.appWrites()).toHaveLength(0)
        expect(t.progressing()).toMatchObject({ status: "False", reason: "ForeignObject" })
        expect(t.progressing()!.message).toContain("Application argocd/a was not created by this operator")
      }),
    ),
  )

  it.effect("a sync failure fails the rollout with Argo CD's message, and the verdict stands", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.argo("a", (a) => failedStatus(a, 'one or more objects failed to apply, reason: ConfigMap "Bad" is invalid'))
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "False", reason: "RolloutFailed" })
        expect(t.progressing()!.message).toBe(
          `step 1/3 a (Install) failed: Argo CD sync of 0.2.0@${digestOf("a@0.2.0").slice(0, 19)} failed: one or more objects failed to apply, reason: ConfigMap "Bad" is invalid`,
        )
        expect(t.rollout().status!.steps!.items![0]).toMatchObject({ state: "Failed" })
        t.fake.clearWrites()
        yield* t.argo("a", readyStatus)
        yield* t.run
        expect(t.fake.writes.filter((w) => w.kind !== "Application" || w.manager === contract.fieldManager)).toHaveLength(0)
      }),
    ),
  )

  it.effect("the step deadline fails the rollout naming what never held", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "After", delay: expect.anything() }))
        yield* t.argo("a", staleStatus)
        yield* TestClock.adjust("10 minutes")
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "False", reason: "RolloutFailed" })
        expect(t.progressing()!.message).toContain(`Not ready at 0.2.0@${digestOf("a@0.2.0").slice(0, 19)} within 10m: sync status OutOfSync`)
      }),
    ),
  )

  /** `kubectl aicr revoke` (spec.revocation: a new generation) and the approval-guard's answer for that generation. */
  const revoke = (t: ReturnType<typeof setup>, revokedAt: string) =>
    Effect.gen(function* () {
      yield* t.fake.kube.patch(RuntimeRolloutKind, ROLLOUT, {
        type: "merge",
        body: { spec: { revocation: { revokedBy: "bob", reason: "stop", revokedAt } } },
      })
      const g = t.rollout().metadata.generation
      yield* t.fake.kube.patch(
        RuntimeRolloutKind,
        ROLLOUT,
        {
          type: "merge",
          body: {
            status: {
              conditions: [
                {
                  type: "Approved",
                  status: "False",
                  reason: "RolloutRevoked",
                  message: "Revoked by bob",
                  observedGeneration: g,
                  lastTransitionTime: revokedAt,
                },
              ],
            },
          },
        },
        { subresource: "status" },
      )
      return g
    })

  it.effect("revocation: the step in flight finishes, then Progressing=False/RolloutRevoked and nothing new starts", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const g = yield* revoke(t, at(1))
        yield* t.run
        // Reported again for the revocation's generation: the planner ends a revoked rollout only on this word.
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress", observedGeneration: g })
        yield* TestClock.adjust("5 seconds")
        yield* t.argo("a", readyStatus)
        yield* t.run
        expect(t.app("b")).toBeUndefined()
        expect(t.progressing()).toMatchObject({ status: "False", reason: "RolloutRevoked", observedGeneration: g })
        expect(t.progressing()!.message).toContain("step 2/3 b (Install) not started")
        // status.steps records it: the step in flight then finished, the later ones never started.
        const items = t.rollout().status!.steps!.items!
        const revoked = `the rollout was revoked by bob at ${at(1)}`
        expect(items.map((x) => [x.release, x.state, x.completedAt, x.message])).toEqual([
          ["a", "Ready", at(5), `In flight when ${revoked}; it finished: ready at ${items[0]!.readyAtRevision}`],
          ["b", "Pending", undefined, `Not started: ${revoked}`],
          ["c", "Pending", undefined, `Not started: ${revoked}`],
        ])
        expect(items[0]!.readyAtRevision).toBe(items[0]!.writtenRevision)
        // The same record on the next pass: nothing written.
        t.fake.clearWrites()
        yield* TestClock.adjust("1 minute")
        yield* t.run
        expect(t.fake.writes).toEqual([])
      }),
    ),
  )

  it.effect("revocation with no step in flight (the rollout was paused after its first step): every later step never started, none finished after it", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { paused: true } } })
        yield* t.argo("a", readyStatus)
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "False", reason: "Paused" })
        yield* TestClock.adjust("1 minute")
        yield* revoke(t, at(60))
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { paused: null } } })
        yield* t.run
        expect(t.app("b")).toBeUndefined()
        expect(t.progressing()).toMatchObject({ status: "False", reason: "RolloutRevoked" })
        const revoked = `the rollout was revoked by bob at ${at(60)}`
        expect(t.rollout().status!.steps!.items!.map((x) => [x.release, x.state, x.completedAt, x.message])).toEqual([
          ["a", "Ready", at(0), undefined],
          ["b", "Pending", undefined, `Not started: ${revoked}`],
          ["c", "Pending", undefined, `Not started: ${revoked}`],
        ])
      }),
    ),
  )

  it.effect("acknowledge: a manual step waits after it is ready until its acknowledgement", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ steps: [...stepsOf("Upgrade", ["a"], { verdict: "manual", acknowledge: true }), ...stepsOf("Upgrade", ["b", "c"])] })
        yield* t.run
        yield* t.argo("a", readyStatus)
        yield* t.run
        expect(t.rollout().status!.steps!.items![0]).toMatchObject({ state: "AwaitingAcknowledgement" })
        expect(t.progressing()).toMatchObject({ status: "False", reason: "AwaitingAcknowledgement" })
        expect(t.app("b")).toBeUndefined()
        yield* t.fake.kube.patch(RuntimeRolloutKind, ROLLOUT, {
          type: "merge",
          body: { spec: { acknowledgements: [{ step: "a", acknowledgedBy: "bob", at: "2026-12-02T10:00:02Z" }] } },
        })
        const g = t.rollout().metadata.generation
        yield* t.fake.kube.patch(
          RuntimeRolloutKind,
          ROLLOUT,
          {
            type: "merge",
            body: {
              status: {
                conditions: [
                  {
                    type: "Approved",
                    status: "True",
                    reason: "ApprovedByUser",
                    message: "ok",
                    observedGeneration: g,
                    lastTransitionTime: "2026-12-02T10:00:02Z",
                  },
                ],
              },
            },
          },
          { subresource: "status" },
        )
        yield* t.run
        expect(t.app("b")).toBeDefined()
      }),
    ),
  )

  it.effect("Remove steps delete with the resources finalizer and wait until the Application is gone", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ steps: stepsOf("Remove", ["c", "b"]) })
        for (const n of ["b", "c"]) {
          t.fake.seed(ArgoCD.Application, {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: {
              name: n,
              namespace: "argocd",
              labels: { "operator.aicr.run/runtime-uid": UID },
              finalizers: ["resources-finalizer.argocd.argoproj.io"],
            },
          })
        }
        yield* t.run
        expect(t.fake.writes.filter((w) => w.verb === "delete").map((w) => w.key)).toEqual(["argocd/c"])
        expect(t.app("c")!.metadata.deletionTimestamp).toBeDefined()
        yield* t.run
        expect(t.fake.writes.filter((w) => w.verb === "delete")).toHaveLength(1)
        expect(t.rollout().status!.steps!.items![0]).toMatchObject({ state: "WaitingForReady" })
        yield* t.fake.kube.patch(ArgoCD.Application, "argocd/c", { type: "merge", body: { metadata: { finalizers: null } } }) // Argo CD pruned
        yield* t.run
        expect(t.fake.writes.filter((w) => w.verb === "delete").map((w) => w.key)).toEqual(["argocd/c", "argocd/b"])
        yield* t.fake.kube.patch(ArgoCD.Application, "argocd/b", { type: "merge", body: { metadata: { finalizers: null } } })
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepsCompleted" })
      }),
    ),
  )

  it.effect("serves the Remove rollout of a runtime being deleted, without waiting for ValidationReady (nothing to validate)", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ rollout: false, runtime: { validation: { deployment: "Required" } } })
        const removal = aRollout(ROLLOUT, aPlan(CHAIN).plan, stepsOf("Remove", ["c"]))
        t.fake.seed(RuntimeRolloutKind, { ...removal, spec: { ...removal.spec, kind: "Remove" } } as RuntimeRollout)
        t.fake.seed(ArgoCD.Application, {
          apiVersion: "argoproj.io/v1alpha1",
          kind: "Application",
          metadata: {
            name: "c",
            namespace: "argocd",
            labels: { "operator.aicr.run/runtime-uid": UID },
            finalizers: ["resources-finalizer.argocd.argoproj.io"],
          },
        })
        // The planner's finalizer holds the runtime while it is being deleted.
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { metadata: { finalizers: ["operator.aicr.run/cleanup"] } } })
        yield* t.fake.kube.delete(ClusterRuntimeKind, "cluster")
        expect(t.runtime().metadata.deletionTimestamp).toBeDefined()
        yield* t.run
        expect(t.fake.writes.filter((w) => w.verb === "delete" && w.kind === "Application").map((w) => w.key)).toEqual(["argocd/c"])
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress" })
      }),
    ),
  )

  it.effect("suspendEngine turns automated sync off on every operator Application only; clearing it turns it back on", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.argo("a", readyStatus)
        yield* t.run
        t.fake.seed(ArgoCD.Application, {
          apiVersion: "argoproj.io/v1alpha1",
          kind: "Application",
          metadata: { name: "other", namespace: "argocd" },
          spec: { syncPolicy: { automated: {} } },
        } as never)
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { suspendEngine: true } } })
        t.fake.clearWrites()
        yield* t.run
        expect(t.appWrites().map((w) => [w.verb, w.key])).toEqual([
          ["patch", "argocd/a"],
          ["patch", "argocd/b"],
        ])
        for (const n of ["a", "b"]) expect(t.app(n)!.spec!.syncPolicy!.automated).toEqual({ enabled: false, prune: true, selfHeal: true })
        expect((t.app("other") as Application).spec!.syncPolicy!.automated).toEqual({})
        expect(t.runtime().status?.engine).toMatchObject({ applications: 2, suspended: 2 })
        expect(t.progressing()).toMatchObject({ status: "False", reason: "EngineSuspended" })
        t.fake.clearWrites()
        yield* t.run
        expect(t.appWrites()).toHaveLength(0)
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { suspendEngine: null } } })
        yield* t.run
        for (const n of ["a", "b"]) expect(t.app(n)!.spec!.syncPolicy!.automated).toEqual({ prune: true, selfHeal: true })
        expect(t.runtime().status?.engine).toMatchObject({ suspended: 0 })
      }),
    ),
  )

  it.effect("EngineSuspensionRefused: a sync operation in flight, then a refused patch; it clears once the suspension holds", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.argo("a", readyStatus)
        yield* t.run
        // b's sync is running when suspendEngine is set: the patch is written, yet Argo CD finishes that operation.
        yield* t.argo(
          "b",
          (a) => ({
            ...staleStatus(a),
            operationState: { phase: "Running", message: "waiting for healthy state of apps/Deployment/b", operation: { sync: { revision: "0.2.0" } } },
          }),
          { operation: { sync: { revision: "0.2.0" } } },
        )
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { suspendEngine: true } } })
        yield* t.run
        for (const n of ["a", "b"]) expect(t.app(n)!.spec!.syncPolicy!.automated!.enabled).toBe(false)
        expect(t.progressing()).toMatchObject({ status: "False", reason: "EngineSuspensionRefused" })
        const busy = t.runtime().status!.engine!
        expect(busy).toMatchObject({ applications: 2, suspended: 1 })
        expect(busy.suspensionRefused).toBe(
          "spec.suspendEngine is set but 1 of 2 Applications are not suspended: argocd/b: a sync operation is running at 0.2.0 (waiting for healthy state of apps/Deployment/b); Argo CD finishes it before automated sync stays off",
        )
        expect(t.progressing()!.message).toContain(busy.suspensionRefused)
        // The operation ends: the suspension holds.
        yield* t.argo("b", readyStatus, { operation: null })
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "False", reason: "EngineSuspended" })
        expect(t.runtime().status!.engine).toEqual({ namespace: "argocd", project: "aicr", applications: 2, suspended: 2 })
        // Resume (the rollout goes on: c is written), then suspend again while the API server refuses one patch (an
        // admission policy): reported, retried soon.
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { suspendEngine: null } } })
        yield* t.run
        expect(t.app("c")).toBeDefined()
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { suspendEngine: true } } })
        t.fake.failNext("Invalid", { verb: "patch", kind: ArgoCD.Application })
        t.fake.clearWrites()
        expect(yield* t.run).toEqual(Exit.succeed(Requeue.after(10_000)))
        expect(t.appWrites().map((w) => [w.key, w.result])).toEqual([
          ["argocd/a", "Invalid"],
          ["argocd/b", "ok"],
          ["argocd/c", "ok"],
        ])
        expect(t.app("a")!.spec!.syncPolicy!.automated!.enabled).toBeUndefined()
        expect(t.progressing()).toMatchObject({ status: "False", reason: "EngineSuspensionRefused" })
        expect(t.runtime().status!.engine).toMatchObject({
          applications: 3,
          suspended: 2,
          suspensionRefused:
            "spec.suspendEngine is set but 1 of 3 Applications are not suspended: argocd/a: the API server refused the suspension patch (Invalid): injected Invalid",
        })
        // The retry goes through: cleared.
        yield* t.run
        expect(t.app("a")!.spec!.syncPolicy!.automated!.enabled).toBe(false)
        expect(t.progressing()).toMatchObject({ status: "False", reason: "EngineSuspended" })
        expect(t.runtime().status!.engine!.suspensionRefused).toBeUndefined()
      }),
    ),
  )

  it.effect("Move: rewrites the Application in place with the new namespace; ready only once Argo CD compared it there", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.argo("a", readyStatus)
        yield* t.run
        yield* t.argo("b", readyStatus)
        yield* t.run
        yield* t.argo("c", readyStatus)
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepsCompleted" })
        // A new plan moves b to another namespace; chart and values stay the same.
        const moved = aPlan(CHAIN.map((r) => (r.name === "b" ? { ...r, namespace: "b-new" } : r)))
        for (const cm of moved.configMaps) t.fake.seed(Core.ConfigMap, cm as never)
        yield* t.fake.kube.patch(RuntimeRolloutKind, ROLLOUT, { type: "merge", body: { metadata: { labels: { "operator.aicr.run/outcome": "Succeeded" } } } })
        const stale = readyStatus(t.app("b")!)
        t.fake.seed(
          RuntimeRolloutKind,
          aRollout("cluster-abc-2", moved.plan, [{ release: "b", namespace: "b-new", action: "Move", from: "0.2.0", to: "0.2.0" }]),
        )
        t.fake.clearWrites()
        yield* t.run
        // b was created (its fields under the executor's Update entry): the apply at b's resourceVersion conflicts with
        // nobody but that entry, so it goes again with force, at the same resourceVersion.
        expect(t.appWrites().map((w) => [w.verb, w.key, w.result])).toEqual([
          ["apply", "argocd/b", "FieldManagerConflict"],
          ["apply", "argocd/b", "ok"],
        ])
        expect(t.app("b")!.spec!.destination).toEqual({ server: "https://kubernetes.default.svc", namespace: "b-new" })
        const second = () => t.fake.peek<RuntimeRollout>(RuntimeRolloutKind, "cluster-abc-2")!.status?.conditions?.find((c) => c.type === "Progressing")
        // Argo CD still shows b Synced and Healthy as compared in the old namespace: not ready.
        yield* t.argo("b", () => stale)
        yield* t.run
        expect(second()).toMatchObject({ status: "True", reason: "StepInProgress" })
        expect(second()!.message).toContain("Argo CD has not compared the written source and destination yet")
        expect(t.landed()).toHaveLength(1)
        yield* t.argo("b", readyStatus)
        yield* t.run
        expect(second()).toMatchObject({ status: "True", reason: "StepsCompleted" })
        expect(t.landed()).toHaveLength(1)
      }),
    ),
  )

  it.effect("NamespaceMissing: a step whose release namespace does not exist writes nothing, names the command, and starts once it exists", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ missingNamespaces: ["b"], settings: { componentPodSecurity: { b: "baseline" } } })
        yield* t.run
        yield* t.argo("a", readyStatus)
        yield* t.run
        const written = () =>
          t
            .appWrites()
            .filter((w) => w.verb === "apply" || w.verb === "create")
            .map((w) => w.key)
        expect(written()).toEqual(["argocd/a"])
        expect(t.progressing()).toMatchObject({ status: "False", reason: "NamespaceMissing" })
        expect(t.progressing()!.message).toBe(
          "step 2/3 b (Install) not started: namespace b does not exist (or is being deleted) and Argo CD does not create namespaces, so no Application is written into it; create it with its Pod Security labels: kubectl create namespace b && kubectl label namespace b pod-security.kubernetes.io/enforce=baseline pod-security.kubernetes.io/audit=baseline pod-security.kubernetes.io/warn=baseline (its level in the chart's namespaces.components), or set create: true for it there and upgrade the chart",
        )
        yield* t.fake.kube.create(Core.Namespace, {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "b", labels: { "pod-security.kubernetes.io/enforce": "baseline" } },
        })
        yield* t.run
        expect(written()).toEqual(["argocd/a", "argocd/b"])
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress" })
      }),
    ),
  )

  it.effect("MovedReleaseMissing: a Move step whose Application is not at its old location writes nothing", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ steps: [{ release: "a", namespace: "a-new", action: "Move", from: "0.2.0", to: "0.2.0" }] })
        yield* t.run
        expect(t.appWrites()).toHaveLength(0)
        expect(t.progressing()).toMatchObject({ status: "False", reason: "MovedReleaseMissing" })
        expect(t.progressing()!.message).toContain("Application argocd/a is not at its old location (it does not exist)")
      }),
    ),
  )

  // AICR 1.x readiness gates: FIXTURES shaped after the documented layout (research/aicr-newer.md §3; no 1.x bundle
  // or gate image runs here). The `<component>-readiness` release is its own step right after its component.
  const GATED: ReadonlyArray<Rel> = [
    { name: "gpu-operator", version: "v26.3.1" },
    {
      name: "gpu-operator-readiness",
      version: "0.1.0",
      namespace: "gpu-operator",
      readinessGate: { image: `ghcr.io/nvidia/aicr-gate@sha256:${"1".repeat(64)}`, timeoutSeconds: 5400 },
    },
    { name: "nvsentinel", version: "v1.1.0" },
  ]

  /** The component ready, the gate's Application written and synced, its Job running. */
  const gateRunning = (settings: Partial<ExecutorSettings> = {}) =>
    Effect.gen(function* () {
      const t = setup({ releases: GATED, settings })
      yield* t.run
      yield* t.argo("gpu-operator", readyStatus)
      yield* t.run
      yield* t.argo("gpu-operator-readiness", (a) => gateStatus(a, "Progressing"))
      return t
    })

  it.effect("readiness gate: its own step after the component, Pending until its Job completed, then Passed", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ releases: GATED })
        yield* t.run
        yield* t.argo("gpu-operator", readyStatus)
        yield* t.run
        expect(t.app("gpu-operator-readiness")!.spec!.destination.namespace).toBe("gpu-operator")
        expect(t.rollout().status!.steps!.items![1]).toMatchObject({ release: "gpu-operator-readiness", state: "WaitingForReady", gate: "Pending" })
        expect(t.rollout().status!.steps!.items![0]!.gate).toBeUndefined()
        // Synced at the revision, but the gate's Job still runs: not ready, nothing after it starts.
        yield* t.argo("gpu-operator-readiness", (a) => gateStatus(a, "Progressing"))
        yield* t.run
        expect(t.app("nvsentinel")).toBeUndefined()
        // A message-only change: written once the pacer's interval is over.
        yield* TestClock.adjust("10 seconds")
        yield* t.run
        expect(t.progressing()!.message).toContain(
          `step 2/3 gpu-operator-readiness (Install): Waiting for ${GATE} (the readiness gate's Job completes only once the gate passed): health Progressing`,
        )
        yield* t.argo("gpu-operator-readiness", (a) => gateStatus(a, "Healthy"))
        yield* t.run
        expect(t.rollout().status!.steps!.items![1]).toMatchObject({ state: "Ready", gate: "Passed" })
        expect(t.app("nvsentinel")).toBeDefined()
      }),
    ),
  )

  it.effect("readiness gate: a failed gate Job fails the step at once with Argo CD's message; the deadline is max-wait + 5 m", () =>
    at0(
      Effect.gen(function* () {
        const t = yield* gateRunning()
        // 90 m (the plan's max-wait) + 5 m: still waiting at 94 m, whereas --step-timeout (10 m here) has long passed.
        yield* TestClock.adjust("94 minutes")
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress" })
        yield* t.argo("gpu-operator-readiness", (a) => gateStatus(a, "Degraded"))
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "False", reason: "RolloutFailed" })
        expect(t.progressing()!.message).toBe(
          `step 2/3 gpu-operator-readiness (Install) failed: AICR readiness gate gpu-operator-readiness failed at ${GATE}: Job gpu-operator/gpu-operator-readiness-gate failed: Job has reached the specified backoff limit`,
        )
        expect(t.rollout().status!.steps!.items![1]).toMatchObject({ state: "Failed", gate: "Failed" })
        expect(t.app("nvsentinel")).toBeUndefined()
      }),
    ),
  )

  it.effect("readiness gate: not ready by max-wait + 5 m fails the step; --release-step-timeout overrides it", () =>
    at0(
      Effect.gen(function* () {
        const t = yield* gateRunning()
        yield* TestClock.adjust("96 minutes")
        yield* t.run
        expect(t.progressing()!.message).toBe(`step 2/3 gpu-operator-readiness (Install) failed: Not ready at ${GATE} within 95m: health Progressing`)
        const own = yield* gateRunning({ releaseTimeoutsMs: { "gpu-operator-readiness": 120_000 } })
        yield* TestClock.adjust("3 minutes")
        yield* own.run
        expect(own.progressing()!.message).toContain(`failed: Not ready at ${GATE} within 2m`)
      }),
    ),
  )

  it.effect("EngineNotResponding: an Application Argo CD stopped comparing holds new steps back until it compares again", () =>
    at0(
      Effect.gen(function* () {
        const t = setup({ settings: { engineStaleAfterMs: 60_000 } })
        yield* t.run
        yield* t.argo("a", (a) => ({ ...readyStatus(a), reconciledAt: "2026-12-02T10:00:00Z" }))
        yield* TestClock.adjust("2 minutes")
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "After", delay: expect.anything() }))
        expect(t.app("b")).toBeUndefined()
        expect(t.runtime().status?.conditions?.find((c) => c.type === "EngineAvailable")).toMatchObject({ status: "False", reason: "EngineNotResponding" })
        expect(t.runtime().status!.conditions!.find((c) => c.type === "EngineAvailable")!.message).toContain(
          "Application argocd/a was last compared at 2026-12-02T10:00:00Z, more than 60s ago",
        )
        expect(t.progressing()).toMatchObject({ status: "False", reason: "EngineNotResponding" })
        yield* t.argo("a", (a) => ({ ...readyStatus(a), reconciledAt: "2026-12-02T10:02:00Z" }))
        yield* t.run
        expect(t.app("b")).toBeDefined()
        expect(t.runtime().status?.conditions?.find((c) => c.type === "EngineAvailable")).toMatchObject({ status: "True" })
      }),
    ),
  )

  it.effect("PlanUnreadable: a target plan that is missing stops the rollout with the reason", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        yield* t.fake.kube.delete(Core.ConfigMap, `${NAMESPACE}/aicr-plan-${t.plan.desiredStateDigest.slice(7, 39)}`)
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "False", reason: "PlanUnreadable" })
        expect(t.appWrites()).toHaveLength(0)
      }),
    ),
  )

  it.effect("Adopt: relabels each Application of the adopted runtime once, keeping its live spec, and only when spec.adoption names it", () =>
    at0(
      Effect.gen(function* () {
        const OLD = "11111111-1111-4111-8111-111111111111"
        const t = setup()
        for (const r of CHAIN) {
          yield* t.run
          yield* t.argo(r.name, readyStatus)
        }
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepsCompleted" })
        // The operator's namespace is lost: the plan and content ConfigMaps go; the runtime that wrote the stack is
        // gone too (its UID stays on the Applications). What is left is rebuilt into an Adoption plan (no values).
        yield* t.fake.kube.patch(RuntimeRolloutKind, ROLLOUT, { type: "merge", body: { metadata: { labels: { [LABEL_OUTCOME]: "Succeeded" } } } })
        for (const r of CHAIN)
          yield* t.fake.kube.patch(
            ArgoCD.Application,
            `argocd/${r.name}`,
            { type: "merge", body: { metadata: { labels: { "operator.aicr.run/runtime-uid": OLD } } } },
            { fieldManager: "aicr-step-executor" },
          )
        const cms = yield* t.fake.kube.list(Core.ConfigMap, { namespace: NAMESPACE })
        for (const cm of cms.items) yield* t.fake.kube.delete(Core.ConfigMap, `${NAMESPACE}/${cm.metadata.name}`)
        const adopted = { ...t.plan, source: "Adoption" as const, content: [] }
        t.fake.seed(Core.ConfigMap, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: planConfigMapName(adopted.desiredStateDigest),
            namespace: NAMESPACE,
            labels: { [LABEL_ROLE]: ROLE_PLAN },
            annotations: { [ANNOTATION_DESIRED_STATE_DIGEST]: adopted.desiredStateDigest },
          },
          immutable: true,
          data: { [PLAN_DATA_KEY]: encodePlan(adopted) },
        } as never)
        const base = aRollout(
          "cluster-adopt-1",
          adopted,
          stepsOf(
            "Adopt",
            CHAIN.map((r) => r.name),
          ),
        )
        t.fake.seed(RuntimeRolloutKind, {
          ...base,
          metadata: { ...base.metadata, creationTimestamp: "2026-12-02T10:05:00Z" },
          spec: { ...base.spec, kind: "Adopt", fromDigest: adopted.desiredStateDigest },
        } as never)
        const specs = Object.fromEntries(CHAIN.map((r) => [r.name, structuredClone(t.app(r.name)!.spec)]))
        const adoptProgress = () =>
          t.fake.peek<RuntimeRollout>(RuntimeRolloutKind, "cluster-adopt-1")!.status?.conditions?.find((c) => c.type === "Progressing")
        // Without spec.adoption the old runtime's Applications are foreign.
        t.fake.clearWrites()
        yield* t.run
        expect(t.appWrites()).toHaveLength(0)
        expect(adoptProgress()).toMatchObject({ status: "False", reason: "ForeignObject" })
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { adoption: { fromRuntimeUID: OLD } } } })
        // A hand edit since the plan was rebuilt stops the step that would take that Application over.
        yield* t.fake.kube.patch(
          ArgoCD.Application,
          "argocd/b",
          { type: "merge", body: { spec: { source: { helm: { valuesObject: { message: "edited" } } } } } },
          { fieldManager: "kubectl-edit" },
        )
        for (let i = 0; i < 4; i++) yield* t.run
        expect(adoptProgress()).toMatchObject({ status: "False", reason: "InventoryDrift" })
        expect(adoptProgress()!.message).toBe(
          "step 2/3 b (Adopt): Application argocd/b cannot be adopted: its spec was changed after the operator wrote it; the planner rebuilds the plan once the rollout ends",
        )
        const executorWrites = () =>
          t
            .landed()
            .filter((w) => w.manager === contract.fieldManager)
            .map((w) => [w.verb, w.key])
        expect(executorWrites()).toEqual([["apply", "argocd/a"]])
        yield* t.fake.kube.patch(
          ArgoCD.Application,
          "argocd/b",
          { type: "merge", body: { spec: { source: { helm: { valuesObject: { message: "b-0.2.0" } } } } } },
          { fieldManager: "kubectl-edit" },
        )
        for (let i = 0; i < 4; i++) yield* t.run
        expect(adoptProgress()).toMatchObject({ status: "True", reason: "StepsCompleted" })
        expect(executorWrites()).toEqual([
          ["apply", "argocd/a"],
          ["apply", "argocd/b"],
          ["apply", "argocd/c"],
        ])
        for (const r of CHAIN) {
          const a = t.app(r.name)!
          expect(a.metadata.labels).toMatchObject({ "operator.aicr.run/runtime-uid": UID, "operator.aicr.run/plan": adopted.desiredStateDigest.slice(7, 39) })
          // The live values were kept (the content ConfigMap holding them is gone), and nothing else moved.
          expect(a.spec).toEqual(specs[r.name])
        }
        t.fake.clearWrites()
        yield* t.run
        expect(t.appWrites()).toHaveLength(0)
      }),
    ),
  )

  it.effect("expectations: a pass waits until the caches show its own write, so a lagging watch repeats no Application write", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        // The Application watch holds its events (and bookmarks) while `holding`, as a slow watch would.
        let holding = false
        const held: Array<Effect.Effect<void>> = []
        const lagging: KubeShape = {
          ...t.fake.kube,
          watch: (kind, options, onEvent) =>
            t.fake.kube.watch(kind, options, (e) =>
              kind.kind === "Application" && holding ? Effect.sync(() => void held.push(onEvent(e as never))) : onEvent(e as never),
            ),
        }
        const { caches } = yield* makeCaches(settings).pipe(Effect.provide(Layer.succeed(Kube)(lagging)))
        const all = Object.values(caches) as ReadonlyArray<Informer<KubeObject>>
        const others = all.filter((i) => i !== (caches.applications as unknown))
        yield* settle(t.fake, all)
        const events = eventRecorderLayer({ controller: "operator.aicr.run/step-executor", instance: "test" }).pipe(Layer.provide(t.fake.layer))
        const plans = makePlanReads()
        const pass = (expectations: ReturnType<typeof makeExpectations>) =>
          reconcile("cluster").pipe(
            Effect.provide(Layer.mergeAll(t.fake.layer, events)),
            Effect.provideService(ExecutorConfig, settings),
            Effect.provideService(Caches, caches),
            Effect.provideService(Expectations, expectations),
            Effect.provideService(StatusPacer, makeStatusPacer()),
            Effect.provideService(PlanReads, plans),
            Effect.exit,
          )
        holding = true
        const kept = makeExpectations()
        yield* pass(kept)
        expect(t.appWrites().map((w) => w.key)).toEqual(["argocd/a"])
        yield* settle(t.fake, others)
        expect(caches.applications.get("argocd/a")._tag).toBe("None")
        // The cache has not shown Application a yet: the next pass decides nothing and writes nothing.
        expect(yield* pass(kept)).toEqual(Exit.succeed(Requeue.after(5_000)))
        expect(t.appWrites().map((w) => w.key)).toEqual(["argocd/a"])
        // A restarted executor whose cache was filled before the write landed (no expectation: a new process) decides to
        // write the Application again; it was decided on an absent Application, so the API server refuses it.
        const repeated = yield* pass(makeExpectations())
        expect(Exit.isFailure(repeated) && String(repeated.cause)).toContain("AlreadyExists")
        expect(t.appWrites().map((w) => [w.verb, w.key, w.result])).toEqual([
          ["create", "argocd/a", "ok"],
          ["create", "argocd/a", "AlreadyExists"],
        ])
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress" })
        holding = false
        yield* Effect.forEach(held.splice(0), (e) => e, { discard: true })
        yield* settle(t.fake, all)
        t.fake.clearWrites()
        yield* pass(kept)
        expect(t.appWrites()).toHaveLength(0)
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress" })
      }),
    ),
  )

  it.effect(
    "killed between its write and the cache seeing it: a successor deciding from a cache filled before the write is refused (Conflict), the upgrade lands once",
    () =>
      at0(
        Effect.gen(function* () {
          const t = setup({ releases: [{ name: "a", version: "0.2.0" }], steps: stepsOf("Install", ["a"]) })
          yield* t.run
          yield* t.argo("a", readyStatus)
          yield* t.run
          expect(t.progressing()).toMatchObject({ status: "True", reason: "StepsCompleted" })
          yield* t.fake.kube.patch(RuntimeRolloutKind, ROLLOUT, { type: "merge", body: { metadata: { labels: { [LABEL_OUTCOME]: "Succeeded" } } } })
          const next = aPlan([{ name: "a", version: "0.3.0" }])
          for (const cm of next.configMaps) t.fake.seed(Core.ConfigMap, cm as never)
          t.fake.seed(RuntimeRolloutKind, aRollout("cluster-abc-2", next.plan, stepsOf("Upgrade", ["a"], { from: "0.2.0", to: "0.3.0" })))
          // Each process below has its own caches, filled now (Application a at the resourceVersion before the upgrade);
          // the Application watch then holds its events, as a watch that has not delivered the write yet.
          let holding = false
          const held: Array<Effect.Effect<void>> = []
          const lagging: KubeShape = {
            ...t.fake.kube,
            watch: (kind, options, onEvent) =>
              t.fake.kube.watch(kind, options, (e) =>
                kind.kind === "Application" && holding ? Effect.sync(() => void held.push(onEvent(e as never))) : onEvent(e as never),
              ),
          }
          const process = () =>
            Effect.gen(function* () {
              const { caches } = yield* makeCaches(settings).pipe(Effect.provide(Layer.succeed(Kube)(lagging)))
              const informers = Object.values(caches) as ReadonlyArray<Informer<KubeObject>>
              yield* settle(t.fake, informers)
              const events = eventRecorderLayer({ controller: "operator.aicr.run/step-executor", instance: "test" }).pipe(Layer.provide(t.fake.layer))
              return {
                informers,
                pass: reconcile("cluster").pipe(
                  Effect.provide(Layer.mergeAll(t.fake.layer, events)),
                  Effect.provideService(ExecutorConfig, settings),
                  Effect.provideService(Caches, caches),
                  Effect.provideService(Expectations, makeExpectations()),
                  Effect.provideService(StatusPacer, makeStatusPacer()),
                  Effect.provideService(PlanReads, makePlanReads()),
                  Effect.exit,
                ),
              }
            })
          const first = yield* process()
          const successor = yield* process()
          const before = t.app("a")!.metadata.resourceVersion
          holding = true
          t.fake.clearWrites()
          // The first process writes the upgrade at the resourceVersion it saw, and is "killed" before its cache shows it.
          yield* first.pass
          // (a was created: the apply conflicts with the executor's own Update entry first, then goes with force.)
          expect(t.appWrites().map((w) => [w.verb, w.key, w.result])).toEqual([
            ["apply", "argocd/a", "FieldManagerConflict"],
            ["apply", "argocd/a", "ok"],
          ])
          expect(t.app("a")!.spec!.source.targetRevision).toBe(digestOf("a@0.3.0"))
          // Its successor's cache shows Application a as before the write: it decides the same write, at the old
          // resourceVersion, and the API server refuses it.
          const again = yield* successor.pass
          expect(Exit.isFailure(again) && String(again.cause)).toContain("Conflict")
          expect((t.appWrites().at(-1)!.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe(before)
          expect(t.appWrites().at(-1)).toMatchObject({ verb: "apply", key: "argocd/a", result: "Conflict" })
          expect(t.landed().map((w) => [w.verb, w.key])).toEqual([["apply", "argocd/a"]])
          // Once the watch delivers the write, the successor waits for Argo CD and writes nothing.
          holding = false
          yield* Effect.forEach(held.splice(0), (e) => e, { discard: true })
          yield* settle(t.fake, successor.informers)
          t.fake.clearWrites()
          yield* successor.pass
          expect(t.appWrites()).toHaveLength(0)
          expect(t.fake.peek<RuntimeRollout>(RuntimeRolloutKind, "cluster-abc-2")!.status?.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
            status: "True",
            reason: "StepInProgress",
          })
        }),
      ),
  )

  it.effect("a transient failure goes back to the driver untouched; a defect writes InternalError on both rooms and one Warning Event per transition", () =>
    at0(
      Effect.gen(function* () {
        const t = setup()
        t.fake.failNext("Unavailable", { verb: "create", kind: ArgoCD.Application })
        const transient = yield* t.run
        expect(Exit.isFailure(transient) && String(transient.cause)).toContain("Unavailable")
        expect(t.progressing()).toBeUndefined()
        t.fake.failNext("Forbidden", { verb: "create", kind: ArgoCD.Application, times: 2 })
        for (let i = 0; i < 2; i++) {
          const exit = yield* t.run
          expect(Exit.isFailure(exit) && String(exit.cause)).toContain("InternalError")
          expect(t.progressing()).toMatchObject({ status: "Unknown", reason: "InternalError", message: "Please check controller logs for errors" })
          expect(t.runtime().status?.conditions?.find((c) => c.type === "EngineAvailable")).toMatchObject({ status: "Unknown", reason: "InternalError" })
          expect(t.fake.writesTo(Core.Event).filter((w) => w.verb === "create")).toHaveLength(1)
        }
        expect(t.fake.writesTo(Core.Event)[0]!.body as { reason: string; type: string }).toMatchObject({ type: "Warning", reason: "InternalError" })
        yield* t.run
        expect(t.progressing()).toMatchObject({ status: "True", reason: "StepInProgress" })
        expect(t.runtime().status?.conditions?.find((c) => c.type === "EngineAvailable")).toMatchObject({ status: "True", reason: "EngineReady" })
      }),
    ),
  )
})
