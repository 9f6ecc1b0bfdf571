/**
 * The operator's processes on the local control plane (`aicr-dev up`): the local chart upstream that stands in for
 * the public chart repositories (run from source), and every controller built so far, each as its own process from
 * its shipped bundle in dist/apps/, as in a cluster.
 *
 * Each runs in its own process group with its log in `<dir>/logs/<name>.log`. Attached (foreground `up`), a
 * watchdog stops them when `up` exits, even on SIGKILL; detached (`up --detach`), they are recorded in
 * `<dir>/operator.json` and `aicr-dev down` stops them.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { adoptProc, applyManifests, ARGOCD_NAMESPACE, type HarnessInfo, type Proc, RUNTIME_PREFIX, runtimeRepositories, spawnProc } from "@aicr/testing/harness"

export const OPERATOR_NAMESPACE = "aicr-system"
/** The runtime registry prefix (chart value `registry.repository`) on the local control plane. */
export const registryPrefix = (info: HarnessInfo) => `oci://${info.registry}/${RUNTIME_PREFIX}`

/** The operator's AppProject (chart value engine.project). */
export const ENGINE_PROJECT = "aicr"

/**
 * The AppProject the operator's chart creates and keeps (operator.md §6): sources only the runtime registry's charts
 * and wrappers, the in-cluster destination only; the step-executor only reads it (ProjectMissing without it).
 */
export const installEngineProject = (info: HarnessInfo, namespaces: ReadonlyArray<string> = ["*"]) =>
  applyManifests(info, [
    {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "AppProject",
      metadata: { name: ENGINE_PROJECT, namespace: ARGOCD_NAMESPACE },
      spec: {
        sourceRepos: runtimeRepositories(info),
        destinations: namespaces.map((namespace) => ({ server: "https://kubernetes.default.svc", namespace })),
        clusterResourceWhitelist: [{ group: "*", kind: "*" }],
      },
    },
  ])

const root = join(import.meta.dirname, "..")
const tsxLoader = createRequire(import.meta.url).resolve("tsx")
const stateFile = (dir: string) => join(dir, "operator.json")

interface Recorded {
  readonly name: string
  readonly pid: number
  readonly bin: string
  readonly log: string
}

/** A process of this Node (so its argv[0], which the stop path checks, is this Node's path). */
const startNode = (name: string, args: string[], dir: string, attached: boolean): Promise<Proc> =>
  spawnProc({ name, bin: process.execPath, args, logDir: join(dir, "logs"), cwd: root, attached })

/** A TypeScript entry point, run with the tsx loader in one process. */
const startTs = (name: string, script: string, args: string[], dir: string, attached: boolean): Promise<Proc> =>
  startNode(name, ["--import", tsxLoader, join(root, script), ...args], dir, attached)

/** A controller as it ships: its esbuild bundle (built by `aicr-dev up` before this runs). */
const startApp = (name: string, args: string[], dir: string, attached: boolean): Promise<Proc> => {
  const bundle = join(root, "dist", "apps", name, "main.mjs")
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: build it with 'npx tsx hack/build-apps.ts ${name}'`)
  return startNode(name, ["--enable-source-maps", bundle, ...args], dir, attached)
}

/** Waits for the first JSON line the chart upstream prints once it serves. */
const upstreamInfo = async (p: Proc): Promise<{ httpUrl: string; rewrites: Record<string, string> }> => {
  for (let i = 0; i < 300; i++) {
    if (!p.isAlive()) throw new Error(`chart upstream exited:\n${p.tail()}`)
    const line = existsSync(p.log) ? readFileSync(p.log, "utf8").split("\n").find((l) => l.startsWith("{")) : undefined
    if (line) return JSON.parse(line)
    await sleep(100)
  }
  throw new Error(`chart upstream did not start within 30s:\n${p.tail()}`)
}

export interface LocalOperator {
  readonly procs: ReadonlyArray<Proc>
  readonly upstream: string
  stop(): Promise<void>
}

export const startLocalOperator = async (info: HarnessInfo, opts: { dir: string; attached: boolean }): Promise<LocalOperator> => {
  await stopLocalOperator(opts.dir)
  const procs: Proc[] = []
  const record = () =>
    writeFileSync(stateFile(opts.dir), JSON.stringify(procs.map(({ name, pid, bin, log }): Recorded => ({ name, pid, bin, log }))))
  try {
    const upstream = await startTs("chart-upstream", "packages/chart-upstream/src/cli.ts", ["--oci-registry", info.registry], opts.dir, opts.attached)
    procs.push(upstream)
    record()
    const served = await upstreamInfo(upstream)

    const runtimeFlags = (name: string) => [
      "--kubeconfig", info.kubeconfig,
      "--metrics-bind-address", "127.0.0.1:0",
      "--health-probe-bind-address", "127.0.0.1:0",
      "--leader-election-namespace", OPERATOR_NAMESPACE,
      "--leader-election-id", `aicr-${name}`,
    ]
    const mirror = await startApp(
      "registry-mirror",
      [
        ...runtimeFlags("registry-mirror"),
        "--registry", registryPrefix(info),
        "--operator-namespace", OPERATOR_NAMESPACE,
        ...Object.entries(served.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
      ],
      opts.dir,
      opts.attached,
    )
    procs.push(mirror)
    record()
    const guard = await startApp("approval-guard", [...runtimeFlags("approval-guard"), "--operator-namespace", OPERATOR_NAMESPACE], opts.dir, opts.attached)
    procs.push(guard)
    record()
    const executor = await startApp(
      "step-executor",
      [...runtimeFlags("step-executor"), "--operator-namespace", OPERATOR_NAMESPACE, "--engine-namespace", ARGOCD_NAMESPACE, "--engine-project", ENGINE_PROJECT],
      opts.dir,
      opts.attached,
    )
    procs.push(executor)
    record()
    return { procs, upstream: served.httpUrl, stop: async () => void (await stopLocalOperator(opts.dir)) }
  } catch (e) {
    await Promise.all(procs.map((p) => p.stop()))
    rmSync(stateFile(opts.dir), { force: true })
    throw e
  }
}

/** Stops the operator processes recorded in dir (from this run or an earlier detached one); returns how many. */
export const stopLocalOperator = async (dir: string): Promise<number> => {
  if (!existsSync(stateFile(dir))) return 0
  const recorded = JSON.parse(readFileSync(stateFile(dir), "utf8")) as Recorded[]
  const procs = recorded.map((r) => adoptProc(r.name, r.pid, r.bin, r.log)).filter((p) => p.isAlive())
  await Promise.all(procs.map((p) => p.stop()))
  rmSync(stateFile(dir), { force: true })
  return procs.length
}
