import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit } from "effect"
import { standInProcess, standInRequest } from "@aicr/testing/harness"
import { describe, expect, it } from "vitest"
import {
  ChartSourceUnsupportedError,
  ConflictError,
  ContentInvalidError,
  ContentTooLargeError,
  errorsToOutcome,
  type MirrorError,
  RegistryCredentialsUnavailableError,
  RegistryUnavailableError,
  ResolutionMissingError,
  UnauthorizedError,
} from "./errors"
import { errorFromWire, errorToWire, MIRROR_ERRORS, planFromWire, planToWire, processRegistry, type RegistrySettings } from "./mirror-call"
import type { MirrorResult } from "./mirror"
import type { MirrorPlan } from "./plan"

const dir = mkdtempSync(join(tmpdir(), "aicr-mirror-call-"))
const child = (name: string, answer: string): string => standInProcess(dir, name, answer)
const settings: RegistrySettings = {
  dockerConfig: "/etc/aicr/registry/config.json",
  plainHttp: ["127.0.0.1:5000"],
  rewrites: [["https://charts.example", "http://127.0.0.1:8080"]],
  concurrency: 2,
}
const REG = "127.0.0.1:5000/aicr/cluster"
const DIGEST = "sha256:" + "a".repeat(64)

const PLAN: MirrorPlan = {
  inputDigest: DIGEST,
  items: [
    {
      _tag: "Chart",
      key: "cert-manager",
      release: "cert-manager",
      source: { _tag: "HelmRepo", repoUrl: "https://charts.example", chart: "cert-manager", version: "v1.17.2", original: "https://charts.example" },
      repository: `${REG}/charts/cert-manager`,
      tag: "v1.17.2",
    },
    {
      _tag: "Wrapper",
      key: "skyhook-customizations",
      release: "skyhook-customizations",
      chart: "skyhook-customizations",
      version: "0.0.0-aicr-0123456789ab",
      files: [
        { path: "skyhook-customizations/Chart.yaml", data: Buffer.from("apiVersion: v2\n") },
        { path: "skyhook-customizations/bin/run.sh", data: Buffer.from([0, 1, 2, 255]), mode: 0o755 },
      ],
      repository: `${REG}/wrappers/skyhook-customizations`,
      tag: "0.0.0-aicr-0123456789ab",
    },
  ],
  bundle: {
    repository: `${REG}/bundles/cluster`,
    tag: "input-aaaa",
    files: { "README.md": "hi\n", "deploy.sh": "#!/bin/sh\n" },
    modes: { "deploy.sh": 0o755 },
  },
}
const RESULT: MirrorResult = {
  inputDigest: DIGEST,
  charts: [{ key: "cert-manager", ref: `${REG}/charts/cert-manager:v1.17.2@${DIGEST}`, digest: DIGEST, action: "pushed" }],
  bundle: { key: "bundle", ref: `${REG}/bundles/cluster:input-aaaa@${DIGEST}`, digest: DIGEST, action: "present" },
  bytesUploaded: 1234,
  pushed: 1,
  present: 1,
}

/** One error of every `MirrorError` tag: a new tag does not compile until it has a row, and fails the key check below. */
const EVERY_ERROR: { readonly [K in MirrorError["_tag"]]: Extract<MirrorError, { readonly _tag: K }> } = {
  RegistryUnavailableError: new RegistryUnavailableError({ registry: "127.0.0.1:5000", cause: "HTTP 503", message: "HEAD …: 503 Service Unavailable" }),
  UnauthorizedError: new UnauthorizedError({ registry: "127.0.0.1:5000", message: "127.0.0.1:5000 refused the credentials" }),
  RegistryCredentialsUnavailableError: new RegistryCredentialsUnavailableError({
    path: "/etc/x.json",
    message: "Registry credentials /etc/x.json cannot be read: ENOENT",
  }),
  ConflictError: new ConflictError({
    reference: `${REG}/charts/a:1`,
    existing: DIGEST,
    wanted: "sha256:" + "b".repeat(64),
    message: "tag holds other content",
  }),
  ChartSourceUnsupportedError: new ChartSourceUnsupportedError({ release: "cert-manager", message: "no chart v9.9.9 in https://charts.example" }),
  ContentTooLargeError: new ContentTooLargeError({ what: "chart cert-manager", message: "chart cert-manager is larger than 64 MiB" }),
  ResolutionMissingError: new ResolutionMissingError({ configMap: "aicr-content-3f2a", message: "content ConfigMap aicr-content-3f2a is not there" }),
  ContentInvalidError: new ContentInvalidError({ configMap: "aicr-content-3f2a", message: "recipe.json is not JSON" }),
}

const ownFields = (e: object) =>
  Object.fromEntries(Object.getOwnPropertyNames(e).flatMap((k) => (k === "stack" ? [] : [[k, (e as Record<string, unknown>)[k]]])))
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)

describe("MirrorErrors across the process boundary", () => {
  it("the table covers every tag errorsToOutcome knows, and the decoder knows every class", () => {
    expect(Object.keys(EVERY_ERROR).sort()).toEqual(Object.keys(errorsToOutcome("x")).sort())
    expect(Object.keys(MIRROR_ERRORS).sort()).toEqual(Object.keys(errorsToOutcome("x")).sort())
  })

  it.each(Object.values(EVERY_ERROR).map((e) => [e._tag, e] as const))("%s comes back as the same class, fields and outcome", (tag, e) => {
    const back = errorFromWire(JSON.parse(JSON.stringify(errorToWire(e))))
    expect(back).toBeInstanceOf(MIRROR_ERRORS[tag])
    expect(back!._tag).toBe(tag)
    expect(ownFields(back!)).toEqual(ownFields(e))
    const table = errorsToOutcome("Mirroring input 3f2a9c1d0e4b") as Record<
      string,
      (e: MirrorError) => { condition: unknown; class: string; requeue?: unknown }
    >
    const [was, is] = [table[tag]!(e), table[tag]!(back!)]
    expect(is.condition).toEqual(was.condition)
    expect(is.class).toBe(was.class)
    expect(is.requeue).toEqual(was.requeue)
  })

  it("anything else is no MirrorError (a defect)", () => {
    for (const v of [
      null,
      "x",
      { _tag: "Nope", message: "m" },
      { _tag: "UnauthorizedError" },
      { _tag: "UnauthorizedError", registry: 1, message: "m" },
      { _tag: "toString", message: "m" },
    ])
      expect(errorFromWire(v)).toBeUndefined()
  })
})

describe("the plan across the process boundary", () => {
  it("is JSON-safe: wrapper bytes and modes survive, absent modes stay absent", () => {
    const back = planFromWire(JSON.parse(JSON.stringify(planToWire(PLAN))))
    expect(back).toEqual(PLAN)
    const files = (back.items[1] as Extract<MirrorPlan["items"][number], { _tag: "Wrapper" }>).files
    expect(Buffer.isBuffer(files[1]!.data)).toBe(true)
    expect("mode" in files[0]!).toBe(false)
  })
})

describe("the Registry as calls to the mirror process", () => {
  it("a mirror sends the plan and the settings (a credentials path, no credential), and the child's result is the result", async () => {
    const entry = child("mirror", `{ ok: { ...${JSON.stringify(RESULT)}, inputDigest: request.plan.inputDigest } }`)
    const exit = await Effect.runPromiseExit(
      processRegistry(entry, { ...settings, ...{ registry: "oci://x", verifyIntervalMs: 1 } }, "aicr-registry-mirror").mirror(PLAN),
    )
    expect(exit).toEqual(Exit.succeed(RESULT))
    expect(standInRequest(dir, "mirror")).toEqual({
      op: "mirror",
      settings: JSON.parse(JSON.stringify(settings)),
      userAgent: "aicr-registry-mirror",
      plan: JSON.parse(JSON.stringify(planToWire(PLAN))),
    })
  })

  it("resolveTags sends the references; a gone tag (null) is undefined again", async () => {
    const entry = child("tags", `{ ok: request.references.map((reference, i) => ({ reference, digest: i === 0 ? ${JSON.stringify(DIGEST)} : null })) }`)
    const refs = [`${REG}/charts/a:1`, `${REG}/charts/b:2`]
    const exit = await Effect.runPromiseExit(processRegistry(entry, settings, "ua").resolveTags(refs))
    expect(exit).toEqual(
      Exit.succeed([
        { reference: refs[0], digest: DIGEST },
        { reference: refs[1], digest: undefined },
      ]),
    )
    expect(standInRequest(dir, "tags")).toMatchObject({ op: "resolveTags", references: refs })
  })

  it.each(Object.values(EVERY_ERROR).map((e) => [e._tag, e] as const))("a %s the child answers is the same error here", async (tag, e) => {
    const entry = child(`failed-${tag}`, `{ failed: ${JSON.stringify(errorToWire(e))} }`)
    const registry = processRegistry(entry, settings, "ua")
    for (const exit of [await Effect.runPromiseExit(registry.mirror(PLAN)), await Effect.runPromiseExit(registry.resolveTags(["r"]))]) {
      const back = failureOf(exit)
      expect(back).toBeInstanceOf(MIRROR_ERRORS[tag])
      expect(ownFields(back as object)).toEqual(ownFields(e))
    }
  })

  it("a defect the child reports, or an answer of the wrong shape, is a defect", async () => {
    for (const answer of [`{ defect: "TypeError: broken" }`, `{ ok: { inputDigest: 1 } }`, `{ failed: { _tag: "Nope", message: "m" } }`]) {
      const exit = await Effect.runPromiseExit(processRegistry(child("broken", answer), settings, "ua").mirror(PLAN))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
    }
    const tags = await Effect.runPromiseExit(processRegistry(child("broken-tags", `{ ok: [null] }`), settings, "ua").resolveTags(["r"]))
    expect(Exit.isFailure(tags) && Cause.hasDies(tags.cause)).toBe(true)
  })

  it("a child that ends without an answer is a transient RegistryUnavailableError naming the mirror process, its exit and stderr", async () => {
    const exit = await Effect.runPromiseExit(processRegistry(join(dir, "missing.mjs"), settings, "ua").mirror(PLAN))
    const e = failureOf(exit)
    expect(e).toBeInstanceOf(RegistryUnavailableError)
    expect(e).toMatchObject({ registry: "the mirror process", cause: "ended with exit code 1 without an answer" })
    expect((e as RegistryUnavailableError).message).toMatch(
      /^the mirror process failed: .*missing\.mjs ended with exit code 1 without an answer: .*Cannot find module/su,
    )
    const outcome = errorsToOutcome("Mirroring input 3f2a9c1d0e4b").RegistryUnavailableError(e as RegistryUnavailableError)
    expect(outcome.class).toBe("transient")
    expect(outcome.condition).toMatchObject({
      status: "False",
      reason: "Mirroring",
      message: "Mirroring input 3f2a9c1d0e4b: retrying after a transient failure: the mirror process is unavailable (ended with exit code 1 without an answer)",
    })
  })

  it("a killed child is lost too, and interrupting the call kills the child", async () => {
    const killed = child("killed", `(process.kill(process.pid, "SIGKILL"), {})`)
    expect(failureOf(await Effect.runPromiseExit(processRegistry(killed, settings, "ua").mirror(PLAN)))).toMatchObject({
      _tag: "RegistryUnavailableError",
      cause: "ended on SIGKILL without an answer",
    })
    const pidFile = join(dir, "hangs.pid")
    const hangs = child("hangs", `(writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)), setInterval(() => {}, 1000), {})`)
    const exit = await Effect.runPromiseExit(processRegistry(hangs, settings, "ua").mirror(PLAN).pipe(Effect.timeout("2 seconds")))
    expect(Exit.isFailure(exit)).toBe(true)
    const pid = Number(readFileSync(pidFile, "utf8"))
    await expect.poll(() => alive(pid), { timeout: 5_000 }).toBe(false)
  })
})
