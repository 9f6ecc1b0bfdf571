import { Data, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Logging, objectRef, REDACTED } from "./index"

const capture = (level: Logging.Level = "debug") => {
  const lines: Array<Record<string, unknown>> = []
  const root = Logging.makeRootLogger({ app: "test-app", level, destination: { write: (s: string) => void lines.push(JSON.parse(s)) } })
  return { lines, layer: Logging.layer({ root }) }
}

class RegistryUnreachableError extends Data.TaggedError("RegistryUnreachableError")<{ readonly registry: string }> {}

describe("objectRef", () => {
  it.each([
    {
      name: "keys a cluster-scoped object by its Kind with the name alone",
      kind: "RuntimeRollout",
      obj: { metadata: { name: "cluster-3f2a9c1-1" } },
      want: { RuntimeRollout: "cluster-3f2a9c1-1" },
    },
    {
      name: "adds the namespace for a namespaced object",
      kind: { kind: "ConfigMap" },
      obj: { metadata: { name: "aicr-plan-3f2a9c1", namespace: "aicr-system" } },
      want: { ConfigMap: "aicr-system/aicr-plan-3f2a9c1" },
    },
    { name: "accepts a key string", kind: "Application", obj: "argocd/gpu-operator", want: { Application: "argocd/gpu-operator" } },
  ])("$name", ({ kind, obj, want }) => {
    expect(objectRef(kind, obj)).toEqual(want)
  })
})

describe("pino bridge", () => {
  it("writes JSON with level label, ISO time, app, msg and the log annotations as bound fields", () => {
    const { lines, layer } = capture()
    Effect.runSync(
      Effect.logInfo("Applying status").pipe(
        Effect.annotateLogs({ controller: "approval-guard", reconcileID: "r-1", ...objectRef("RuntimeRollout", "r1") }),
        Effect.provide(layer),
      ),
    )
    expect(lines).toHaveLength(1)
    const [line] = lines
    expect(line).toMatchObject({
      level: "info",
      app: "test-app",
      msg: "Applying status",
      controller: "approval-guard",
      reconcileID: "r-1",
      RuntimeRollout: "r1",
    })
    expect(typeof line!["time"]).toBe("string")
    expect(new Date(line!["time"] as string).toISOString()).toBe(line!["time"])
  })

  it("merges plain-object message arguments into the fields", () => {
    const { lines, layer } = capture()
    Effect.runSync(
      Effect.logInfo("Condition changed", { condition: "Approved", from: "Unknown", to: "True", reason: "ApprovedByUser" }).pipe(Effect.provide(layer)),
    )
    expect(lines[0]).toMatchObject({ msg: "Condition changed", condition: "Approved", from: "Unknown", to: "True", reason: "ApprovedByUser" })
  })

  it("maps Effect levels to pino labels and honours the minimum level", () => {
    const { lines, layer } = capture("info")
    Effect.runSync(
      Effect.gen(function* () {
        yield* Effect.logDebug("Hidden")
        yield* Effect.logWarning("Warned")
        yield* Effect.logError("Failed")
      }).pipe(Effect.provide(layer)),
    )
    expect(lines.map((l) => [l["level"], l["msg"]])).toEqual([
      ["warn", "Warned"],
      ["error", "Failed"],
    ])
  })

  it("emits debug lines when the level is debug", () => {
    const { lines, layer } = capture("debug")
    Effect.runSync(Effect.logDebug("Skipping no-op write").pipe(Effect.provide(layer)))
    expect(lines[0]).toMatchObject({ level: "debug", msg: "Skipping no-op write" })
  })

  it("puts a typed failure under err with its tag and fields", () => {
    const { lines, layer } = capture()
    Effect.runSync(
      Effect.fail(new RegistryUnreachableError({ registry: "localhost:5000" })).pipe(
        Effect.tapCause((cause) => Effect.logWarning("Reconcile failed", cause)),
        Effect.ignore,
        Effect.provide(layer),
      ),
    )
    expect(lines[0]).toMatchObject({ level: "warn", err: { type: "RegistryUnreachableError", registry: "localhost:5000", defect: false } })
  })

  it("puts a defect under err with its stack", () => {
    const { lines, layer } = capture()
    Effect.runSync(
      Effect.die(new Error("boom")).pipe(
        Effect.tapCause((cause) => Effect.logError("Reconciler panicked", cause)),
        Effect.ignoreCause,
        Effect.provide(layer),
      ),
    )
    const err = lines[0]!["err"] as Record<string, unknown>
    expect(err).toMatchObject({ message: "boom", defect: true })
    expect(String(err["stack"])).toContain("Error: boom")
  })
})

describe("redaction", () => {
  it.each([
    { name: "a nested password", fields: { registry: { password: "hunter2" } }, path: ["registry", "password"] },
    { name: "an ECR authorizationToken", fields: { ecr: { authorizationToken: "QVdTOnNlY3JldA==" } }, path: ["ecr", "authorizationToken"] },
    { name: "docker auths", fields: { dockerconfig: { auths: { "r.example": { auth: "x" } } } }, path: ["dockerconfig", "auths"] },
    { name: "a bearer token", fields: { creds: { token: "eyJhbGciOi" } }, path: ["creds", "token"] },
    { name: "a top-level token", fields: { token: "eyJhbGciOi" }, path: ["token"] },
    { name: "Secret data values", fields: { data: { ".dockerconfigjson": "eyJhdXRocyI6e319" } }, path: ["data", ".dockerconfigjson"] },
    { name: "a nested Secret's data values", fields: { secret: { data: { password: "c2VjcmV0" } } }, path: ["secret", "data", "password"] },
    {
      name: "an ECR GetAuthorizationToken output",
      fields: { out: { authorizationData: [{ authorizationToken: "QVdTOnNlY3JldA==" }] } },
      path: ["out", "authorizationData"],
    },
    {
      name: "a Secret as the ECR credential refresher writes it",
      fields: { secret: { kind: "Secret", metadata: { name: "aicr-registry" }, data: { password: "c2VjcmV0", url: "cg==" } } },
      path: ["secret", "data", "password"],
    },
    { name: "an annotation value that is a credential", fields: { annotations: { password: "p" } }, path: ["annotations", "password"] },
  ])("redacts $name", ({ fields, path }) => {
    const { lines, layer } = capture()
    Effect.runSync(Effect.logInfo("Refreshing credentials", fields).pipe(Effect.provide(layer)))
    let v: unknown = lines[0]
    for (const p of path) v = (v as Record<string, unknown>)[p]
    expect(v).toBe(REDACTED)
    expect(JSON.stringify(lines[0])).not.toMatch(/hunter2|QVdTOnNlY3JldA|eyJhbGciOi|eyJhdXRocyI6e319|c2VjcmV0/)
  })

  it("redacts credentials in log annotations too", () => {
    const { lines, layer } = capture()
    Effect.runSync(Effect.logInfo("Pushing").pipe(Effect.annotateLogs({ registry: { password: "hunter2" } }), Effect.provide(layer)))
    expect(JSON.stringify(lines[0])).not.toContain("hunter2")
  })
})
