#!/usr/bin/env node
// The developer entry point. Run it through Node 24 from the npm registry, as the README does:
//
//   npx -y node@24 hack/aicr-dev.mjs up     # set up, start the local control plane and helm install the operator on it
//   npx -y node@24 hack/aicr-dev.mjs test   # run every test tier (what .ci/run runs)
//
// Plain JavaScript with no dependencies: it runs before `npm ci`.
import { spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { constants } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const say = (msg) => process.stderr.write(`[aicr-dev] ${msg}\n`)
const fail = (msg) => {
  say(`error: ${msg}`)
  process.exit(1)
}

const major = Number(process.versions.node.split(".")[0])
if (major !== 24) fail(`Node 24 is required (this is ${process.version}); run through 'npx -y node@24 hack/aicr-dev.mjs …'`)

// `npx -y node@24` puts its node first on PATH, so npm, npx and every child script run on Node 24 too.
// State of the control plane `up` runs (kubeconfig, logs, audit log, etcd data).
const localDir = process.env.AICR_LOCAL_DIR ?? join(root, ".aicr", "local")
const env = {
  ...process.env,
  AICR_LOCAL_DIR: localDir,
  NX_DAEMON: "false",
  NX_NO_CLOUD: "true",
  NX_SKIP_NX_CACHE: process.env.CI ? "true" : process.env.NX_SKIP_NX_CACHE,
}

function run(cmd, args, opts = {}) {
  const started = Date.now()
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env, ...opts })
  if (r.error) fail(`${cmd} could not start: ${r.error.message}`)
  return { code: r.status ?? 1, seconds: (Date.now() - started) / 1000 }
}

function must(cmd, args, what) {
  const r = run(cmd, args)
  if (r.code !== 0) fail(`${what} failed (exit ${r.code})`)
  say(`${what}: ok in ${r.seconds.toFixed(1)}s`)
}

// npm ci only when the lockfile changed since the last install.
function ensureDeps() {
  const lock = readFileSync(join(root, "package-lock.json"))
  const hash = createHash("sha256").update(lock).update(process.version).digest("hex")
  const marker = join(root, "node_modules", ".aicr-lock-hash")
  if (existsSync(marker) && readFileSync(marker, "utf8") === hash) return
  must("npm", ["ci", "--no-audit", "--no-fund"], "npm ci")
  mkdirSync(dirname(marker), { recursive: true })
  writeFileSync(marker, hash)
}

// Workspace tools straight from node_modules/.bin: no npx resolution (which may try to fetch packages) in between.
const bin = (name) => join(root, "node_modules", ".bin", name)

const buildTools = () => must("bash", [join(root, "hack/build-tools.sh")], "real components (build or cache)")
const tsx = (args) => run(bin("tsx"), args)

// Runs a long-lived child and passes on the signals a terminal or a process manager sends this process (SIGINT,
// SIGTERM, SIGHUP), so the child stops what it started; exits with the child's status. (spawnSync would leave this
// process blocked and the child running when only this process gets the signal.)
function forwardSignals(cmd, args) {
  const child = spawn(cmd, args, { cwd: root, stdio: "inherit", env })
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal))
  child.on("error", (e) => fail(`${cmd} could not start: ${e.message}`))
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 1)))
}

function up(rest) {
  ensureDeps()
  buildTools()
  // The controllers run as they ship: one esbuild bundle each.
  must(bin("tsx"), ["hack/build-apps.ts"], "controller bundles (dist/apps)")
  forwardSignals(bin("tsx"), ["hack/up.ts", ...rest])
}

function down() {
  ensureDeps()
  process.exit(tsx(["hack/down.ts"]).code)
}

function test(rest) {
  ensureDeps()
  buildTools()
  // Static checks first: they are fast and catch most mistakes.
  must(bin("nx"), ["show", "projects"], "nx project graph")
  must(process.execPath, ["hack/check-conflict-markers.mjs"], "lint (no merge-conflict markers)")
  must(bin("eslint"), ["--max-warnings=0", "."], "lint (module boundaries)")
  must(bin("prettier"), ["--check", "**/*.{ts,mjs}", "--log-level", "warn"], "format (prettier, 160 columns)")
  must(bin("tsc"), ["-p", "tsconfig.json", "--noEmit"], "typecheck")
  const reportDir = join(root, "node_modules", ".aicr-test-reports")
  mkdirSync(reportDir, { recursive: true })
  const tiers = rest.length > 0 ? rest : ["unit", "component", "int", "e2e"]
  const totals = { passed: 0, failed: 0, skipped: 0 }
  const lines = []
  const failures = []
  let exit = 0
  for (const tier of tiers) {
    const out = join(reportDir, `${tier}.json`)
    const r = run(bin("vitest"), ["run", "--project", tier, "--reporter=default", "--reporter=json", `--outputFile.json=${out}`])
    const { counts, failed } = readReport(out)
    failures.push(...failed.map((f) => `${tier.padEnd(9)} ${f}`))
    totals.passed += counts.passed
    totals.failed += counts.failed
    totals.skipped += counts.skipped
    lines.push(
      `${tier.padEnd(9)} ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped (${counts.files} test files, ${r.seconds.toFixed(0)}s)`,
    )
    if (r.code !== 0) exit = r.code
    if (counts.passed + counts.failed === 0) {
      lines.push(`${tier.padEnd(9)} ran no test: that is a failure`)
      exit = exit || 1
    }
  }
  // CI keeps only the tail of the output: name every failed test there, with the first line of its failure.
  if (failures.length > 0) process.stdout.write(`\nFailed:\n${failures.map((l) => `  ${l}`).join("\n")}\n`)
  process.stdout.write(`\nTest tiers:\n${lines.map((l) => `  ${l}`).join("\n")}\n`)
  // The plain closing line, alone on its line.
  process.stdout.write(`\ntotal: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`)
  process.exit(exit)
}

// A tier's vitest JSON report: its counts, and "file › test name: first line of the failure" for each failed test
// (one line for a file that failed outside any test: an import error, a failing hook).
function readReport(file) {
  if (!existsSync(file)) return { counts: { passed: 0, failed: 0, skipped: 0, files: 0 }, failed: [] }
  const j = JSON.parse(readFileSync(file, "utf8"))
  const firstLine = (text) =>
    (text ?? "")
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim()
      .slice(0, 300) ?? ""
  const failed = (j.testResults ?? []).flatMap((f) => {
    const name = relative(root, f.name ?? "")
    const tests = (f.assertionResults ?? []).filter((t) => t.status === "failed").map((t) => `${name} › ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`)
    return tests.length === 0 && f.status === "failed" ? [`${name}: ${firstLine(f.message)}`] : tests
  })
  return {
    counts: {
      passed: j.numPassedTests ?? 0,
      failed: j.numFailedTests ?? 0,
      skipped: (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0),
      files: Array.isArray(j.testResults) ? j.testResults.length : 0,
    },
    failed,
  }
}

function build(rest) {
  ensureDeps()
  process.exit(tsx(["hack/build-apps.ts", ...rest]).code)
}

function bench(rest) {
  ensureDeps()
  buildTools()
  process.exit(tsx(["hack/bench.ts", ...rest]).code)
}

const [cmd = "help", ...rest] = process.argv.slice(2)
switch (cmd) {
  case "up":
    up(rest)
    break
  case "down":
    down()
    break
  case "test":
    test(rest)
    break
  case "build":
    build(rest)
    break
  case "bench":
    bench(rest)
    break
  case "tools":
    buildTools()
    break
  default:
    process.stdout.write(
      [
        "usage: npx -y node@24 hack/aicr-dev.mjs <command>",
        "  up [--detach]   build the real components (cached), start the local control plane, build the operator's",
        "                  images and helm install its chart, apply the sample ClusterRuntime; Ctrl-C stops everything",
        "  down            stop a control plane started with 'up --detach'",
        "  test [tier…]    lint, typecheck and run the test tiers (unit component int e2e); CI runs exactly this",
        "  build [app…]    bundle each app as it ships (esbuild, ESM, code splitting) into dist/apps/<app>/",
        "  bench           run the benchmarks",
        "  tools           build or verify the cached real components only",
        "",
      ].join("\n"),
    )
    process.exit(cmd === "help" ? 0 : 2)
}
