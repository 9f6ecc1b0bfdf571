// Argo CD (hack/tools/versions.env ARGOCD_VERSION) on the local control plane, as local processes on loopback:
// redis (Debian redis-server, in memory only), argocd-repo-server with helm v3 on its PATH, and
// argocd-application-controller under its own static-token identity. One multi-call binary; ARGOCD_BINARY_NAME picks
// the component. No argocd-server, dex, ApplicationSet or commit server. The recipe (objects, flags, what to avoid)
// is ../shared/spec/research/argocd-local.md; docs/local-control-plane.md "Argo CD" describes what runs.
//
// Started on demand (startArgoCd), not with every plane: most int tests do not need it. The processes are recorded
// in the plane's state.json, so the plane's stop(), `aicr-dev down` and the next start in the dir stop them too.
import { randomBytes } from "node:crypto"
import { chmodSync } from "node:fs"
import { connect } from "node:net"
import { delimiter, dirname, join } from "node:path"
import { request } from "undici"
import { componentUser, writeKubeconfig } from "./auth"
import { applyManifests, kubeRequest } from "./kube"
import { loadManifests } from "./manifests"
import { forgetProcs, recordedProcs, recordExtraProcs, stopProcRecords } from "./plane"
import { ensureDir, freePort, HarnessError, type Proc, spawnProc, waitReady } from "./proc"
import { argoCdCrdsDir, readVersions, toolPath } from "./tools"
import type { HarnessInfo, KubeTarget } from "./types"

export const ARGOCD_NAMESPACE = "argocd"
/** The identity (auth.ts COMPONENT_USERS) under which the application-controller reads and writes the cluster. */
export const ARGOCD_CONTROLLER = "argocd-application-controller"
/** Process names in the plane's state (and log files <dir>/logs/<name>.log). */
export const ARGOCD_PROCS = ["argocd-redis", "argocd-repo-server", ARGOCD_CONTROLLER] as const
/** The finalizer that makes deleting an Application prune what it installed. */
export const RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
/** The runtime registry prefix under info.registry (`aicr-dev up` runs the operator with the same one). */
export const RUNTIME_PREFIX = "aicr/cluster"
/** The runtime registry's chart repositories as Argo CD's Helm-repository sources name them (`helmApplication`): charts and wrapper charts. */
export const runtimeRepositories = (info: Pick<HarnessInfo, "registry">): string[] =>
  ["charts", "wrappers"].map((r) => `${info.registry}/${RUNTIME_PREFIX}/${r}`)

/**
 * The runtime registry as the operator's Applications name it: native OCI sources, one repository per chart
 * (`oci://<registry>/aicr/cluster/charts/<chart>`, pinned by digest); Argo CD's repo-creds template for the prefix.
 */
export const runtimeOciPrefix = (info: Pick<HarnessInfo, "registry">): string => `oci://${info.registry}/${RUNTIME_PREFIX}`

/** An AppProject's sourceRepos for the runtime registry: the operator's native OCI sources and the Helm-repository form. */
export const runtimeSourceRepos = (info: Pick<HarnessInfo, "registry">): string[] => [
  ...["charts", "wrappers"].map((r) => `${runtimeOciPrefix(info)}/${r}/*`),
  ...runtimeRepositories(info),
]

const isArgoCdProc = (name: string) => (ARGOCD_PROCS as readonly string[]).includes(name)

/** Plain data about a running Argo CD (it travels through vitest's provide/inject like HarnessInfo). */
export interface ArgoCdInfo {
  readonly namespace: string
  readonly version: string
  /** 127.0.0.1:PORT of redis (no password, no persistence). */
  readonly redis: string
  /** 127.0.0.1:PORT of the repo-server's gRPC API (self-signed TLS). */
  readonly repoServer: string
  /** /metrics and /healthz of the repo-server and the controller (the controller's listener binds 0.0.0.0). */
  readonly metrics: { readonly repoServer: string; readonly controller: string }
  /** The application-controller's kubeconfig and user name (what the audit log shows for its writes). */
  readonly controllerKubeconfig: string
  readonly controllerUser: string
  readonly pids: Record<string, number>
  readonly logs: Record<string, string>
}

export interface ArgoCd {
  readonly info: ArgoCdInfo
  readonly procs: readonly Proc[]
  /** Milliseconds from the call to all three processes ready and the objects installed. */
  readonly startMs: number
  stop(): Promise<void>
}

export interface ArgoCdOptions {
  /** false: the processes outlive this one (`aicr-dev up --detach`); `aicr-dev down` stops them. Default true. */
  readonly attached?: boolean
  /** Log level of both Argo CD components (default info; debug shows every helm command line). */
  readonly logLevel?: "debug" | "info" | "warn"
  /** Seconds the controller waits between sync waves (ARGOCD_SYNC_WAVE_DELAY; default 0, Argo CD's own is 2). */
  readonly syncWaveDelaySeconds?: number
}

export interface RepositoryCredential {
  /** Name of the Secret in the argocd namespace. */
  readonly name: string
  /**
   * The OCI repository without scheme (`host[:port]/path`, the Application's repoURL, which is written the same way),
   * or with template, a prefix of such URLs, e.g. `123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr`.
   */
  readonly url: string
  /**
   * Argo CD's native OCI repository type (`type: oci`; url with `oci://`, which url.Parse accepts on loopback too, so
   * templates match there), for sources `repoURL: oci://…` with a `path`; default a Helm repository in OCI mode.
   */
  readonly oci?: boolean
  /**
   * A credential template (`secret-type: repo-creds`) for every repoURL that starts with url, instead of one
   * repository (`secret-type: repository`, exact URL). Argo CD 3.4 matches templates only on URLs that Go's url.Parse
   * accepts, which `127.0.0.1:PORT/…` is not (a colon in the first path segment): on loopback use `localhost:PORT` or
   * one repository credential per repoURL.
   */
  readonly template?: boolean
  readonly username?: string
  readonly password?: string
  /**
   * A registry without TLS (loopback). Argo CD 3.4 ignores the field on this path and relies on helm v3 falling back to
   * plain HTTP; 3.5+ needs it. Never combined with `insecure: "true"`, which turns that fallback off.
   */
  readonly plainHttp?: boolean
}

/**
 * A repository credential for Helm charts in an OCI registry (`type: helm`, `enableOCI`): Applications whose repoURL
 * is url (or, as a template, starts with it) pull with these credentials in OCI mode.
 */
export const repositoryCredentialSecret = (c: RepositoryCredential) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: c.name,
    namespace: ARGOCD_NAMESPACE,
    labels: { "argocd.argoproj.io/secret-type": c.template ? "repo-creds" : "repository", "app.kubernetes.io/part-of": "argocd" },
  },
  type: "Opaque",
  stringData: {
    ...(c.template ? {} : { name: c.name }),
    ...(c.oci ? { type: "oci" } : { type: "helm", enableOCI: "true" }),
    url: c.url,
    ...(c.plainHttp ? { insecureOCIForceHttp: "true" } : {}),
    ...(c.username !== undefined ? { username: c.username } : {}),
    ...(c.password !== undefined ? { password: c.password } : {}),
  },
})

/** Adds (or replaces) a registry credential Argo CD uses to pull charts, e.g. one with basic auth for ECR. */
export const addRepositoryCredential = (info: KubeTarget, c: RepositoryCredential): Promise<void> => applyManifests(info, [repositoryCredentialSecret(c)])

/**
 * The in-cluster objects Argo CD needs when argocd-server does not run: its CRDs (Application, AppProject), the
 * namespace, argocd-cm and argocd-secret (both labelled part-of argocd, or the settings informers miss them), the
 * `default` AppProject (argocd-server normally creates it) and a repository credential for each of the runtime
 * registry's repositories (runtimeRepositories; the registry has no auth, the credential makes Argo CD use OCI).
 * No argocd-rbac-cm: only argocd-server reads it.
 */
export const installArgoCdObjects = async (info: HarnessInfo): Promise<void> => {
  const crds = ["application-crd.yaml", "appproject-crd.yaml"].flatMap((f) => loadManifests(join(argoCdCrdsDir(), f)))
  const labels = (name: string) => ({ "app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "argocd" })
  const secret = await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ARGOCD_NAMESPACE}/secrets/argocd-secret` })
  // Keep the key of an earlier start (up reusing a plane); argocd-server would sign sessions with it.
  const secretKey: string = secret.status === 200 ? secret.body.data?.["server.secretkey"] : Buffer.from(randomBytes(32).toString("base64")).toString("base64")
  await applyManifests(info, [
    ...crds,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ARGOCD_NAMESPACE } },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "argocd-cm", namespace: ARGOCD_NAMESPACE, labels: labels("argocd-cm") }, data: {} },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "argocd-secret", namespace: ARGOCD_NAMESPACE, labels: labels("argocd-secret") },
      type: "Opaque",
      data: { "server.secretkey": secretKey },
    },
    {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "AppProject",
      metadata: { name: "default", namespace: ARGOCD_NAMESPACE },
      spec: { sourceRepos: ["*"], destinations: [{ server: "*", namespace: "*" }], clusterResourceWhitelist: [{ group: "*", kind: "*" }] },
    },
    ...runtimeRepositories(info).map((url) => repositoryCredentialSecret({ name: `runtime-${url.split("/").at(-1)!}`, url, plainHttp: true })),
    // The operator's Applications: native OCI sources under the prefix, over plain HTTP (the flag matters for type oci).
    repositoryCredentialSecret({ name: "runtime-oci", url: runtimeOciPrefix(info), template: true, oci: true, plainHttp: true }),
  ])
}

/** Stops the Argo CD processes recorded in dir (this run's or an earlier detached one's); returns how many ran. */
export const stopArgoCd = async (dir: string): Promise<number> => {
  const records = recordedProcs(dir, isArgoCdProc)
  const stopped = await stopProcRecords(records)
  forgetProcs(
    dir,
    records.map((r) => r.pid),
  )
  return stopped
}

const redisPing = (port: number) => (): Promise<boolean> =>
  new Promise((resolve, reject) => {
    const sock = connect({ host: "127.0.0.1", port }, () => sock.write("PING\r\n"))
    sock.setTimeout(2_000, () => sock.destroy(new Error("redis: no answer to PING")))
    sock.once("data", (b) => {
      sock.end()
      resolve(b.toString().startsWith("+PONG"))
    })
    sock.once("error", reject)
  })

const healthz = (url: string) => async (): Promise<boolean> => {
  const res = await request(url, { headersTimeout: 3_000, bodyTimeout: 3_000 })
  return res.statusCode === 200 && (await res.body.text()).trim() === "ok"
}

/**
 * Starts redis, the repo-server and the application-controller against the plane described by info, after
 * installing the objects they need, and records them in the plane's state.
 *
 * Gotchas:
 * - One Argo CD per plane: a start stops whatever Argo CD is recorded in info.dir first (int files run one at a time).
 * - The plane must be one this code started (auth.json needs the controller's identity).
 * - An Application's repoURL has no `oci://` scheme and must equal a repository credential's URL (see
 *   RepositoryCredential.template for prefixes).
 *
 * @example
 * const argocd = await startArgoCd(inject("harness"))
 * await applyManifests(info, [helmApplication({ name: "demo", repoURL: runtimeRepositories(info)[0]!, chart: "demo",
 *   targetRevision: "0.1.0", destinationNamespace: "demo" })])
 * await waitForApplication(info, "demo", "0.1.0")
 * await argocd.stop()
 */
export const startArgoCd = async (info: HarnessInfo, opts: ArgoCdOptions = {}): Promise<ArgoCd> => {
  const t0 = Date.now()
  await stopArgoCd(info.dir)
  const versions = readVersions()
  const attached = opts.attached ?? true
  const logLevel = opts.logLevel ?? "info"
  const logDir = join(info.dir, "logs")
  const work = ensureDir(join(info.dir, "argocd"))
  const sub = (...p: string[]) => ensureDir(join(work, ...p))
  chmodSync(sub("gpg", "keys"), 0o700)
  const argocd = toolPath("argocd", versions)
  const user = componentUser(info.dir, ARGOCD_CONTROLLER)
  const kubeconfig = writeKubeconfig(join(ensureDir(join(info.dir, "kubeconfigs")), `${ARGOCD_CONTROLLER}.kubeconfig`), info.server, info.caFile, [
    { name: ARGOCD_CONTROLLER, token: user.token },
  ])
  // Nothing of the caller's Argo CD, helm, redis, kube or XDG settings leaks in; everything they write stays in work.
  const inherited = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => /^(ARGOCD_|HELM_|REDIS_|XDG_|KUBE)/.test(k))
      .map((k) => [k, undefined]),
  )
  const env = {
    ...inherited,
    HOME: sub("home"),
    TMPDIR: sub("tmp"),
    KUBECACHEDIR: sub("kubecache"),
    // helm v3 first: Argo CD 3.4 runs `helm pull oci://…` without --plain-http, and only v3 falls back to HTTP.
    PATH: [dirname(toolPath("helm3", versions)), dirname(toolPath("kubectl", versions)), "/usr/bin", "/bin"].join(delimiter),
    ARGOCD_FAKE_IN_CLUSTER: "true",
    ARGOCD_GPG_ENABLED: "false",
    ARGOCD_SYNC_WAVE_DELAY: String(opts.syncWaveDelaySeconds ?? 0),
    ARGOCD_TLS_DATA_PATH: sub("tls"),
    ARGOCD_SSH_DATA_PATH: sub("ssh"),
    ARGOCD_GNUPGHOME: sub("gpg", "keys"),
    ARGOCD_GPG_DATA_PATH: sub("gpg", "source"),
  }
  const procs: Proc[] = []
  const start = async (name: string, bin: string, args: string[], ready: () => Promise<boolean>, extraEnv: Record<string, string> = {}) => {
    const proc = await spawnProc({ name, bin, args, logDir, attached, cwd: work, env: { ...env, ...extraEnv } })
    procs.push(proc)
    recordExtraProcs(info.dir, [proc])
    await waitReady(proc, ready, 60_000, 100)
    return proc
  }
  const stop = async () => {
    for (const p of [...procs].reverse()) await p.stop().catch(() => undefined)
    forgetProcs(
      info.dir,
      procs.map((p) => p.pid),
    )
  }
  try {
    const [redisPort, repoPort, repoMetrics, controllerMetrics, commitPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ]
    const installing = installArgoCdObjects(info)
    installing.catch(() => undefined) // awaited below; a redis failure first must not leave it unhandled
    const redis = `127.0.0.1:${redisPort}`
    const repoServer = `127.0.0.1:${repoPort}`
    // A title rewrite would change /proc/<pid>/cmdline, which the stop path checks against the recorded binary.
    await start(
      "argocd-redis",
      toolPath("redis-server"),
      ["--bind", "127.0.0.1", "--port", String(redisPort), "--save", "", "--appendonly", "no", "--dir", sub("redis"), "--set-proc-title", "no"],
      redisPing(redisPort),
    )
    const common = ["--loglevel", logLevel, "--logformat", "text", "--redis", redis]
    await Promise.all([
      start(
        "argocd-repo-server",
        argocd,
        [...common, "--address", "127.0.0.1", "--port", String(repoPort), "--metrics-address", "127.0.0.1", "--metrics-port", String(repoMetrics)],
        healthz(`http://127.0.0.1:${repoMetrics}/healthz?full=true`),
        { ARGOCD_BINARY_NAME: "argocd-repo-server" },
      ),
      installing,
    ])
    await start(
      ARGOCD_CONTROLLER,
      argocd,
      [
        ...common,
        "--kubeconfig",
        kubeconfig,
        "--namespace",
        ARGOCD_NAMESPACE,
        "--repo-server",
        repoServer,
        // Nothing listens there: the hydrator (the only commit-server user) is off.
        "--commit-server",
        `127.0.0.1:${commitPort}`,
        "--hydrator-enabled=false",
        "--server-side-diff-enabled=false",
        "--metrics-port",
        String(controllerMetrics),
        "--app-resync",
        "30",
        "--app-resync-jitter",
        "5",
      ],
      healthz(`http://127.0.0.1:${controllerMetrics}/healthz`),
      // ARGOCD_FAKE_IN_CLUSTER: https://kubernetes.default.svc is reached with $KUBECONFIG, so deployments run as the
      // controller's identity too.
      { ARGOCD_BINARY_NAME: ARGOCD_CONTROLLER, KUBECONFIG: kubeconfig },
    )
    const byName = (f: (p: Proc) => string | number) => Object.fromEntries(procs.map((p) => [p.name, f(p)]))
    return {
      info: {
        namespace: ARGOCD_NAMESPACE,
        version: versions.argocd,
        redis,
        repoServer,
        metrics: { repoServer: `http://127.0.0.1:${repoMetrics}`, controller: `http://127.0.0.1:${controllerMetrics}` },
        controllerKubeconfig: kubeconfig,
        controllerUser: user.user,
        pids: byName((p) => p.pid) as Record<string, number>,
        logs: byName((p) => p.log) as Record<string, string>,
      },
      procs,
      startMs: Date.now() - t0,
      stop,
    }
  } catch (e) {
    await stop()
    if (e instanceof HarnessError) throw e
    throw new HarnessError(`harness: Argo CD failed to start in ${info.dir}: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
  }
}
