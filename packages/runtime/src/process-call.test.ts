import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { Data } from "effect"
import { callProcess, ProcessCallError, siblingProcess, taggedErrorFromWire, taggedErrorToWire } from "./process-call"

const dir = mkdtempSync(join(tmpdir(), "aicr-process-call-"))
const serveCallUrl = new URL("./process-call.ts", import.meta.url).href

/** A child entry: `serveCall` from this module (through tsx, as the test runs it) with `body` as its handler. */
const childScript = (name: string, body: string): string => {
  const file = join(dir, `${name}.mts`)
  writeFileSync(file, `import { serveCall } from ${JSON.stringify(serveCallUrl)}\nserveCall(async (request) => { ${body} })\n`)
  return file
}
/** A child that is not an answer server. */
const rawScript = (name: string, body: string): string => {
  const file = join(dir, `${name}.mjs`)
  writeFileSync(file, body)
  return file
}

// The children are TypeScript run through tsx's loader, as NODE_OPTIONS passes it on to them.
const saved = process.env["NODE_OPTIONS"]
const withTsx = () => {
  process.env["NODE_OPTIONS"] = `${saved ?? ""} --import tsx`.trim()
}
afterEach(() => {
  if (saved === undefined) delete process.env["NODE_OPTIONS"]
  else process.env["NODE_OPTIONS"] = saved
  delete process.env["AICR_PROCESS_CALL_TEST"]
})

describe("callProcess", () => {
  it("sends the request on stdin and resolves with the child's answer: a value, a known failure, or a defect", async () => {
    withTsx()
    const echo = childScript(
      "echo",
      `return request.fail ? { failed: { reason: request.fail } } : request.throw ? (() => { throw new Error(request.throw) })() : { ok: request.n * 2 }`,
    )
    await expect(callProcess(echo, { n: 21 })).resolves.toEqual({ ok: 42 })
    await expect(callProcess(echo, { fail: "Conflict" })).resolves.toEqual({ failed: { reason: "Conflict" } })
    const defect = await callProcess(echo, { throw: "broken" })
    expect(defect).toMatchObject({ defect: expect.stringContaining("Error: broken") })
  }, 60_000)

  it("the child sees the environment as it is at the call, not at the caller's start", async () => {
    withTsx()
    const env = childScript("env", `return { ok: process.env.AICR_PROCESS_CALL_TEST ?? null }`)
    await expect(callProcess(env, {})).resolves.toEqual({ ok: null })
    process.env["AICR_PROCESS_CALL_TEST"] = "rotated"
    await expect(callProcess(env, {})).resolves.toEqual({ ok: "rotated" })
  }, 60_000)

  it("a child that crashes, exits without an answer or answers something else is a ProcessCallError with its stderr", async () => {
    const crash = rawScript("crash", `process.stderr.write("out of luck\\n"); process.exit(3)`)
    await expect(callProcess(crash, {})).rejects.toThrow(ProcessCallError)
    await expect(callProcess(crash, {})).rejects.toThrow(/exit code 3 without an answer: out of luck/u)
    await expect(callProcess(crash, {})).rejects.toMatchObject({ ended: "ended with exit code 3" })
    const chatty = rawScript("chatty", `process.stdout.write("hello")`)
    await expect(callProcess(chatty, {})).rejects.toThrow(/exit code 0 without an answer/u)
    await expect(callProcess(join(dir, "missing.mjs"), {})).rejects.toThrow(/exit code 1 without an answer: .*Cannot find module/su)
  }, 60_000)

  it("an aborted call kills the child", async () => {
    const pidFile = join(dir, "hang.pid")
    const hang = rawScript(
      "hang",
      `import { writeFileSync } from "node:fs"\nwriteFileSync(${JSON.stringify(pidFile)}, String(process.pid))\nsetInterval(() => {}, 1000)`,
    )
    const abort = new AbortController()
    const call = callProcess(hang, {}, { signal: abort.signal })
    while (!existsSync(pidFile) || readFileSync(pidFile, "utf8") === "") await new Promise((r) => setTimeout(r, 20))
    const pid = Number(readFileSync(pidFile, "utf8"))
    abort.abort()
    await expect(call).rejects.toMatchObject({ name: "AbortError" })
    const alive = () => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive()).toBe(false)
  }, 60_000)
})

describe("siblingProcess", () => {
  it("is the bundled <name>.mjs next to the entry, or undefined when there is none (run from sources)", () => {
    const entry = pathToFileURL(join(dir, "main.mjs")).href
    expect(siblingProcess(entry, "sibling-process")).toBeUndefined()
    writeFileSync(join(dir, "sibling-process.mjs"), "")
    expect(siblingProcess(entry, "sibling-process")).toBe(join(dir, "sibling-process.mjs"))
  })
})

describe("tagged errors across the boundary", () => {
  class Down extends Data.TaggedError("Down")<{ readonly host: string; readonly why: string | undefined; readonly message: string }> {}
  class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}
  const fromWire = taggedErrorFromWire<Down | Refused>({ Down, Refused }, { Down: ["host"] })
  const across = (e: Down | Refused) => fromWire(JSON.parse(JSON.stringify(taggedErrorToWire(e))))

  it("come back as the same class with the same fields, an undefined field included", () => {
    for (const e of [
      new Down({ host: "h", why: "HTTP 503", message: "down" }),
      new Down({ host: "h", why: undefined, message: "down" }),
      new Refused({ message: "no" }),
    ]) {
      const back = across(e)
      expect(back).toBeInstanceOf(e.constructor)
      expect({ ...back }).toEqual({ ...e })
      expect(Object.keys(back!)).toEqual(Object.keys(e))
      expect(back?.message).toBe(e.message)
    }
    expect(taggedErrorToWire(new Down({ host: "h", why: undefined, message: "down" }))).toEqual({ _tag: "Down", host: "h", why: null, message: "down" })
  })

  it.each([
    { name: "not an object", wire: "Down" },
    { name: "an unknown tag", wire: { _tag: "Up", message: "x" } },
    { name: "a tag from Object's prototype", wire: { _tag: "toString", message: "x" } },
    { name: "no message", wire: { _tag: "Refused" } },
    { name: "a field neither a string nor null", wire: { _tag: "Down", host: 5, message: "x" } },
    { name: "a required field missing", wire: { _tag: "Down", message: "x" } },
  ])("$name is none of them (a defect for the caller)", ({ wire }) => {
    expect(fromWire(wire)).toBeUndefined()
  })
})
