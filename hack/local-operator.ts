/**
 * The operator's processes on the local control plane (`aicr-dev up`): the local chart upstream that stands in for
 * the public chart repositories (run from source), and every controller built so far, each as its own process from
 * its shipped bundle in dist/apps/, as in a cluster: registry-mirror, and the resolver (pinned AICR: the harness's
 * current version, or `AICR_VERSION`), whose AICR Jobs the process kubelet runs with the real binary; the
 * validation-gate, with the validation launcher the chart's `validation.enabled` installs.
 *
 * Each runs in its own process group with its log in `<dir>/logs/<name>.log`. Attached (foreground `up`), a
 * watchdog stops them when `up` exits, even on SIGKILL; detached (`up --detach`), they are recorded in
 * `<dir>/operator.json` and `aicr-dev down` stops them.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { jobRbac } from "@aicr/aicr"
import {
  adoptProc,
  applyManifests,
  ARGOCD_NAMESPACE,
  createServiceAccountToken,
  type HarnessInfo,
  type Proc,
  readVersions,
  RUNTIME_PREFIX,
  runtimeSourceRepos,
  spawnProc,
  startAws,
  writeKubeconfig,
} from "@aicr/testing/harness"
import { parse } from "yaml"

export const OPERATOR_NAMESPACE = "aicr-system"
/** `up` waits this long for a new target to hold still (the chart default is 10m). */
export const LOCAL_STABILIZATION_WINDOW = "15s"
/**
 * The chart's `namespaces.components` on the local control plane: every namespace the reference recipe renders into,
 * including `kai-resource-reservation`, where the real kai-scheduler chart puts its resource-reservation
 * ServiceAccount and RoleBinding (the install guide lists it; without it Argo CD refuses the sync: the namespace is
 * not a destination of the AppProject).
 */
export const COMPONENT_NAMESPACES = [
  "cert-manager",
  "gpu-operator",
  "kai-resource-reservation",
  "kai-scheduler",
  "kube-system",
  "kubeflow",
  "monitoring",
  "nvidia-dra-driver",
  "nvsentinel",
  "skyhook",
]
/** The Pod Security level of every component namespace on the local control plane (chart `namespaces.components[].podSecurity`). */
export const COMPONENT_POD_SECURITY = "privileged"
/** The component namespaces the chart creates (all but kube-system, `create: false`), with their Pod Security labels. */
export const componentNamespaces = () =>
  COMPONENT_NAMESPACES.filter((n) => n !== "kube-system").map((name) => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: Object.fromEntries(["enforce", "audit", "warn"].map((m) => [`pod-security.kubernetes.io/${m}`, COMPONENT_POD_SECURITY])) },
  }))
/** The runtime registry prefix (chart value `registry.repository`) on the local control plane. */
export const registryPrefix = (info: Pick<HarnessInfo, "registry">) => `oci://${info.registry}/${RUNTIME_PREFIX}`

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
        sourceRepos: runtimeSourceRepos(info),
        destinations: namespaces.map((namespace) => ({ server: "https://kubernetes.default.svc", namespace })),
        clusterResourceWhitelist: [{ group: "*", kind: "*" }],
      },
    },
  ])

/** The validation namespace and launcher ServiceAccount (chart `namespaces.validation`, `validation.enabled`). */
export const VALIDATION_NAMESPACE = "aicr-validation"
export const VALIDATION_LAUNCHER = "aicr-validation"

/**
 * What the chart's `validation.enabled` installs for AICR < 1.1 (v0.11.1 here): the validation namespace and the
 * launcher's ServiceAccount bound to cluster-admin (AICR then binds its `aicr-validator` per run). Its presence is
 * what the validation gate's `ValidationReady` checks.
 */
export const installValidation = (info: HarnessInfo) =>
  applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: VALIDATION_NAMESPACE, labels: { "app.kubernetes.io/name": "aicr", "app.kubernetes.io/component": "validation" } },
    },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: VALIDATION_LAUNCHER, namespace: VALIDATION_NAMESPACE } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "aicr-validation-launcher" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: VALIDATION_LAUNCHER, namespace: VALIDATION_NAMESPACE }],
    },
  ])

/**
 * Each controller's own flags for a bench that runs it idle on a local control plane with the registry prefix
 * `oci://<registry>/aicr/cluster` (the resolver with the development allowance for the local 0.x AICR).
 */
export const benchControllerFlags = (app: string, registry: string): string[] => {
  const prefix = `oci://${registry}/aicr/cluster`
  const ns = OPERATOR_NAMESPACE
  switch (app) {
    case "registry-mirror":
      return ["--registry", prefix, "--operator-namespace", ns]
    case "planner":
      return ["--operator-namespace", ns, "--engine-namespace", ARGOCD_NAMESPACE, "--stabilization-window", "15s"]
    case "ecr-credential-refresher":
      return ["--registry", prefix, "--operator-namespace", ns, "--engine-namespace", ARGOCD_NAMESPACE, "--auth-provider", "static"]
    case "resolver":
      return [
        "--aicr-version",
        readVersions().aicr,
        "--allow-unsupported-aicr=true",
        "--registry",
        prefix,
        "--operator-namespace",
        ns,
        "--component-namespaces",
        "gpu-operator",
      ]
    case "step-executor":
      return ["--operator-namespace", ns, "--engine-namespace", ARGOCD_NAMESPACE, "--engine-project", ENGINE_PROJECT]
    case "validation-gate":
      return [
        "--registry",
        prefix,
        "--operator-namespace",
        ns,
        "--validation-namespace",
        VALIDATION_NAMESPACE,
        "--launcher-service-account",
        VALIDATION_LAUNCHER,
      ]
    default:
      return ["--operator-namespace", ns]
  }
}

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
const startNode = (name: string, args: string[], dir: string, attached: boolean, env?: Record<string, string | undefined>): Promise<Proc> =>
  spawnProc({ name, bin: process.execPath, args, logDir: join(dir, "logs"), cwd: root, attached, env })

/** A TypeScript entry point, run with the tsx loader in one process. */
const startTs = (name: string, script: string, args: string[], dir: string, attached: boolean): Promise<Proc> =>
  startNode(name, ["--import", tsxLoader, join(root, script), ...args], dir, attached)

/**
 * A controller's memory settings as the chart sets them from its values.yaml section (the app's name in camelCase,
 * e.g. `registryMirror`): `nodeOptions` as NODE_OPTIONS, `mallocArenaMax` as MALLOC_ARENA_MAX; none where the
 * section has neither. A local process then runs with the same memory settings as the pod.
 */
export const memoryEnvOf = (app: string): Record<string, string> => {
  const values = parse(readFileSync(join(root, "charts", "aicr-operator", "values.yaml"), "utf8")) as Record<
    string,
    { nodeOptions?: string; mallocArenaMax?: number } | undefined
  >
  const { nodeOptions, mallocArenaMax } = values[app.replace(/-(\w)/gu, (_, c: string) => c.toUpperCase())] ?? {}
  return { ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}), ...(mallocArenaMax ? { MALLOC_ARENA_MAX: String(mallocArenaMax) } : {}) }
}

/** A controller as it ships: its esbuild bundle (built by `aicr-dev up` before this runs). */
const startApp = (name: string, args: string[], dir: string, attached: boolean, env?: Record<string, string | undefined>): Promise<Proc> => {
  const bundle = join(root, "dist", "apps", name, "main.mjs")
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: build it with 'npx tsx hack/build-apps.ts ${name}'`)
  return startNode(name, ["--enable-source-maps", bundle, ...args], dir, attached, env)
}

/** One chart the local upstream serves: the project's own package (`real`) or a stand-in (`UpstreamChart.origin`). */
export interface ServedChart {
  readonly name: string
  readonly version: string
  readonly origin: "real" | "stand-in"
}

/**
 * Waits for the first JSON line the chart upstream prints once it serves, in what this start wrote to its log (from
 * byte `from` on): the log is appended to, and an earlier `up`'s upstream (stopped, its port gone) printed its own line.
 * Up to 2 minutes: with the real charts it reads and checks 2.3 MB of packages and pushes the `oci://` ones into the
 * registry before it prints, and on the shared 2-core machine (load average about 45) that took more than 30 s.
 */
const upstreamInfo = async (p: Proc, from: number): Promise<{ httpUrl: string; rewrites: Record<string, string>; charts: ReadonlyArray<ServedChart> }> => {
  for (let i = 0; i < 1_200; i++) {
    if (!p.isAlive()) throw new Error(`chart upstream exited:\n${p.tail()}`)
    const line = existsSync(p.log)
      ? readFileSync(p.log)
          .subarray(from)
          .toString("utf8")
          .split("\n")
          .find((l) => l.startsWith("{"))
      : undefined
    if (line) return JSON.parse(line)
    await sleep(100)
  }
  throw new Error(`chart upstream did not start within 120s:\n${p.tail()}`)
}

export interface LocalOperator {
  readonly procs: ReadonlyArray<Proc>
  readonly upstream: string
  stop(): Promise<void>
}

/** The private ECR registry the local AWS emulator mints tokens for (`up --aws`). */
export const LOCAL_ECR_REGISTRY = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
export const DOCKER_CONFIG_SECRET = "aicr-registry-docker-config"
export const ENGINE_NAMESPACE = "argocd"

/**
 * The ecr-credential-refresher's flags and environment. Default `static`: a docker-config Secret for the local
 * registry (which needs no login) stands in for the admin's. With `aws`: moto as the local AWS, IAM enforcement on,
 * the chart's IAM policy on the `refresher` user, whose keys the refresher gets (docs/controllers/ecr-credential-refresher.md).
 */
const refresherSetup = async (info: HarnessInfo, opts: { dir: string; attached: boolean; aws?: boolean }, procs: Proc[]) => {
  await applyManifests(info, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: ENGINE_NAMESPACE } }])
  if (!opts.aws) {
    const auth = Buffer.from("local:local").toString("base64")
    await applyManifests(info, [
      {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/dockerconfigjson",
        metadata: { name: DOCKER_CONFIG_SECRET, namespace: OPERATOR_NAMESPACE },
        data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { [info.registry]: { auth } } })).toString("base64") },
      },
    ])
    return { args: ["--auth-provider", "static"], env: {} }
  }
  const [account, , , region] = LOCAL_ECR_REGISTRY.split(".")
  const template = readFileSync(join(root, "charts", "aicr-operator", "files", "ecr-iam-policy.json"), "utf8")
  const vars: Record<string, string> = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/cluster", ACCOUNT_ID: account!, REGION: region! }
  const aws = await startAws({
    policy: template.replace(/\$\{([A-Z_]+)\}/gu, (_, k: string) => vars[k] ?? ""),
    dir: join(opts.dir, "aws"),
    attached: opts.attached,
  })
  procs.push(aws.proc)
  const keys = aws.fixtures.users.refresher
  return {
    args: ["--auth-provider", "aws", "--ecr-registry", LOCAL_ECR_REGISTRY],
    env: { ...aws.env, AWS_ACCESS_KEY_ID: keys.accessKeyId, AWS_SECRET_ACCESS_KEY: keys.secretAccessKey },
  }
}

/**
 * Each controller runs as its own ServiceAccount `aicr-<controller>` in the operator namespace, as in a cluster, so
 * the admission policies see the operator's identities (they refuse people writing rollout labels, and the
 * operator approving). On the local control plane each is bound to cluster-admin; the least-privilege RBAC rendered
 * from the contracts comes with the Helm chart.
 */
const controllerKubeconfig = async (info: HarnessInfo, name: string, dir: string): Promise<string> => {
  const sa = `aicr-${name}`
  await applyManifests(info, [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace: OPERATOR_NAMESPACE } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${sa}-local` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: sa, namespace: OPERATOR_NAMESPACE }],
    },
  ])
  const token = await createServiceAccountToken(info, OPERATOR_NAMESPACE, sa, { create: false, expirationSeconds: 7 * 86_400 })
  mkdirSync(join(dir, "kubeconfigs"), { recursive: true })
  return writeKubeconfig(join(dir, "kubeconfigs", `${sa}.kubeconfig`), info.server, info.caFile, [{ name: sa, token }])
}

export const startLocalOperator = async (
  info: HarnessInfo,
  // charts: what the chart upstream serves (its --charts); by default the real charts whenever the folder is there.
  opts: { dir: string; attached: boolean; aws?: boolean; charts?: "real" | "stand-in" },
): Promise<LocalOperator> => {
  await stopLocalOperator(opts.dir)
  const procs: Proc[] = []
  const record = () => writeFileSync(stateFile(opts.dir), JSON.stringify(procs.map(({ name, pid, bin, log }): Recorded => ({ name, pid, bin, log }))))
  try {
    const upstreamLog = join(opts.dir, "logs", "chart-upstream.log")
    const logged = existsSync(upstreamLog) ? statSync(upstreamLog).size : 0
    const upstream = await startTs(
      "chart-upstream",
      "packages/chart-upstream/src/cli.ts",
      ["--oci-registry", info.registry, ...(opts.charts ? ["--charts", opts.charts] : [])],
      opts.dir,
      opts.attached,
    )
    procs.push(upstream)
    record()
    const served = await upstreamInfo(upstream, upstream.log === upstreamLog ? logged : 0)

    const kubeconfigs = Object.fromEntries(
      await Promise.all(
        ["resolver", "registry-mirror", "approval-guard", "planner", "ecr-credential-refresher", "step-executor", "validation-gate"].map(
          async (n) => [n, await controllerKubeconfig(info, n, opts.dir)] as const,
        ),
      ),
    )
    const runtimeFlags = (name: string) => [
      "--kubeconfig",
      kubeconfigs[name] ?? info.kubeconfig,
      "--metrics-bind-address",
      "127.0.0.1:0",
      "--health-probe-bind-address",
      "127.0.0.1:0",
      "--leader-election-namespace",
      OPERATOR_NAMESPACE,
      "--leader-election-id",
      `aicr-${name}`,
    ]
    const mirror = await startApp(
      "registry-mirror",
      [
        ...runtimeFlags("registry-mirror"),
        "--registry",
        registryPrefix(info),
        "--operator-namespace",
        OPERATOR_NAMESPACE,
        ...Object.entries(served.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
      ],
      opts.dir,
      opts.attached,
      memoryEnvOf("registry-mirror"),
    )
    procs.push(mirror)
    record()
    const guard = await startApp("approval-guard", [...runtimeFlags("approval-guard"), "--operator-namespace", OPERATOR_NAMESPACE], opts.dir, opts.attached)
    procs.push(guard)
    record()
    // A short stabilization window on the local control plane (the chart's default is 10 minutes).
    const planner = await startApp(
      "planner",
      [
        ...runtimeFlags("planner"),
        "--operator-namespace",
        OPERATOR_NAMESPACE,
        "--engine-namespace",
        ARGOCD_NAMESPACE,
        "--stabilization-window",
        LOCAL_STABILIZATION_WINDOW,
      ],
      opts.dir,
      opts.attached,
    )
    procs.push(planner)
    record()
    const refresher = await refresherSetup(info, opts, procs)
    record()
    procs.push(
      await startApp(
        "ecr-credential-refresher",
        [
          ...runtimeFlags("ecr-credential-refresher"),
          "--registry",
          registryPrefix(info),
          "--operator-namespace",
          OPERATOR_NAMESPACE,
          "--engine-namespace",
          ENGINE_NAMESPACE,
          "--docker-config-secret",
          DOCKER_CONFIG_SECRET,
          ...refresher.args,
        ],
        opts.dir,
        opts.attached,
        { ...memoryEnvOf("ecr-credential-refresher"), ...refresher.env },
      ),
    )
    // The component namespaces with their Pod Security labels, as the chart creates them (namespaces.components;
    // kube-system exists): Argo CD does not create namespaces.
    await applyManifests(info, componentNamespaces())
    // The AICR Jobs' ServiceAccounts and RBAC, as the chart installs them; the resolver runs the pinned AICR.
    await applyManifests(info, [
      ...jobRbac({ namespace: OPERATOR_NAMESPACE, discoveryNamespace: OPERATOR_NAMESPACE, serviceAccount: "aicr-jobs", agentServiceAccount: "aicr-agent" }),
    ])
    const resolver = await startApp(
      "resolver",
      [
        ...runtimeFlags("resolver"),
        "--aicr-version",
        process.env.AICR_VERSION ?? readVersions().aicr,
        // The AICR built here is 0.x, outside the supported >=1.0.0,<2.0.0: the development allowance (chart
        // aicr.allowUnsupportedVersion), which every Resolved message names.
        "--allow-unsupported-aicr=true",
        "--registry",
        registryPrefix(info),
        "--operator-namespace",
        OPERATOR_NAMESPACE,
        "--component-namespaces",
        COMPONENT_NAMESPACES.join(","),
      ],
      opts.dir,
      opts.attached,
      memoryEnvOf("resolver"),
    )
    procs.push(resolver)
    record()
    const executor = await startApp(
      "step-executor",
      [
        ...runtimeFlags("step-executor"),
        "--operator-namespace",
        OPERATOR_NAMESPACE,
        "--engine-namespace",
        ARGOCD_NAMESPACE,
        "--engine-project",
        ENGINE_PROJECT,
        ...COMPONENT_NAMESPACES.map((n) => `--component-pod-security=${n}=${COMPONENT_POD_SECURITY}`),
      ],
      opts.dir,
      opts.attached,
      memoryEnvOf("step-executor"),
    )
    procs.push(executor)
    record()
    await installValidation(info)
    const gate = await startApp(
      "validation-gate",
      [
        ...runtimeFlags("validation-gate"),
        "--registry",
        registryPrefix(info),
        "--operator-namespace",
        OPERATOR_NAMESPACE,
        "--validation-namespace",
        VALIDATION_NAMESPACE,
        "--launcher-service-account",
        VALIDATION_LAUNCHER,
      ],
      opts.dir,
      opts.attached,
      memoryEnvOf("validation-gate"),
    )
    procs.push(gate)
    record()
    return { procs, upstream: served.httpUrl, stop: async () => void (await stopLocalOperator(opts.dir)) }
  } catch (e) {
    await Promise.all(procs.map((p) => p.stop()))
    rmSync(stateFile(opts.dir), { force: true })
    throw e
  }
}

/**
 * The local chart upstream alone (`aicr-dev up`, which installs the controllers with the chart): one process, recorded
 * in `<dir>/operator.json` like the operator's, on the port it had before in this dir (so the registry-mirror's
 * upstream rewrites, and with them the chart's values, stay the same across `up`s).
 */
export const startLocalUpstream = async (
  info: HarnessInfo,
  opts: { dir: string; attached: boolean },
): Promise<{ proc: Proc; httpUrl: string; rewrites: ReadonlyArray<string>; charts: ReadonlyArray<ServedChart>; stop(): Promise<void> }> => {
  await stopLocalOperator(opts.dir)
  const portFile = join(opts.dir, "chart-upstream.port")
  const port = existsSync(portFile) ? readFileSync(portFile, "utf8").trim() : undefined
  const upstreamLog = join(opts.dir, "logs", "chart-upstream.log")
  const logged = existsSync(upstreamLog) ? statSync(upstreamLog).size : 0
  const proc = await startTs(
    "chart-upstream",
    "packages/chart-upstream/src/cli.ts",
    ["--oci-registry", info.registry, ...(port ? ["--port", port] : [])],
    opts.dir,
    opts.attached,
  )
  writeFileSync(stateFile(opts.dir), JSON.stringify([proc].map(({ name, pid, bin, log }): Recorded => ({ name, pid, bin, log }))))
  try {
    const served = await upstreamInfo(proc, proc.log === upstreamLog ? logged : 0)
    writeFileSync(portFile, new URL(served.httpUrl).port)
    return {
      proc,
      httpUrl: served.httpUrl,
      rewrites: Object.entries(served.rewrites).map(([from, to]) => `${from}=${to}`),
      charts: served.charts,
      stop: async () => void (await stopLocalOperator(opts.dir)),
    }
  } catch (e) {
    await proc.stop()
    rmSync(stateFile(opts.dir), { force: true })
    // The recorded port may be taken by now: start once more on a free one (the values then change with it).
    if (port === undefined) throw e
    rmSync(portFile, { force: true })
    return startLocalUpstream(info, opts)
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
