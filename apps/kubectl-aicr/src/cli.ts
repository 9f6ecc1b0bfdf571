/**
 * `kubectl-aicr`'s process entry (bundled into one executable file with a node shebang; see docs/plugin.md).
 * Invoked as `kubectl_complete-aicr` (a link kubectl runs for plugin completion) it prints completion candidates.
 */
import { basename } from "node:path"
import { run } from "./program"

const invokedAs = basename(process.argv[1] ?? "")
const args = process.argv.slice(2)
const terminal = { tty: process.stdout.isTTY === true, columns: process.stdout.columns ?? 100 }
const code = await run(
  invokedAs.startsWith("kubectl_complete-") ? ["__complete", ...args] : args,
  (s) => process.stdout.write(s),
  (s) => process.stderr.write(s),
  terminal,
)
process.exitCode = code
