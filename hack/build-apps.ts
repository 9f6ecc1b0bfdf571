/**
 * `npm run build` (`hack/aicr-dev.mjs build [app…]`, or `npx tsx hack/build-apps.ts [app…]`): bundles each
 * `apps/<name>/src/main.ts` into `dist/apps/<name>/` with esbuild: ESM with code splitting (code reached only
 * through a dynamic `import()`, such as client-node's exotic kubeconfig logins, stays in a chunk that is loaded on
 * demand), Node 24, tree-shaken, minified, source maps beside each chunk, and `meta.json` (esbuild's metafile, for
 * https://esbuild.github.io/analyze/). Run with `node --enable-source-maps dist/apps/<name>/main.mjs` for source
 * positions in stack traces. No app argument: every app with a `src/main.ts`. Prints each app's entry size, what it
 * loads at start and the total, chunk by chunk with the packages that weigh most in each.
 *
 * Also a library: `buildApp(name, outdir)` and `bundleOptions` for tests and benchmarks that need the bundle as it
 * ships.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build, type BuildOptions, type Metafile, type Plugin } from "esbuild"

const root = join(fileURLToPath(new URL(".", import.meta.url)), "..")

// Bundled CommonJS code (pino, prom-client, …) calls `require` for Node's built-ins; an ES module has none.
const banner = 'import { createRequire as __aicrCreateRequire } from "node:module"; const require = __aicrCreateRequire(import.meta.url);'

/**
 * Node's built-ins reached by a static `import` are loaded with `require` instead. An ES module `import` of a
 * built-in, even `import { request } from "node:http"`, builds the whole export namespace and so runs every lazy
 * getter: node:http's `WebSocket`, `MessageEvent` and `CloseEvent` load Node's internal undici (+13.7 MiB RSS on
 * Node 24.21, against +3.8 MiB for `require("node:http")`); node:fs's `promises` and node:util's getters cost
 * ~3.5 MiB more each. As a CommonJS module the built-in's exports are read only where they are used. A dynamic
 * `import()` of a built-in is left as it is: a split bundle would give it only a `default` export
 * (evanw/esbuild#3245).
 */
const builtinsViaRequire: Plugin = {
  name: "node-builtins-via-require",
  setup(b) {
    b.onResolve({ filter: /^(?:node:)?[a-z_/]+$/ } /* a Go regular expression: no flags */, (args) => {
      if (args.kind !== "import-statement" || !isBuiltin(args.path)) return undefined
      return { path: args.path.replace(/^node:/u, ""), namespace: "node-builtin" }
    })
    b.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => ({ contents: `module.exports = require("node:${args.path}")`, loader: "js" }))
  },
}

/**
 * The esbuild options every app ships with (also used by the memory benchmarks, so they measure what ships): ESM
 * with code splitting for Node 24, tree-shaken and minified, built-ins through `require`, linked source maps and a
 * metafile. Add `entryPoints` and `outdir`.
 */
export const bundleOptions = {
  absWorkingDir: root,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node24",
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunks/[name]-[hash]",
  treeShaking: true,
  minify: true,
  sourcemap: "linked",
  metafile: true,
  banner: { js: banner },
  plugins: [builtinsViaRequire],
  logLevel: "warning",
} satisfies BuildOptions

/** One JavaScript file of a build. */
export interface Chunk {
  /** Relative to the build's outdir. */
  readonly file: string
  readonly bytes: number
  /** Loaded when the process starts (the entry and what it imports statically), or only by a dynamic `import()`. */
  readonly atStart: boolean
  /** The packages (or workspace folders) with the most bytes in it, largest first. */
  readonly biggest: ReadonlyArray<string>
}

/** What one build wrote. Sizes in bytes of the JavaScript chunks (source maps and the metafile not counted). */
export interface AppBuild {
  readonly app: string
  readonly outdir: string
  /** The process entry: `node <entry>`. */
  readonly entry: string
  readonly entryBytes: number
  /** The entry and every chunk it imports statically: the code a process loads before doing anything. */
  readonly atStartBytes: number
  readonly totalBytes: number
  readonly chunks: ReadonlyArray<Chunk>
  readonly metafile: Metafile
}

/** Every app with a process entry (`apps/<name>/src/main.ts`). */
export const apps = (): string[] =>
  readdirSync(join(root, "apps"), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, "apps", d.name, "src", "main.ts")))
    .map((d) => d.name)
    .sort()

const owner = (input: string): string => /node_modules\/((?:@[^/]+\/)?[^/]+)/u.exec(input)?.[1] ?? /^((?:apps|packages)\/[^/]+)/u.exec(input)?.[1] ?? input

const describeChunks = (metafile: Metafile, outdir: string): Chunk[] => {
  const outputs = Object.entries(metafile.outputs).filter(([file]) => file.endsWith(".mjs"))
  // main.mjs: a chunk reached by a dynamic `import()` has an `entryPoint` in the metafile too.
  const entry = outputs.find(([file]) => relative(outdir, join(root, file)) === "main.mjs")?.[0]
  const atStart = new Set<string>()
  const visit = (file: string) => {
    if (atStart.has(file)) return
    atStart.add(file)
    for (const i of metafile.outputs[file]?.imports ?? []) if (i.kind === "import-statement" && i.path in metafile.outputs) visit(i.path)
  }
  if (entry !== undefined) visit(entry)
  return outputs
    .map(([file, out]) => {
      const by = new Map<string, number>()
      for (const [input, v] of Object.entries(out.inputs))
        if (!input.startsWith("node-builtin:")) by.set(owner(input), (by.get(owner(input)) ?? 0) + v.bytesInOutput)
      const biggest = [...by]
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([k]) => k)
      return { file: relative(outdir, join(root, file)), bytes: out.bytes, atStart: atStart.has(file), biggest }
    })
    .sort((a, b) => Number(b.atStart) - Number(a.atStart) || b.bytes - a.bytes)
}

/** Bundles one app into `outdir` (default `dist/apps/<app>`), replacing what was there. */
export const buildApp = async (app: string, outdir = join(root, "dist", "apps", app)): Promise<AppBuild> => {
  const main = join(root, "apps", app, "src", "main.ts")
  if (!existsSync(main)) throw new Error(`apps/${app}/src/main.ts does not exist`)
  rmSync(outdir, { recursive: true, force: true })
  // A second process of the app (`src/<name>-process.ts`, e.g. the validation gate's evidence process) is bundled
  // next to main.mjs as `<name>-process.mjs`, sharing its chunks.
  const processes = readdirSync(join(root, "apps", app, "src"))
    .filter((f) => f.endsWith("-process.ts"))
    .map((f) => [f.slice(0, -".ts".length), join(root, "apps", app, "src", f)] as const)
  const result = await build({ ...bundleOptions, entryPoints: { main, ...Object.fromEntries(processes) }, outdir })
  writeFileSync(join(outdir, "meta.json"), JSON.stringify(result.metafile))
  const chunks = describeChunks(result.metafile, outdir)
  const sum = (cs: readonly Chunk[]) => cs.reduce((n, c) => n + c.bytes, 0)
  return {
    app,
    outdir,
    entry: join(outdir, "main.mjs"),
    entryBytes: chunks.find((c) => c.file === "main.mjs")?.bytes ?? 0,
    atStartBytes: sum(chunks.filter((c) => c.atStart)),
    totalBytes: sum(chunks),
    chunks,
    metafile: result.metafile,
  }
}

/** Every command-line app (`apps/<name>/src/cli.ts`), shipped as one executable file. */
export const cliApps = (): string[] =>
  readdirSync(join(root, "apps"), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, "apps", d.name, "src", "cli.ts")))
    .map((d) => d.name)
    .sort()

/**
 * Bundles a command-line app into ONE executable file `outdir/<app>` (default `dist/apps/<app>/<app>`): ESM without
 * splitting (dynamic imports are inlined), a `#!/usr/bin/env node` shebang (Node ≥ 24), mode 0755, no source map.
 */
export const buildCli = async (app: string, outdir = join(root, "dist", "apps", app)): Promise<{ readonly file: string; readonly bytes: number }> => {
  const entry = join(root, "apps", app, "src", "cli.ts")
  if (!existsSync(entry)) throw new Error(`apps/${app}/src/cli.ts does not exist`)
  rmSync(outdir, { recursive: true, force: true })
  mkdirSync(outdir, { recursive: true })
  const file = join(outdir, app)
  await build({
    ...bundleOptions,
    splitting: false,
    sourcemap: false,
    metafile: false,
    entryPoints: [entry],
    outfile: file,
    outExtension: {},
    banner: { js: `#!/usr/bin/env node\n${banner}` },
  })
  chmodSync(file, 0o755)
  return { file, bytes: statSync(file).size }
}

export const kib = (n: number): string => `${(n / 1024).toFixed(0)} KiB`

/** The lines `npm run build` prints for one app. */
export const summary = (b: AppBuild): string[] => [
  `${b.app}: ${relative(root, b.entry)} ${kib(b.entryBytes)}; loaded at start ${kib(b.atStartBytes)}; total ${kib(b.totalBytes)} in ${b.chunks.length} files`,
  ...b.chunks.map(
    (c) =>
      `  ${c.atStart ? "start " : "demand"} ${c.file.padEnd(42)} ${kib(c.bytes).padStart(8)}  ${c.biggest.join(", ") || "(esbuild helpers, Node built-ins)"}`,
  ),
]

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const wanted = process.argv.slice(2)
  const known = apps()
  const clis = cliApps()
  const unknown = wanted.filter((a) => !known.includes(a) && !clis.includes(a))
  if (unknown.length > 0) {
    process.stderr.write(`build-apps: unknown app ${unknown.join(", ")}; known: ${[...known, ...clis].join(", ")}\n`)
    process.exit(2)
  }
  for (const app of (wanted.length > 0 ? wanted : clis).filter((a) => clis.includes(a))) {
    const t0 = performance.now()
    const b = await buildCli(app)
    process.stdout.write(
      `${app}: ${relative(root, b.file)} ${kib(b.bytes)}, one executable file (#!/usr/bin/env node, Node >= 24)\n  (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`,
    )
  }
  for (const app of (wanted.length > 0 ? wanted : known).filter((a) => known.includes(a))) {
    const t0 = performance.now()
    const b = await buildApp(app)
    process.stdout.write(`${summary(b).join("\n")}\n  (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`)
  }
}
