import { Readable, Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { describe, expect, it } from "vitest"
import { isOciError, type OciError } from "./errors"
import { DigestStream, digestOf, verifyBytes } from "./digest"
import { nextLink, parseLinkHeader } from "./link"
import { parseUploadRange, rechunk } from "./upload"

const target = { registry: "r", repository: "a" }
const sink = () =>
  new Writable({
    write(_c, _e, done) {
      done()
    },
  })

const run = async (chunks: Buffer[], expected?: { digest: string; size?: number }) => {
  const v = new DigestStream(target, "sha256", expected)
  let passed = 0
  v.on("data", (c: Buffer) => (passed += c.length))
  try {
    await pipeline(Readable.from(chunks), v, sink())
    return { ok: true as const, digest: v.digest, size: v.size, passed }
  } catch (e) {
    return { ok: false as const, error: e as OciError, passed }
  }
}

describe("DigestStream", () => {
  const data = Buffer.from("hello, registry")
  const good = { digest: digestOf(data), size: data.length }

  it("passes content through and ends cleanly when it matches", async () => {
    const r = await run([data.subarray(0, 5), data.subarray(5)], good)
    expect(r).toMatchObject({ ok: true, digest: good.digest, size: data.length, passed: data.length })
  })

  it.each([
    { name: "a flipped byte fails at the end with DigestMismatch", chunks: [Buffer.from("hello, registrY")], expected: good },
    { name: "missing bytes fail at the end", chunks: [data.subarray(0, 10)], expected: good },
    { name: "a size-less expectation still checks the digest", chunks: [Buffer.from("other")], expected: { digest: good.digest } },
  ])("$name", async ({ chunks, expected }) => {
    const r = await run(chunks, expected)
    expect(r.ok).toBe(false)
    expect(isOciError(r.ok ? undefined : r.error, "DigestMismatch")).toBe(true)
  })

  it("fails as soon as more bytes than expected arrive, before passing them on", async () => {
    const r = await run([data, Buffer.alloc(1024 * 1024)], good)
    expect(r.ok).toBe(false)
    expect(r.passed).toBe(data.length)
    expect(r.ok ? undefined : r.error.reason).toMatchObject({ _tag: "DigestMismatch", expected: good.digest })
  })

  it("only measures when nothing is expected", async () => {
    const r = await run([data], undefined)
    expect(r).toMatchObject({ ok: true, digest: good.digest, size: data.length })
  })

  it("verifies bytes in memory and reports the actual digest on mismatch", () => {
    expect(() => verifyBytes(data, good, target)).not.toThrow()
    try {
      verifyBytes(Buffer.from("x"), good, target)
      expect.unreachable()
    } catch (e) {
      expect((e as OciError).reason).toEqual({ _tag: "DigestMismatch", expected: good.digest, actual: digestOf("x") })
    }
  })
})

describe("Link header pagination", () => {
  it.each([
    { name: "a next link is found", header: '</v2/demo/tags/list?n=2&last=b>; rel="next"', want: "/v2/demo/tags/list?n=2&last=b" },
    { name: "an unquoted rel works", header: "</v2/_catalog?last=x&n=1>; rel=next", want: "/v2/_catalog?last=x&n=1" },
    { name: "next is picked among several links", header: '<https://r/a?p=1>; rel="prev", <https://r/a?p=3>; rel="next"', want: "https://r/a?p=3" },
    { name: "a rel with several types includes next", header: '</x>; rel="last next"', want: "/x" },
    { name: "no next link means the last page", header: '</v2/x>; rel="prev"', want: undefined },
    { name: "no header means the last page", header: undefined, want: undefined },
  ])("$name", ({ header, want }) => {
    expect(nextLink(header)).toBe(want)
  })

  it("keeps every parameter of a link", () => {
    expect(parseLinkHeader('</a>; rel="next"; type="application/json"')).toEqual([{ target: "/a", params: { rel: "next", type: "application/json" } }])
  })
})

describe("upload helpers", () => {
  it.each([
    { name: "chunks are re-cut to the requested size", input: [3, 3, 3], size: 4, want: [4, 4, 1] },
    { name: "a large chunk is split", input: [10], size: 4, want: [4, 4, 2] },
    { name: "exact multiples leave no tail", input: [2, 2, 4], size: 4, want: [4, 4] },
    { name: "an empty source yields nothing", input: [], size: 4, want: [] },
  ])("$name", async ({ input, size, want }) => {
    let n = 0
    const chunks = input.map((len) => Buffer.from(Array.from({ length: len }, () => n++ % 256)))
    const out: Buffer[] = []
    for await (const c of rechunk(chunks, size)) out.push(c)
    expect(out.map((c) => c.length)).toEqual(want)
    expect(Buffer.concat(out)).toEqual(Buffer.concat(chunks))
  })

  it.each([
    { range: "0-1023", want: 1024 },
    { range: "bytes=0-0", want: 1 },
    { range: "5-10", want: undefined },
    { range: undefined, want: undefined },
  ])("reads the upload progress $range as $want bytes", ({ range, want }) => {
    expect(parseUploadRange(range)).toBe(want)
  })
})
