import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit } from "effect"
import { standInProcess, standInRequest } from "@aicr/testing/harness"
import { describe, expect, it } from "vitest"
import { EvidenceError } from "./errors"
import { processRegistry, processSigner } from "./evidence-call"

const dir = mkdtempSync(join(tmpdir(), "aicr-evidence-call-"))
const child = (name: string, answer: string): string => standInProcess(dir, name, answer)
const settings = { dockerConfig: undefined, plainHttp: ["127.0.0.1:5000"] }
const run = <A>(e: Effect.Effect<A, EvidenceError>) => Effect.runPromiseExit(e)

describe("the registry and signer as calls to the evidence process", () => {
  it("a push goes over as JSON with the files' bytes, and the child's answer is the digest reference", async () => {
    const entry = child("push", `{ ok: request.push.repository + "@sha256:" + Buffer.from(request.push.files[0].bytes, "base64").toString() }`)
    const exit = await run(
      processRegistry(entry, settings, "aicr-validation-gate").push({
        repository: "127.0.0.1:5000/aicr/evidence/cluster",
        tag: "r-1",
        subject: undefined,
        files: [{ name: "binding.json", mediaType: "application/json", bytes: new TextEncoder().encode("abc") }],
        annotations: {},
      }),
    )
    expect(exit).toEqual(Exit.succeed("127.0.0.1:5000/aicr/evidence/cluster@sha256:abc"))
    expect(standInRequest(dir, "push")).toMatchObject({
      op: "push",
      userAgent: "aicr-validation-gate",
      settings: { plainHttp: ["127.0.0.1:5000"] },
      push: { tag: "r-1", files: [{ name: "binding.json", mediaType: "application/json", bytes: "YWJj" }] },
    })
  })

  it("a failure the child knows comes back as the same EvidenceError", async () => {
    const entry = child("refused", `{ failed: { transient: false, reason: "Unauthorized", message: "denied: " + request.ref } }`)
    const exit = await run(processRegistry(entry, settings, "ua").resolve("127.0.0.1:5000/aicr/bundles/cluster:x"))
    expect(exit).toEqual(Exit.fail(new EvidenceError({ transient: false, reason: "Unauthorized", message: "denied: 127.0.0.1:5000/aicr/bundles/cluster:x" })))
  })

  it("a signature request carries the payload in base64; a defect the child reports is a defect", async () => {
    const entry = child("sign", `{ defect: "Error: broken at " + Buffer.from(request.payload, "base64").toString() }`)
    const exit = await run(processSigner(entry, "awskms:///alias/k").sign(new TextEncoder().encode("binding")))
    expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
    expect(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : "")).toContain("Error: broken at binding")
  })

  it("a child that ends without an answer is a transient EvidenceProcessFailed naming its exit and stderr", async () => {
    const exit = await run(processRegistry(join(dir, "missing.mjs"), settings, "ua").resolve("r"))
    expect(Exit.isFailure(exit)).toBe(true)
    const e = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    expect(e).toBeInstanceOf(EvidenceError)
    expect(e).toMatchObject({ transient: true, reason: "EvidenceProcessFailed" })
    expect((e as EvidenceError).message).toMatch(
      /^the evidence process failed: .*missing\.mjs ended with exit code 1 without an answer: .*Cannot find module/su,
    )
  })
})
