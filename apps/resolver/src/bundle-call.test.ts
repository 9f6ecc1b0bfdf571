import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit } from "effect"
import { standInProcess, standInRequest } from "@aicr/testing/harness"
import { describe, expect, it } from "vitest"
import { processBundleStore } from "./bundle-call"
import { BundlePullError } from "./services"

const dir = mkdtempSync(join(tmpdir(), "aicr-bundle-call-"))
const child = (name: string, answer: string): string => standInProcess(dir, name, answer)
const settings = { dockerConfig: undefined, plainHttp: ["127.0.0.1:5000"] }
const REF = "127.0.0.1:5000/aicr/bundles/cluster@sha256:" + "a".repeat(64)

describe("the bundle store as calls to the bundle process", () => {
  it("a pull sends the reference and settings, and the child's file tree is the bundle", async () => {
    const entry = child("pull", `{ ok: { files: { "README.md": "pulled " + request.reference }, modes: { "README.md": 420 } } }`)
    const exit = await Effect.runPromiseExit(processBundleStore(entry, settings, "aicr-resolver").pull(REF))
    expect(exit).toEqual(Exit.succeed({ files: { "README.md": `pulled ${REF}` }, modes: { "README.md": 420 } }))
    expect(standInRequest(dir, "pull")).toEqual({
      settings: { plainHttp: ["127.0.0.1:5000"] },
      userAgent: "aicr-resolver",
      reference: REF,
    })
  })

  it("a failure the child knows comes back as the same BundlePullError; a defect it reports is a defect", async () => {
    const refused = child("refused", `{ failed: { kind: "unauthorized", message: "denied: " + request.reference } }`)
    expect(await Effect.runPromiseExit(processBundleStore(refused, settings, "ua").pull(REF))).toEqual(
      Exit.fail(new BundlePullError({ kind: "unauthorized", message: `denied: ${REF}` })),
    )
    const broken = child("broken", `{ defect: "TypeError: broken" }`)
    const exit = await Effect.runPromiseExit(processBundleStore(broken, settings, "ua").pull(REF))
    expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
  })

  it("a child that ends without an answer is a transient BundlePullError naming its exit and stderr", async () => {
    const exit = await Effect.runPromiseExit(processBundleStore(join(dir, "missing.mjs"), settings, "ua").pull(REF))
    const e = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    expect(e).toBeInstanceOf(BundlePullError)
    expect(e).toMatchObject({ kind: "transient" })
    expect((e as BundlePullError).message).toMatch(
      /^the bundle process failed: .*missing\.mjs ended with exit code 1 without an answer: .*Cannot find module/su,
    )
  })

  it("the per-run credential is the docker config file, read without a child", async () => {
    const config = join(dir, "config.json")
    writeFileSync(config, JSON.stringify({ auths: { "127.0.0.1:5000": { auth: "dTpw" } } }))
    const store = processBundleStore(join(dir, "missing.mjs"), { dockerConfig: config, plainHttp: [] }, "ua")
    expect(await Effect.runPromise(store.credential())).toBe(readFileSync(config, "utf8"))
    expect(await Effect.runPromise(processBundleStore(join(dir, "missing.mjs"), settings, "ua").credential())).toBe('{"auths":{}}')
  })
})
