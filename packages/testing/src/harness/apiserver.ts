// etcd and kube-apiserver as local processes (test-infra.md §2.2, §3.2). Both can run on their own: a test can kill
// an apiserver and start another on the same port and dir against the same etcd, and its data survives.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { request } from "undici"
import { type AuthMaterial, ensureAuth, type StaticUser } from "./auth"
import { agentFor } from "./kube"
import { ensureDir, freePort, type Proc, retryPortClash, spawnProc, waitReady } from "./proc"
import { toolPath } from "./tools"

export interface EtcdOptions {
  readonly dir?: string
  readonly port?: number
  readonly peerPort?: number
  readonly attached?: boolean
}

export interface Etcd {
  /** http://127.0.0.1:PORT */
  readonly url: string
  readonly pid: number
  readonly proc: Proc
  stop(): Promise<void>
  kill(signal?: NodeJS.Signals): void
}

export const startEtcd = async (opts: EtcdOptions = {}): Promise<Etcd> => {
  const dataDir = opts.dir ? join(opts.dir, "etcd") : undefined
  const fresh = dataDir === undefined || !existsSync(dataDir)
  return retryPortClash(opts.port !== undefined || opts.peerPort !== undefined, async () => {
    // A failed first start may have initialised the member with the clashing peer URL: begin again from nothing.
    if (fresh && dataDir) rmSync(dataDir, { recursive: true, force: true })
    return startEtcdOnce(opts)
  })
}

const startEtcdOnce = async (opts: EtcdOptions): Promise<Etcd> => {
  const dir = ensureDir(opts.dir ?? mkdtempSync(join(tmpdir(), "aicr-etcd-")))
  const stop = async () => {
    await proc.stop()
    if (!opts.dir) rmSync(dir, { recursive: true, force: true })
  }
  const port = opts.port ?? (await freePort())
  const peer = `http://127.0.0.1:${opts.peerPort ?? (await freePort())}`
  const url = `http://127.0.0.1:${port}`
  const proc = await spawnProc({
    name: "etcd",
    bin: toolPath("etcd"),
    logDir: join(dir, "logs"),
    attached: opts.attached,
    args: [
      "--name=aicr",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=aicr=${peer}`,
      "--listen-metrics-urls=",
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ],
  })
  await waitReady(
    proc,
    async () => {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })
      return res.ok && ((await res.json()) as { health?: string }).health === "true"
    },
    30_000,
    50,
  )
  return { url, pid: proc.pid, proc, stop, kill: (s) => proc.kill(s) }
}

export interface ApiServerOptions {
  /** etcd client URL. */
  readonly etcd: string
  /** State dir: pki/ (serving cert, SA key), tokens.csv, audit policy and log. Reused when it already has them. */
  readonly dir: string
  readonly port?: number
  /** Log/component name (default "kube-apiserver"). */
  readonly name?: string
  readonly extraArgs?: readonly string[]
  readonly attached?: boolean
  readonly timeoutMs?: number
  /**
   * A unix socket serving HTTP CONNECT: the egress selector's `cluster` network (webhooks, CRD conversion, aggregated
   * APIs, kubelets) goes through it (the plane's webhook stand-in, egress/egress.ts). Default: direct.
   */
  readonly egressSocket?: string
}

export interface ApiServer {
  /** https://127.0.0.1:PORT */
  readonly url: string
  /** Same as url; lets an ApiServer be passed where a KubeTarget is expected. */
  readonly server: string
  readonly port: number
  readonly pid: number
  readonly proc: Proc
  /** CA bundle (cert + its self-signed CA) the apiserver generated in <dir>/pki. */
  readonly caFile: string
  readonly auditLog: string
  readonly users: Record<string, StaticUser>
  readonly auth: AuthMaterial
  stop(): Promise<void>
  kill(signal?: NodeJS.Signals): void
}

export const SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"

export const startApiServer = (opts: ApiServerOptions): Promise<ApiServer> => retryPortClash(opts.port !== undefined, () => startApiServerOnce(opts))

const startApiServerOnce = async (opts: ApiServerOptions): Promise<ApiServer> => {
  const dir = ensureDir(opts.dir)
  const auth = ensureAuth(dir)
  const port = opts.port ?? (await freePort())
  const url = `https://127.0.0.1:${port}`
  const pki = ensureDir(join(dir, "pki"))
  const caFile = join(pki, "apiserver.crt")
  const auditLog = join(dir, "audit.log")
  const egressConfig = join(dir, "egress-selector.yaml")
  if (opts.egressSocket !== undefined) {
    writeFileSync(
      egressConfig,
      [
        "apiVersion: apiserver.k8s.io/v1beta1",
        "kind: EgressSelectorConfiguration",
        "egressSelections:",
        "  - name: cluster",
        "    connection:",
        "      proxyProtocol: HTTPConnect",
        "      transport:",
        "        uds:",
        `          udsName: ${opts.egressSocket}`,
        "",
      ].join("\n"),
    )
  }
  const proc = await spawnProc({
    name: opts.name ?? "kube-apiserver",
    bin: toolPath("kube-apiserver"),
    logDir: join(dir, "logs"),
    attached: opts.attached,
    args: [
      `--etcd-servers=${opts.etcd}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${port}`,
      // No --tls-cert-file: the apiserver writes a self-signed CA + serving cert (SANs incl. 127.0.0.1) into
      // --cert-dir on first start and reuses it afterwards, so a restart keeps the same CA.
      `--cert-dir=${pki}`,
      `--token-auth-file=${auth.tokenFile}`,
      "--authorization-mode=RBAC",
      `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
      `--service-account-key-file=${auth.saPub}`,
      `--service-account-signing-key-file=${auth.saKey}`,
      "--service-cluster-ip-range=10.96.0.0/16",
      "--allow-privileged=true",
      "--enable-priority-and-fairness=false",
      // Fake nodes publish only an InternalIP (127.0.0.1, the process kubelet's API); never try their host names.
      "--kubelet-preferred-address-types=InternalIP",
      // The apiserver's own IP is loopback, which Endpoints may not hold; keep the lease reconciler from retrying it.
      "--endpoint-reconciler-type=none",
      `--audit-policy-file=${auth.auditPolicy}`,
      `--audit-log-path=${auditLog}`,
      "--audit-log-format=json",
      "--audit-log-mode=blocking",
      "--audit-log-maxbackup=0",
      "--profiling=false",
      // MutatingAdmissionPolicy is beta and off by default in 1.34/1.35 (GA in 1.36): the operator's editor stamp
      // (policies/editor-stamp/) needs both the gate and the v1beta1 API, as on a user's cluster of these versions.
      "--feature-gates=MutatingAdmissionPolicy=true",
      "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
      ...(opts.egressSocket !== undefined ? [`--egress-selector-config-file=${egressConfig}`] : []),
      ...(opts.extraArgs ?? []),
    ],
  })
  await waitReady(
    proc,
    async () => {
      if (!existsSync(caFile)) return false
      const res = await request(`${url}/readyz`, {
        dispatcher: agentFor(caFile),
        headers: { authorization: `Bearer ${auth.users.admin!.token}` },
        headersTimeout: 5_000,
        bodyTimeout: 5_000,
      })
      const body = await res.body.text()
      return res.statusCode === 200 && body.trim() === "ok"
    },
    opts.timeoutMs ?? 120_000,
    250,
  )
  return {
    url,
    server: url,
    port,
    pid: proc.pid,
    proc,
    caFile,
    auditLog,
    users: auth.users,
    auth,
    stop: () => proc.stop(30_000),
    kill: (s) => proc.kill(s),
  }
}
