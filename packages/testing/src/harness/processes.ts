/**
 * Child processes of a controller (`callProcess` in @aicr/runtime) as tests drive them: a stand-in that answers what
 * the test says and records the request it got, and the shipped process behind a wrapper that records each start's
 * pid, to show where the calls ran.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/**
 * Writes `<dir>/<name>.mjs`: reads the JSON request from stdin, writes it to `<dir>/<name>.request.json`, and answers
 * `answer`, a JavaScript expression over `request`. Returns the file.
 */
export const standInProcess = (dir: string, name: string, answer: string): string => {
  const file = join(dir, `${name}.mjs`)
  writeFileSync(
    file,
    `import { writeFileSync } from "node:fs"
let input = ""
process.stdin.on("data", (b) => (input += b))
process.stdin.on("end", () => {
  const request = JSON.parse(input)
  writeFileSync(${JSON.stringify(join(dir, `${name}.request.json`))}, input)
  process.stdout.write(JSON.stringify(${answer}))
})
`,
  )
  return file
}

/** The request a stand-in of `standInProcess(dir, name, …)` last got. */
export const standInRequest = (dir: string, name: string): unknown => JSON.parse(readFileSync(join(dir, `${name}.request.json`), "utf8"))

/**
 * `entry` (a shipped process, e.g. `evidence-process.mjs`) behind a wrapper in `dir` that appends its pid to a log
 * before loading it. `entry` is the wrapper to start; `pids()` the pids of every start so far.
 */
export const recordedProcess = (dir: string, shipped: string): { readonly entry: string; readonly pids: () => number[] } => {
  const name = shipped
    .split("/")
    .at(-1)!
    .replace(/\.mjs$/u, "")
  const log = join(dir, `${name}-starts.log`)
  const entry = join(dir, `${name}-recorded.mjs`)
  writeFileSync(
    entry,
    `import { appendFileSync } from "node:fs"\nappendFileSync(${JSON.stringify(log)}, process.pid + "\\n")\nawait import(${JSON.stringify(shipped)})\n`,
  )
  return {
    entry,
    pids: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map(Number) : []),
  }
}
