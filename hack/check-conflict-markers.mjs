#!/usr/bin/env node
// Lint step: refuses committed merge-conflict markers in any tracked text file (code, docs, YAML, charts). A line
// `<<<<<<< `, `||||||| ` or `>>>>>>> ` (diff3 style included) is a marker anywhere; a bare `=======` line only in a file
// that also holds an opening marker (Markdown may underline a heading with it).
// Run: node hack/check-conflict-markers.mjs [files…]   (no files: every file `git ls-files` lists)
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : execFileSync("git", ["ls-files", "-z"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
        .split("\0")
        .filter(Boolean)

const OPEN = /^<{7}(?: |$)/u
const OTHER = /^(?:\|{7}|>{7})(?: |$)/u
const found = []
for (const file of files) {
  let text
  try {
    text = readFileSync(file)
  } catch {
    continue // deleted in the work tree
  }
  if (text.includes(0)) continue // binary
  const lines = text.toString("utf8").split("\n")
  const opened = lines.some((l) => OPEN.test(l))
  lines.forEach((l, i) => {
    if (OPEN.test(l) || OTHER.test(l) || (opened && l === "=======")) found.push(`${file}:${i + 1}: ${l.slice(0, 40)}`)
  })
}
if (found.length > 0) {
  process.stderr.write(`Merge-conflict markers (resolve them, keeping the true content of both sides):\n${found.join("\n")}\n`)
  process.exit(1)
}
