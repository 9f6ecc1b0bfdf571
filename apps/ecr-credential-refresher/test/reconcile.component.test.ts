// reconcile() against FakeKube and a fake ECR: the writes it makes, for the five properties every component suite
// proves (design/style.md §B.7), plus the refresher's own paths: the two Secrets, refresh timing on the TestClock,
// rewriting an edited Secret, staleness after failed refreshes, the static check, and no token in any log line.
import { ClusterRuntimeKind, Core, type ClusterRuntime } from "@aicr/api"
import { eventRecorderLayer } from "@aicr/kube"
import { Logging } from "@aicr/logging"
import { makeFakeKube } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { Ecr, type EcrShape, makeMintState, MintState, type Token } from "../src/act"
import { parseSettings, RefresherConfig, type RefresherSettings } from "../src/config"
import { contract } from "../src/contract"
import {
  AccessDeniedError,
  AwsUnavailableError,
  CredentialsRejectedError,
  type MintError,
  NoAwsIdentityError,
  ThrottledError,
  TokenInvalidError,
} from "../src/errors"
import { reconcile } from "../src/reconcile"
import { dockerConfigSecret, type Secret } from "../src/secrets"

const HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
const T0 = Date.parse("2026-12-02T10:00:00Z")
const H = 3_600_000
const aws = parseSettings(["--registry", `oci://${HOST}/aicr/c1`, "--auth-provider", "aws"], {})
const statik = parseSettings(["--registry", `oci://${HOST}/aicr/c1`], {})

const aRuntime = (): ClusterRuntime => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "ClusterRuntime",
  metadata: { name: "cluster", generation: 1, uid: "0b6f3d0e-7c1a-4d59-9a43-5c1f1f6a2e10" },
  spec: { intent: "training", platform: "kubeflow" },
})

/** A fake ECR: tokens `tok-<n>` valid for `ttlMs`, or the next queued failure. */
const fakeEcr = (ttlMs = 12 * H) => {
  let n = 0
  const failures: MintError[] = []
  const service: EcrShape = {
    mint: () =>
      Effect.gen(function* () {
        const f = failures.shift()
        if (f !== undefined) return yield* Effect.fail(f)
        n++
        const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
        return { username: "AWS", password: `tok-${n}-s3cr3t`, expiresAt: now + ttlMs } satisfies Token
      }),
  }
  return { service, calls: () => n, failNext: (e: MintError) => void failures.push(e) }
}

const setup = (settings: RefresherSettings = aws, ttlMs?: number, { withRuntime = true }: { withRuntime?: boolean } = {}) => {
  const fake = makeFakeKube({ listMapKeys: { "ClusterRuntime.operator.aicr.run": { "status.conditions": "type" } } })
  if (withRuntime) fake.seed(ClusterRuntimeKind, aRuntime())
  const ecr = fakeEcr(ttlMs)
  const lines: string[] = []
  const logging = Logging.layer({ root: Logging.makeRootLogger({ app: "test", level: "trace", destination: { write: (s: string) => void lines.push(s) } }) })
  const events = eventRecorderLayer({ controller: "operator.aicr.run/ecr-credential-refresher", instance: "test" }).pipe(Layer.provide(fake.layer))
  const state = Effect.runSync(makeMintState())
  const run = reconcile("cluster").pipe(
    Effect.provide(Layer.mergeAll(fake.layer, events, logging)),
    Effect.provideService(Ecr, ecr.service),
    Effect.provideService(MintState, state),
    Effect.provideService(RefresherConfig, settings),
    Effect.exit,
  )
  const runtime = () => fake.peek<ClusterRuntime>(ClusterRuntimeKind, "cluster")!
  const ready = () => runtime().status?.conditions?.find((c) => c.type === "RegistryCredentialsReady")
  const secret = (ns: string, name: string) => fake.peek<Secret>(Core.Secret, `${ns}/${name}`)
  const repoCreds = () => secret("argocd", "aicr-registry")
  const dockerConfig = () => secret("aicr-system", "aicr-registry-docker-config")
  const password = (s: Secret | undefined) => (s?.data?.["password"] === undefined ? undefined : Buffer.from(s.data["password"], "base64").toString())
  const statusWrites = () => fake.writesTo(ClusterRuntimeKind, "cluster").filter((w) => w.subresource === "status")
  const warnings = () => fake.writes.filter((w) => w.kind === "Event" && w.verb === "create").map((w) => (w.body as { reason: string }).reason)
  return { fake, ecr, run, runtime, ready, repoCreds, dockerConfig, password, statusWrites, warnings, lines }
}

const at = <A, E, R>(body: Effect.Effect<A, E, R>) => TestClock.setTime(T0).pipe(Effect.andThen(body))
const delayOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isSuccess(exit) && (exit.value as { _tag: string })._tag === "After" ? Duration.toMillis((exit.value as { delay: Duration.Duration }).delay) : undefined

describe("ecr-credential-refresher reconcile (aws)", () => {
  it.effect("first visit: mints at start, writes both Secrets and RegistryCredentialsReady=True/TokenRefreshed, requeues before the 6 h interval", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        const exit = yield* t.run
        expect(t.ecr.calls()).toBe(1)
        expect(t.ready()).toEqual({
          type: "RegistryCredentialsReady",
          status: "True",
          observedGeneration: 1,
          lastTransitionTime: "2026-12-02T10:00:00Z",
          reason: "TokenRefreshed",
          message: `ECR token for ${HOST} written to argocd/aicr-registry (Argo CD repo-creds) and aicr-system/aicr-registry-docker-config (pushing components); refreshed before it expires`,
        })
        expect(t.runtime().status!.credentials).toEqual({
          provider: "aws",
          secret: { namespace: "argocd", name: "aicr-registry" },
          dockerConfigSecret: { namespace: "aicr-system", name: "aicr-registry-docker-config" },
          expiresAt: "2026-12-02T22:00:00Z",
          refreshedAt: "2026-12-02T10:00:00Z",
        })
        expect(t.password(t.repoCreds())).toBe("tok-1-s3cr3t")
        expect(t.repoCreds()!.metadata.annotations).toEqual({ "operator.aicr.run/token-expires-at": "2026-12-02T22:00:00Z" })
        expect(t.dockerConfig()!.type).toBe("kubernetes.io/dockerconfigjson")
        const delay = delayOf(exit)!
        expect(delay).toBeGreaterThan(5.4 * H - 1)
        expect(delay).toBeLessThanOrEqual(6 * H)
        const secretWrites = t.fake.writes.filter((w) => w.kind === "Secret")
        expect(secretWrites.map((w) => ({ verb: w.verb, manager: w.manager, force: w.force }))).toEqual([
          { verb: "apply", manager: contract.fieldManager, force: false },
          { verb: "apply", manager: contract.fieldManager, force: false },
        ])
      }),
    ),
  )

  it.effect(
    "before any ClusterRuntime exists: mints at start and writes both Secrets, requeues at the refresh time; the runtime created later gets TokenRefreshed with no second mint",
    () =>
      at(
        Effect.gen(function* () {
          const t = setup(aws, undefined, { withRuntime: false })
          const exit = yield* t.run
          expect(t.ecr.calls()).toBe(1)
          expect(t.password(t.repoCreds())).toBe("tok-1-s3cr3t")
          expect(t.repoCreds()!.metadata.annotations).toEqual({ "operator.aicr.run/token-expires-at": "2026-12-02T22:00:00Z" })
          expect(t.password(t.dockerConfig())).toBeUndefined() // a dockerconfigjson Secret: the login is in .dockerconfigjson
          expect(Object.keys(t.dockerConfig()!.data ?? {})).toEqual([".dockerconfigjson"])
          expect(t.fake.writes.filter((w) => w.kind !== "Secret")).toEqual([])
          const delay = delayOf(exit)!
          expect(delay).toBeGreaterThan(5.4 * H - 1)
          expect(delay).toBeLessThanOrEqual(6 * H)

          yield* TestClock.adjust("10 minutes")
          t.fake.seed(ClusterRuntimeKind, aRuntime())
          t.fake.clearWrites()
          yield* t.run
          expect(t.ecr.calls()).toBe(1)
          expect(t.fake.writes.map((w) => `${w.kind} ${w.verb}${w.subresource === undefined ? "" : `/${w.subresource}`}`)).toEqual([
            "ClusterRuntime apply/status",
          ])
          expect(t.ready()).toMatchObject({ status: "True", reason: "TokenRefreshed" })
          expect(t.runtime().status!.credentials).toMatchObject({ expiresAt: "2026-12-02T22:00:00Z", refreshedAt: "2026-12-02T10:00:00Z" })
        }),
      ),
  )

  it.effect("idempotence: a pass before the refresh time writes nothing and mints nothing", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        t.fake.clearWrites()
        yield* TestClock.adjust("1 hour")
        const exit = yield* t.run
        expect(t.fake.writes).toHaveLength(0)
        expect(t.ecr.calls()).toBe(1)
        expect(delayOf(exit)).toBeLessThanOrEqual(5 * H)
      }),
    ),
  )

  it.effect("refresh timing: mints again when the requeue comes due, before the token expires, and moves the expiry", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        const first = delayOf(yield* t.run)!
        yield* TestClock.adjust(first)
        yield* t.run
        expect(t.ecr.calls()).toBe(2)
        expect(t.password(t.repoCreds())).toBe("tok-2-s3cr3t")
        const expires = Date.parse(t.repoCreds()!.metadata.annotations!["operator.aicr.run/token-expires-at"]!)
        expect(expires).toBe(Math.floor((T0 + first + 12 * H) / 1000) * 1000)
        expect(t.ready()).toMatchObject({ status: "True", reason: "TokenRefreshed", lastTransitionTime: "2026-12-02T10:00:00Z" })
      }),
    ),
  )

  it.effect("short tokens refresh a margin before expiry, not at the interval", () =>
    at(
      Effect.gen(function* () {
        const t = setup(aws, 20_000)
        const delay = delayOf(yield* t.run)!
        expect(delay).toBeGreaterThanOrEqual(13_500)
        expect(delay).toBeLessThanOrEqual(15_000)
      }),
    ),
  )

  it.effect("rewrites a Secret that was deleted or edited by hand", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.fake.kube.delete(Core.Secret, "argocd/aicr-registry")
        yield* TestClock.adjust("1 minute")
        yield* t.run
        expect(t.ecr.calls()).toBe(2)
        expect(t.password(t.repoCreds())).toBe("tok-2-s3cr3t")
      }),
    ),
  )

  it.effect("room: the status apply carries only RegistryCredentialsReady and status.credentials, as aicr-ecr-credential-refresher, without force", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const [w] = t.statusWrites()
        expect(w).toMatchObject({ verb: "apply", manager: contract.fieldManager, force: false, result: "ok" })
        const body = w!.body as { status: Record<string, unknown> }
        expect(Object.keys(body.status).sort()).toEqual(["conditions", "credentials"])
        expect((body.status["conditions"] as Array<{ type: string }>).map((c) => c.type)).toEqual(["RegistryCredentialsReady"])
      }),
    ),
  )

  it.effect("never logs the token, even at trace level", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        yield* t.fake.kube.delete(Core.Secret, "aicr-system/aicr-registry-docker-config")
        yield* t.run
        expect(t.lines.some((l) => l.includes("Minted ECR token"))).toBe(true)
        for (const secret of ["s3cr3t", Buffer.from("tok-1-s3cr3t").toString("base64"), Buffer.from("AWS:tok-1-s3cr3t").toString("base64")]) {
          expect(t.lines.join("\n")).not.toContain(secret)
        }
      }),
    ),
  )

  describe("error mapping", () => {
    const cases: Array<{ error: MintError; reason: string; transient: boolean; message: RegExp }> = [
      {
        error: new NoAwsIdentityError({ message: "Could not load credentials from any providers" }),
        reason: "RegistryCredentialsUnavailable",
        transient: false,
        message: /No AWS identity.*Pod Identity.*IRSA/u,
      },
      {
        error: new AccessDeniedError({ action: "ecr:GetAuthorizationToken", principal: "arn:aws:iam::1:user/x", message: "" }),
        reason: "Unauthorized",
        transient: false,
        message: /AWS denied ecr:GetAuthorizationToken to arn:aws:iam::1:user\/x: attach the chart's files\/ecr-iam-policy\.json/u,
      },
      {
        error: new CredentialsRejectedError({ code: "UnrecognizedClientException", message: "" }),
        reason: "Unauthorized",
        transient: false,
        message: /rejected the operator's credentials \(UnrecognizedClientException\)/u,
      },
      {
        error: new TokenInvalidError({ message: "ECR returned no usable authorization token" }),
        reason: "RegistryCredentialsUnavailable",
        transient: false,
        message: /no usable authorization token/u,
      },
      {
        error: new ThrottledError({ message: "Rate exceeded" }),
        reason: "Throttled",
        transient: true,
        message: /throttled ecr:GetAuthorizationToken: retrying after a transient failure/u,
      },
      {
        error: new AwsUnavailableError({ cause: "ECONNREFUSED", message: "" }),
        reason: "RegistryCredentialsUnavailable",
        transient: true,
        message: /retrying after a transient failure: ECONNREFUSED/u,
      },
    ]
    it.effect.each(cases)("$error._tag on the first mint: False/$reason with a message that says what to fix", ({ error, reason, transient, message }) =>
      at(
        Effect.gen(function* () {
          const t = setup()
          t.ecr.failNext(error)
          const exit = yield* t.run
          expect(t.ready()).toMatchObject({ status: "False", reason, message: expect.stringMatching(message) })
          if (transient) expect(Exit.isFailure(exit) && exit.cause.toString()).toContain("RetryAfterTransientFailure")
          else expect(delayOf(exit)).toBe(5 * 60_000)
          expect(t.repoCreds()).toBeUndefined()
          expect(t.warnings()).toEqual([reason])
          // The same failure again: no status write, no second Event.
          t.ecr.failNext(error)
          const writes = t.fake.writes.length
          yield* t.run
          expect(t.fake.writes.length).toBe(writes)
        }),
      ),
    )

    it.effect("a failing refresh keeps the written token until it expires, then reports RegistryCredentialsStale naming the cause", () =>
      at(
        Effect.gen(function* () {
          const t = setup(aws, 20_000)
          const first = delayOf(yield* t.run)!
          yield* TestClock.adjust(first)
          t.ecr.failNext(new AccessDeniedError({ action: "ecr:GetAuthorizationToken", principal: undefined, message: "" }))
          const exit = yield* t.run
          expect(t.ready()).toMatchObject({ status: "False", reason: "Unauthorized" })
          // Looks again by the expiry at the latest, so the flip to stale is on time.
          expect(delayOf(exit)).toBe(20_000 - first + 1_000)
          yield* TestClock.adjust(delayOf(exit)!)
          t.ecr.failNext(new AccessDeniedError({ action: "ecr:GetAuthorizationToken", principal: undefined, message: "" }))
          yield* t.run
          expect(t.ready()).toMatchObject({
            status: "False",
            reason: "RegistryCredentialsStale",
            message: expect.stringMatching(
              /^The token in argocd\/aicr-registry and aicr-system\/aicr-registry-docker-config expired at 2026-12-02T10:00:20Z and no new one could be minted: AWS denied ecr:GetAuthorizationToken/u,
            ),
          })
          // Recovery: the next mint is written and the condition is True again.
          yield* t.run
          expect(t.ready()).toMatchObject({ status: "True", reason: "TokenRefreshed" })
          expect(t.password(t.dockerConfig() ? t.repoCreds() : undefined)).toBe("tok-2-s3cr3t")
        }),
      ),
    )

    it.effect("a hand-made docker-config Secret of another type is named, with what to do", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          t.fake.failNext("Invalid", { verb: "apply", kind: Core.Secret })
          const exit = yield* t.run
          expect(delayOf(exit)).toBe(5 * 60_000)
          expect(t.ready()).toMatchObject({
            status: "False",
            reason: "RegistryCredentialsUnavailable",
            message:
              "Secret aicr-system/aicr-registry-docker-config cannot be written (Invalid): it exists with another type, or another manager owns its fields; delete it and the refresher writes it anew",
          })
        }),
      ),
    )

    it.effect("a registry that is not private ECR is refused without calling AWS", () =>
      at(
        Effect.gen(function* () {
          for (const registry of ["oci://public.ecr.aws/aicr/c1", "oci://ghcr.io/aicr/c1"]) {
            const t = setup(parseSettings(["--registry", registry, "--auth-provider", "aws"], {}))
            const exit = yield* t.run
            expect(exit).toEqual(Exit.succeed({ _tag: "Never" }))
            expect(t.ecr.calls()).toBe(0)
            expect(t.ready()).toMatchObject({
              status: "False",
              reason: "RegistryUnsupported",
              message: expect.stringContaining("registry.auth.provider is aws but"),
            })
          }
        }),
      ),
    )

    it.effect("an API server outage while reading fails the reconcile without a status write", () =>
      at(
        Effect.gen(function* () {
          const t = setup()
          t.fake.failNext("Unavailable", { verb: "get", kind: Core.Secret })
          const exit = yield* t.run
          expect(Exit.isFailure(exit) && exit.cause.toString()).toContain("KubeError")
          expect(t.statusWrites()).toHaveLength(0)
        }),
      ),
    )
  })
})

describe("ecr-credential-refresher reconcile (static)", () => {
  const login = { username: "robot", password: "pw", expiresAt: "2026-12-02T11:00:00Z" }
  const seedDockerConfig = (t: ReturnType<typeof setup>, body: Secret) => t.fake.seed(Core.Secret, body)

  it.effect("first visit without the Secret: False/RegistryCredentialsUnavailable saying what to create; writes no Secret", () =>
    at(
      Effect.gen(function* () {
        const t = setup(statik)
        const exit = yield* t.run
        expect(exit).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.ready()).toMatchObject({
          status: "False",
          reason: "RegistryCredentialsUnavailable",
          message: `Secret aicr-system/aicr-registry-docker-config not found: create it with type kubernetes.io/dockerconfigjson and a login for ${HOST}, or set registry.auth.provider aws`,
        })
        expect(t.fake.writes.filter((w) => w.kind === "Secret")).toHaveLength(0)
        expect(t.ecr.calls()).toBe(0)
      }),
    ),
  )

  it.effect("a usable Secret: True/CredentialsPresent, requeued at its expiry, then stale", () =>
    at(
      Effect.gen(function* () {
        const t = setup(statik)
        seedDockerConfig(t, dockerConfigSecret(statik.registry, statik.dockerConfig, login))
        const exit = yield* t.run
        expect(t.ready()).toMatchObject({
          status: "True",
          reason: "CredentialsPresent",
          message: `Secret aicr-system/aicr-registry-docker-config holds a login for ${HOST}`,
        })
        expect(t.runtime().status!.credentials).toEqual({ provider: "static", dockerConfigSecret: statik.dockerConfig, expiresAt: "2026-12-02T11:00:00Z" })
        expect(delayOf(exit)).toBe(H + 1_000)
        t.fake.clearWrites()
        yield* t.run
        expect(t.fake.writes).toHaveLength(0)
        yield* TestClock.adjust(H + 1_000)
        yield* t.run
        expect(t.ready()).toMatchObject({
          status: "False",
          reason: "RegistryCredentialsStale",
          message: expect.stringContaining("past its operator.aicr.run/token-expires-at (2026-12-02T11:00:00Z)"),
        })
        expect(t.fake.writes.filter((w) => w.kind === "Secret")).toHaveLength(0)
      }),
    ),
  )

  it.effect("a Secret without a login for the registry host is named with what is wrong", () =>
    at(
      Effect.gen(function* () {
        const t = setup(statik)
        seedDockerConfig(t, dockerConfigSecret({ host: "ghcr.io", prefix: "" }, statik.dockerConfig, login))
        yield* t.run
        expect(t.ready()).toMatchObject({
          status: "False",
          reason: "RegistryCredentialsUnavailable",
          message: expect.stringContaining(`its auths have no entry for ${HOST}`),
        })
      }),
    ),
  )
})

it.effect("ignores any runtime not named cluster", () =>
  Effect.gen(function* () {
    const t = setup()
    const exit = yield* reconcile("other").pipe(
      Effect.provide(t.fake.layer),
      Effect.provideService(Ecr, t.ecr.service),
      Effect.provideService(MintState, Effect.runSync(makeMintState())),
      Effect.provideService(RefresherConfig, aws),
      Effect.provide(eventRecorderLayer({ controller: "x", instance: "y" }).pipe(Layer.provide(t.fake.layer))),
      Effect.exit,
    )
    expect(exit).toEqual(Exit.succeed({ _tag: "Never" }))
    expect(t.fake.writes).toHaveLength(0)
  }),
)
