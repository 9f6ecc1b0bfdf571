// reconcile() against FakeKube and a fake registry: the writes it makes, for the five properties every component
// suite proves (design/style.md §B.7), plus the mirror's own paths.
import { ClusterRuntimeKind, Core, type ClusterRuntime } from "@aicr/api"
import { eventRecorderLayer } from "@aicr/kube"
import { makeFakeKube } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Requeue } from "@aicr/runtime"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { Registry } from "../src/act"
import { MirrorConfig, type MirrorSettings } from "../src/config"
import { contract } from "../src/contract"
import {
  ChartSourceUnsupportedError,
  ConflictError,
  ContentInvalidError,
  ContentTooLargeError,
  type MirrorError,
  RegistryCredentialsUnavailableError,
  RegistryUnavailableError,
  ResolutionMissingError,
  UnauthorizedError,
} from "../src/errors"
import { reconcile } from "../src/reconcile"
import { LastVerification } from "../src/verify"
import { aRuntime, contentConfigMap, contentData, INPUT_DIGEST, NAMESPACE, OTHER_INPUT_DIGEST, type RuntimeState } from "./support/fixtures"
import { makeFakeRegistry } from "./support/fake-registry"

const settings: MirrorSettings = {
  prefix: { registry: "registry.example", prefix: "aicr/cluster" },
  registry: "oci://registry.example/aicr/cluster",
  plainHttp: [],
  dockerConfig: undefined,
  namespace: NAMESPACE,
  rewrites: [],
  concurrency: 4,
  verifyIntervalMs: 600_000,
}
/** What a complete mirror's pass asks for: look again (check the recorded tags) after the verify interval. */
const RECHECK = Requeue.after(settings.verifyIntervalMs)
const T0 = Date.parse("2026-12-02T10:00:00Z")

const setup = (state: RuntimeState = {}, options: { content?: boolean } = {}) => {
  const fake = makeFakeKube({ listMapKeys: { "ClusterRuntime.operator.aicr.run": { "status.conditions": "type", "status.mirror.charts": "release" } } })
  fake.seed(ClusterRuntimeKind, aRuntime(state))
  if (options.content !== false) fake.seed(Core.ConfigMap, contentConfigMap(state.inputDigest ?? INPUT_DIGEST))
  const registry = makeFakeRegistry()
  const events = eventRecorderLayer({ controller: "operator.aicr.run/registry-mirror", instance: "test" }).pipe(Layer.provide(fake.layer))
  // The process's memory of its last check; `restart` forgets it, as a new process would.
  let last = Effect.runSync(LastVerification.make)
  const run = Effect.suspend(() =>
    reconcile("cluster").pipe(
      Effect.provide(Layer.mergeAll(fake.layer, events)),
      Effect.provideService(Registry, registry.service),
      Effect.provideService(MirrorConfig, settings),
      Effect.provideService(LastVerification, last),
      Effect.exit,
    ),
  )
  const restart = () => void (last = Effect.runSync(LastVerification.make))
  const statusWrites = () => fake.writesTo(ClusterRuntimeKind, "cluster").filter((w) => w.subresource === "status")
  const runtime = () => fake.peek<ClusterRuntime>(ClusterRuntimeKind, "cluster")!
  const mirrored = () => runtime().status?.conditions?.find((c) => c.type === "Mirrored")
  const warnings = () => fake.writes.filter((w) => w.kind === "Event" && w.verb === "create").map((w) => w.body as { reason: string; type: string })
  return { fake, registry, run, restart, statusWrites, runtime, mirrored, warnings, events }
}

/** Sets the clock to T0 first: conditions then carry a real date. */
const at = <A, E, R>(body: Effect.Effect<A, E, R>) => TestClock.setTime(T0).pipe(Effect.andThen(body))

describe("registry-mirror reconcile", () => {
  it.effect("first visit: sets Mirrored (False/AwaitingResolution) before anything is resolved", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ resolved: "missing", inputDigest: undefined }, { content: false })
        const exit = yield* t.run
        expect(exit).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.statusWrites()).toHaveLength(1)
        expect(t.mirrored()).toEqual({
          type: "Mirrored",
          status: "False",
          observedGeneration: 1,
          lastTransitionTime: "2026-12-02T10:00:00Z",
          reason: "AwaitingResolution",
          message: "Waiting for Resolved=True at generation 1: Resolved is Unknown/NotYetReported",
        })
        expect(t.registry.calls()).toBe(0)
      }),
    ),
  )

  it.effect("mirrors a current resolution: Mirrored=True and status.mirror with every artifact digest-pinned", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        expect(yield* t.run).toEqual(Exit.succeed(RECHECK))
        expect(t.registry.calls()).toBe(1)
        expect(t.mirrored()).toMatchObject({
          status: "True",
          reason: "ContentMirrored",
          observedGeneration: 1,
          message: `Mirrored 13 charts, 3 wrapper charts and the bundle of input ${INPUT_DIGEST.slice(7, 19)}`,
        })
        const mirror = t.runtime().status!.mirror!
        expect(mirror.inputDigest).toBe(INPUT_DIGEST)
        expect(mirror.bundle).toMatch(/^registry\.example\/aicr\/cluster\/bundles\/cluster:input-[a-f0-9]{32}@sha256:[a-f0-9]{64}$/)
        expect(mirror.charts!.map((c) => c.release)).toEqual([...mirror.charts!.map((c) => c.release)].sort())
        expect(mirror.charts!.find((c) => c.release === "cert-manager")!.ref).toMatch(
          /^registry\.example\/aicr\/cluster\/charts\/cert-manager:v1\.17\.2@sha256:/,
        )
        expect(mirror.charts!.find((c) => c.release === "gpu-operator-manifests")!.ref).toContain("/wrappers/gpu-operator:0.0.0-aicr-")
      }),
    ),
  )

  it.effect("idempotence: a second pass with nothing changed writes nothing and copies nothing", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        t.fake.clearWrites()
        yield* TestClock.adjust("1 hour")
        expect(yield* t.run).toEqual(Exit.succeed(RECHECK))
        expect(t.fake.writes).toHaveLength(0)
        expect(t.registry.calls()).toBe(1)
        expect(t.registry.checks()).toBe(1) // the interval passed: the recorded tags were checked, and found intact
      }),
    ),
  )

  it.effect("spec.paused: no new mirror starts (Mirrored=False/Mirroring, not a stall, no Warning); a current mirror stays True; clearing it mirrors", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        // The spec edit bumps the generation; the resolver has written Resolved=True for it (inputs unchanged).
        const paused = (p: boolean) => {
          const generation = t.runtime().metadata.generation! + 1
          const next = aRuntime({ generation, mirror: t.runtime().status?.mirror })
          t.fake.seed(ClusterRuntimeKind, {
            ...next,
            spec: { ...next.spec, paused: p },
            status: {
              ...next.status,
              conditions: [...(t.runtime().status?.conditions ?? []).filter((c) => c.type !== "Resolved"), ...next.status!.conditions!],
            },
          })
          expect(t.runtime().metadata.generation).toBe(generation)
        }
        paused(true)
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.registry.calls()).toBe(0)
        expect(t.mirrored()).toMatchObject({
          status: "False",
          reason: "Mirroring",
          message: `spec.paused is set: input ${INPUT_DIGEST.slice(7, 19)} is not mirrored until it is cleared`,
        })
        expect(t.runtime().status?.mirror).toBeUndefined()
        expect(t.warnings()).toEqual([])
        paused(false)
        yield* t.run
        expect(t.registry.calls()).toBe(1)
        expect(t.mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
        // Paused again with the mirror current: nothing to start, Mirrored stays True.
        paused(true)
        yield* t.run
        expect(t.mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
        expect(t.registry.calls()).toBe(1)
      }),
    ),
  )

  it.effect("idempotence while waiting: a repeated wait writes nothing", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ resolved: { status: "False" } })
        yield* t.run
        t.fake.clearWrites()
        yield* t.run
        expect(t.fake.writes).toHaveLength(0)
      }),
    ),
  )

  it.effect("staleness: a True Resolved written for an older generation is treated as Unknown", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        // A user edits the spec: generation 2, while Resolved still says True for generation 1.
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { intent: "inference" } } })
        expect(t.runtime().metadata.generation).toBe(2)
        yield* t.run
        expect(t.registry.calls()).toBe(0)
        expect(t.mirrored()).toMatchObject({
          status: "False",
          reason: "AwaitingResolution",
          observedGeneration: 2,
          message: "Waiting for Resolved=True at generation 2: Resolved is Unknown/Stale",
        })
      }),
    ),
  )

  it.effect("room: the apply carries only Mirrored and status.mirror, as aicr-registry-mirror, without force", () =>
    at(
      Effect.gen(function* () {
        const t = setup({
          extraConditions: [
            { type: "Ready", status: "False", observedGeneration: 1, lastTransitionTime: "2026-12-01T00:00:00Z", reason: "NoActivePlan", message: "" },
          ],
        })
        yield* t.run
        const [w] = t.statusWrites()
        expect(w).toMatchObject({ verb: "apply", manager: contract.fieldManager, force: false, result: "ok" })
        const body = w!.body as { apiVersion: string; kind: string; metadata: object; status: Record<string, unknown> }
        expect(Object.keys(body).sort()).toEqual(["apiVersion", "kind", "metadata", "status"])
        expect(body.metadata).toEqual({ name: "cluster" })
        expect(Object.keys(body.status).sort()).toEqual(["conditions", "mirror"])
        expect((body.status["conditions"] as Array<{ type: string }>).map((c) => c.type)).toEqual(["Mirrored"])
        // Other writers' conditions stay on the object, untouched.
        expect(
          t
            .runtime()
            .status!.conditions!.map((c) => c.type)
            .sort(),
        ).toEqual(["Mirrored", "Ready", "Resolved"])
        expect(t.fake.writes.every((x) => x.kind === "ClusterRuntime" && x.subresource === "status")).toBe(true)
      }),
    ),
  )

  it.effect("mirrors again when the resolution changes, keeping Mirrored's transition time while it stays True", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const before = t.mirrored()!
        t.fake.seed(Core.ConfigMap, contentConfigMap(OTHER_INPUT_DIGEST, contentData()))
        const rt = t.runtime()
        t.fake.seed(ClusterRuntimeKind, {
          ...rt,
          status: {
            ...rt.status,
            resolution: { ...rt.status!.resolution!, inputDigest: OTHER_INPUT_DIGEST, contentConfigMap: contentConfigMap(OTHER_INPUT_DIGEST).metadata.name },
          },
        })
        yield* TestClock.adjust("1 minute")
        yield* t.run
        expect(t.registry.calls()).toBe(2)
        expect(t.runtime().status!.mirror!.inputDigest).toBe(OTHER_INPUT_DIGEST)
        expect(t.mirrored()).toMatchObject({
          status: "True",
          lastTransitionTime: before.lastTransitionTime,
          message: expect.stringContaining(OTHER_INPUT_DIGEST.slice(7, 19)),
        })
      }),
    ),
  )

  it.effect("rebuilds status.mirror after it was lost, by mirroring again (the registry already has everything)", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const first = t.runtime().status!.mirror
        const rt = t.runtime()
        t.fake.seed(ClusterRuntimeKind, { ...rt, status: { conditions: rt.status!.conditions, resolution: rt.status!.resolution } })
        yield* t.run
        expect(t.registry.calls()).toBe(2)
        expect(t.runtime().status!.mirror).toEqual(first)
      }),
    ),
  )

  describe("the recorded tags, checked in the registry (a registry has no watch)", () => {
    const chartTag = (t: ReturnType<typeof setup>, release: string) => {
      const ref = t.runtime().status!.mirror!.charts!.find((c) => c.release === release)!.ref
      return { reference: ref.slice(0, ref.indexOf("@")), digest: ref.slice(ref.indexOf("@") + 1) }
    }
    const MOVED = `sha256:${"e".repeat(64)}`

    it.effect("checks on the first pass after a start and after the interval, not on every pass in between", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          yield* t.run // mirrors: the tags were just written, nothing to check
          expect(t.registry.checks()).toBe(0)
          yield* TestClock.adjust("9 minutes")
          yield* t.run
          expect(t.registry.checks()).toBe(0)
          yield* TestClock.adjust("1 minute")
          expect(yield* t.run).toEqual(Exit.succeed(RECHECK))
          expect(t.registry.checks()).toBe(1)
          yield* t.run
          expect(t.registry.checks()).toBe(1)
          t.restart()
          yield* t.run
          expect(t.registry.checks()).toBe(2)
          expect(t.registry.calls()).toBe(1)
        }),
      ),
    )

    it.effect(
      "a tag moved under a recorded release: Mirrored=False/Conflict names the release, the tag and both digests, pushes nothing back; restored, it clears",
      () =>
        at(
          Effect.gen(function* () {
            const t = setup()
            yield* t.run
            const mirror = t.runtime().status!.mirror
            const gpu = chartTag(t, "gpu-operator")
            t.registry.tags.set(gpu.reference, MOVED)
            t.restart()
            const exit = yield* t.run
            expect(exit).toEqual(Exit.succeed(RECHECK))
            expect(t.mirrored()).toMatchObject({ status: "False", reason: "Conflict" })
            expect(t.mirrored()!.message).toBe(
              `Release gpu-operator: tag ${gpu.reference} now holds ${MOVED}, not ${gpu.digest} as mirrored for input ${INPUT_DIGEST.slice(7, 19)}; ` +
                "deployed releases stay at the recorded digest, but no new plan is composed until the tag holds it again; " +
                `the mirror never overwrites a tag: find who pushed it, then restore it with oras tag ${gpu.reference.slice(0, gpu.reference.lastIndexOf(":"))}@${gpu.digest} ${gpu.reference.slice(gpu.reference.lastIndexOf(":") + 1)}`,
            )
            expect(t.registry.tags.get(gpu.reference)).toBe(MOVED)
            expect(t.registry.calls()).toBe(1)
            expect(t.runtime().status!.mirror).toEqual(mirror)
            expect(t.warnings()).toEqual([expect.objectContaining({ type: "Warning", reason: "Conflict", action: "Mirror" })])
            // Still moved: checked again on the next pass, nothing written.
            t.fake.clearWrites()
            yield* t.run
            expect(t.registry.checks()).toBe(2)
            expect(t.fake.writes).toHaveLength(0)
            // Restored by hand (oras tag): the next check finds it; Mirrored is True again.
            t.registry.tags.set(gpu.reference, gpu.digest)
            expect(yield* t.run).toEqual(Exit.succeed(RECHECK))
            expect(t.mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
            expect(t.registry.calls()).toBe(1)
          }),
        ),
    )

    it.effect("several moved tags: the first is named with both digests, the others listed", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          yield* t.run
          for (const r of ["gpu-operator", "cert-manager"]) t.registry.tags.set(chartTag(t, r).reference, MOVED)
          t.restart()
          yield* t.run
          expect(t.mirrored()).toMatchObject({
            reason: "Conflict",
            message: expect.stringMatching(/^Release cert-manager: tag .*\(and 1 more: gpu-operator\)/),
          })
        }),
      ),
    )

    it.effect("a recorded tag that is gone is pushed again from the resolution (no overwrite); Mirrored stays True", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          yield* t.run
          const gpu = chartTag(t, "gpu-operator")
          t.registry.tags.delete(gpu.reference)
          t.restart()
          t.fake.clearWrites()
          expect(yield* t.run).toEqual(Exit.succeed(RECHECK))
          expect(t.registry.calls()).toBe(2)
          expect(t.registry.tags.get(gpu.reference)).toBeDefined()
          expect(t.mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
        }),
      ),
    )

    it.effect("a check the registry does not answer is shown like a failed mirror, and checked again", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          yield* t.run
          t.restart()
          t.registry.failNextCheck(new RegistryUnavailableError({ registry: "registry.example", cause: "HTTP 503", message: "HEAD answered 503" }))
          const exit = yield* t.run
          expect(Exit.isFailure(exit) && exit.cause.toString()).toContain("RetryAfterTransientFailure")
          expect(t.mirrored()).toMatchObject({
            status: "False",
            reason: "Mirroring",
            message: `Checking the mirror of input ${INPUT_DIGEST.slice(7, 19)}: retrying after a transient failure: registry.example is unavailable (HTTP 503)`,
          })
          t.registry.failNextCheck(
            new UnauthorizedError({ registry: "registry.example", message: "The runtime registry registry.example refused the check: unauthorized" }),
          )
          expect(yield* t.run).toEqual(Exit.succeed(RECHECK))
          expect(t.mirrored()).toMatchObject({ status: "False", reason: "Unauthorized" })
          yield* t.run
          expect(t.registry.checks()).toBe(3)
          expect(t.mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
          expect(t.registry.calls()).toBe(1)
        }),
      ),
    )
  })

  describe("error mapping", () => {
    const terminal: Array<{ error: MirrorError; status: string; reason: string; requeue: object }> = [
      {
        error: new UnauthorizedError({ registry: "registry.example", message: "The runtime registry registry.example refused the push" }),
        status: "False",
        reason: "Unauthorized",
        requeue: { _tag: "After" },
      },
      {
        error: new RegistryCredentialsUnavailableError({ path: "/x", message: "Registry credentials /x cannot be read: ENOENT" }),
        status: "False",
        reason: "RegistryCredentialsUnavailable",
        requeue: { _tag: "After" },
      },
      {
        error: new ConflictError({ reference: "r/a:1", existing: "sha256:a", wanted: "sha256:b", message: "Tag r/a:1 already holds sha256:a, not sha256:b" }),
        status: "False",
        reason: "Conflict",
        requeue: { _tag: "After" },
      },
      {
        error: new ChartSourceUnsupportedError({ release: "cert-manager", message: "Release cert-manager: chart not found" }),
        status: "False",
        reason: "ChartSourceUnsupported",
        requeue: { _tag: "After" },
      },
      { error: new ContentTooLargeError({ what: "x", message: "too large" }), status: "False", reason: "ContentTooLarge", requeue: { _tag: "OnChange" } },
      {
        error: new ResolutionMissingError({ configMap: "c", message: "Waiting for c" }),
        status: "False",
        reason: "AwaitingResolution",
        requeue: { _tag: "OnChange" },
      },
      {
        error: new ContentInvalidError({ configMap: "c", message: "secret detail" }),
        status: "Unknown",
        reason: "InternalError",
        requeue: { _tag: "OnChange" },
      },
    ]
    it.effect.each(terminal)("$error._tag: Mirrored=$status/$reason, status.mirror kept, requeue $requeue._tag", ({ error, status, reason, requeue }) =>
      at(
        Effect.gen(function* () {
          const t = setup({
            mirror: { inputDigest: OTHER_INPUT_DIGEST, bundle: "registry.example/aicr/cluster/bundles/cluster:input-old@sha256:0", charts: [] },
          })
          t.registry.failNext(error)
          const exit = yield* t.run
          expect(exit).toMatchObject(Exit.succeed(requeue))
          expect(t.mirrored()).toMatchObject({ type: "Mirrored", status, reason })
          if (reason === "InternalError") expect(t.mirrored()!.message).toBe("Please check controller logs for errors")
          expect(t.runtime().status!.mirror!.inputDigest).toBe(OTHER_INPUT_DIGEST)
          expect(t.warnings()).toEqual(
            status === "False" && reason !== "AwaitingResolution" ? [expect.objectContaining({ type: "Warning", reason, action: "Mirror" })] : [],
          )
          // The same failure again: no status write, no second Event.
          t.registry.failNext(error)
          const writes = t.fake.writes.length
          yield* t.run
          expect(t.fake.writes.length).toBe(writes)
        }),
      ),
    )

    it.effect("a registry outage: Mirrored=False/Mirroring naming the cause, the reconcile fails for the driver's backoff, and recovery clears it", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          t.registry.failNext(
            new RegistryUnavailableError({
              registry: "registry.example",
              cause: "ECONNREFUSED",
              message: "GET http://registry.example/v2/ failed (ECONNREFUSED)",
            }),
          )
          const exit = yield* t.run
          expect(Exit.isFailure(exit) && exit.cause.toString()).toContain("RetryAfterTransientFailure")
          expect(t.mirrored()).toMatchObject({
            status: "False",
            reason: "Mirroring",
            message: `Mirroring input ${INPUT_DIGEST.slice(7, 19)}: retrying after a transient failure: registry.example is unavailable (ECONNREFUSED)`,
          })
          // Same outage again: same condition, no write.
          t.registry.failNext(
            new RegistryUnavailableError({
              registry: "registry.example",
              cause: "ECONNREFUSED",
              message: "GET http://registry.example/v2/ failed (ECONNREFUSED)",
            }),
          )
          t.fake.clearWrites()
          yield* t.run
          expect(t.fake.writes).toHaveLength(0)
          // Recovered.
          expect(yield* t.run).toEqual(Exit.succeed(RECHECK))
          expect(t.mirrored()).toMatchObject({ status: "True", reason: "ContentMirrored" })
        }),
      ),
    )

    it.effect("an unsupported release in the content is reported without touching the registry", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          const data = contentData()
          const recipe = JSON.parse(data["recipe.json"]!) as { componentRefs: Array<{ name: string; source: string }> }
          recipe.componentRefs.find((c) => c.name === "aws-efa")!.source = "s3://bucket/charts"
          t.fake.seed(Core.ConfigMap, contentConfigMap(INPUT_DIGEST, { ...data, "recipe.json": JSON.stringify(recipe) }))
          yield* t.run
          expect(t.registry.calls()).toBe(0)
          expect(t.mirrored()).toMatchObject({
            status: "False",
            reason: "ChartSourceUnsupported",
            message: expect.stringContaining("Release aws-efa cannot be mirrored: its source scheme s3://"),
          })
        }),
      ),
    )

    it.effect("a missing content ConfigMap waits (AwaitingResolution) instead of failing", () =>
      at(
        Effect.gen(function* () {
          const t = setup({}, { content: false })
          expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
          expect(t.mirrored()).toMatchObject({ status: "False", reason: "AwaitingResolution", message: expect.stringContaining(`${NAMESPACE}/aicr-content-`) })
        }),
      ),
    )

    it.effect("an API server outage while reading fails the reconcile without a status write", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          t.fake.failNext("Unavailable", { verb: "get", kind: Core.ConfigMap })
          const exit = yield* t.run
          expect(Exit.isFailure(exit) && exit.cause.toString()).toContain("KubeError")
          expect(t.statusWrites()).toHaveLength(0)
        }),
      ),
    )
  })

  it.effect("ignores any runtime not named cluster", () =>
    Effect.gen(function* () {
      const t = setup()
      const exit = yield* reconcile("other").pipe(
        Effect.provide(Layer.mergeAll(t.fake.layer, t.events)),
        Effect.provideService(Registry, t.registry.service),
        Effect.provideService(MirrorConfig, settings),
        Effect.provideService(LastVerification, Effect.runSync(LastVerification.make)),
        Effect.exit,
      )
      expect(exit).toEqual(Exit.succeed({ _tag: "Never" }))
      expect(t.fake.writes).toHaveLength(0)
    }),
  )
})
