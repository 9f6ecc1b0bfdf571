import { randomBytes } from "node:crypto"
import { gunzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { findInTgz, gzip, readTar, readTgz, writeTar, writeTgz } from "./tar"

const file = (path: string, text: string | Buffer) => ({ path, data: typeof text === "string" ? Buffer.from(text) : text })
const isChartYaml = (p: string) => /^[^/]+\/Chart\.yaml$/.test(p)

describe("tar writer and reader", () => {
  it("round-trips files in the order given", () => {
    const files = [file("demo/Chart.yaml", "name: demo\n"), file("demo/values.yaml", "replicas: 1\n"), file("demo/empty", "")]
    expect([...readTgz(writeTgz(files))].map((e) => [e.path, e.data.toString()])).toEqual(files.map((f) => [f.path, f.data.toString()]))
  })

  it("writes deterministic archives: uid/gid 0, the epoch unless told, gzip header mtime 0", () => {
    const files = [file("a/b", "x")]
    expect(writeTgz(files)).toEqual(writeTgz(files))
    const header = writeTar(files).subarray(0, 512)
    expect(header.subarray(136, 148).toString()).toBe("00000000000\0")
    expect(
      writeTar(files, { mtime: new Date("2026-01-01T00:00:00Z") })
        .subarray(136, 148)
        .toString(),
    ).toBe(`${(1767225600).toString(8).padStart(11, "0")}\0`)
    expect(writeTgz(files).readUInt32LE(4)).toBe(0)
    expect(gunzipSync(gzip(writeTar(files)))).toEqual(writeTar(files))
  })

  it("keeps modes and splits long paths into ustar's prefix and name", () => {
    const long = `${"d".repeat(120)}/run.sh`
    const tar = writeTar([file(long, "#!/bin/sh\n")], { modes: { [long]: 0o755 } })
    expect(tar.subarray(100, 108).toString()).toBe("0000755\0")
    expect([...readTar(tar)].map((e) => e.path)).toEqual([long])
    expect(() => writeTar([file(`${"d".repeat(200)}/x`, "")])).toThrow(/too long/)
  })

  it("writes each directory's entry once, parents first, before its first file, only when asked", () => {
    const files = [file("a/b/c.txt", "1"), file("a/d.txt", "2"), file("e.txt", "3")]
    const tar = writeTar(files, { directories: true, modes: { "e.txt": 0o755 } })
    const heads: string[] = []
    for (let off = 0; off + 512 <= tar.length;) {
      const h = tar.subarray(off, off + 512)
      if (h.every((b) => b === 0)) break
      heads.push(`${String.fromCharCode(h[156]!)} ${h.subarray(100, 107).toString()} ${h.subarray(0, 100).toString().replace(/\0+$/, "")}`)
      off += 512 + Math.ceil(parseInt(h.subarray(124, 135).toString(), 8) / 512) * 512
    }
    expect(heads).toEqual(["5 0000755 a/", "5 0000755 a/b/", "0 0000644 a/b/c.txt", "0 0000644 a/d.txt", "0 0000755 e.txt"])
    expect([...readTar(tar)].map((e) => e.path)).toEqual(["a/b/c.txt", "a/d.txt", "e.txt"])
    expect(writeTar(files).length).toBe(512 * 3 + 512 * 3 + 1024)
  })

  it("refuses a truncated archive", () => {
    const tar = writeTar([file("a/b", "x".repeat(2000))])
    expect(() => [...readTar(tar.subarray(0, 1024))]).toThrow(/Truncated/)
  })
})

describe("findInTgz", () => {
  it("finds a file at the start of a large archive", () => {
    const tgz = writeTgz([file("x/Chart.yaml", "name: x\nversion: 1.0.0\n"), file("x/big.bin", randomBytes(6 * 1024 * 1024))])
    expect(findInTgz(tgz, isChartYaml)?.toString()).toBe("name: x\nversion: 1.0.0\n")
  })

  it("finds a file after a large incompressible one", () => {
    const tgz = writeTgz([file("x/big.bin", randomBytes(3 * 1024 * 1024)), file("x/Chart.yaml", "name: x\n")])
    expect(findInTgz(tgz, isChartYaml)?.toString()).toBe("name: x\n")
  })

  it("returns undefined when no file matches, and throws for what is not a gzipped tar", () => {
    expect(findInTgz(writeTgz([file("x/values.yaml", "a: 1\n")]), isChartYaml)).toBeUndefined()
    expect(findInTgz(writeTgz([file("x/values.yaml", "a: 1\n"), file("x/big.bin", randomBytes(300 * 1024))]), isChartYaml)).toBeUndefined()
    expect(() => findInTgz(Buffer.from("not gzip"), isChartYaml)).toThrow()
  })
})
