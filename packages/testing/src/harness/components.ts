// kube-controller-manager, kube-scheduler and the kwok controller (test-infra.md §3.4, §4.2), each with its own
// static-token identity and kubeconfig, serving /healthz on a free loopback port so readiness is observable.
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { Agent, request } from "undici"
import { writeKubeconfig } from "./auth"
import { ensureDir, freePort, type Proc, retryPortClash, spawnProc, waitReady } from "./proc"
import { writeStages } from "./kubelet/stages"
import { kwokStagesDir, toolPath } from "./tools"

export interface ComponentContext {
  readonly dir: string
  readonly server: string
  readonly caFile: string
  readonly saKey: string
  /** Static token of this component's identity. */
  readonly token: string
  readonly attached?: boolean
}

// The components serve self-signed certs they generate in memory; readiness checks on loopback need no trust.
const insecure = new Agent({ connect: { rejectUnauthorized: false }, allowH2: false })

const healthy = (url: string, dispatcher?: Agent) => async (): Promise<boolean> => {
  const res = await request(url, { dispatcher, headersTimeout: 3_000, bodyTimeout: 3_000 })
  const body = await res.body.text()
  return res.statusCode === 200 && body.trim() === "ok"
}

const componentKubeconfig = (c: ComponentContext, name: string): string =>
  writeKubeconfig(join(ensureDir(join(c.dir, "kubeconfigs")), `${name}.kubeconfig`), c.server, c.caFile, [{ name, token: c.token }])

const servingArgs = (kubeconfig: string, port: number): string[] => [
  `--kubeconfig=${kubeconfig}`,
  `--authentication-kubeconfig=${kubeconfig}`,
  `--authorization-kubeconfig=${kubeconfig}`,
  // The apiserver has no client CA / front-proxy config, so there is no extension-apiserver-authentication ConfigMap.
  "--authentication-skip-lookup=true",
  "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
  "--bind-address=127.0.0.1",
  `--secure-port=${port}`,
  "--leader-elect=false",
  "--profiling=false",
]

/** A control-plane component serving /healthz on a free port, with its own identity; ready once healthy. */
const startServing = (c: ComponentContext, name: "kube-controller-manager" | "kube-scheduler", extra: readonly string[]) =>
  retryPortClash(false, async (): Promise<Proc> => {
    const port = await freePort()
    const proc = await spawnProc({
      name,
      bin: toolPath(name),
      logDir: join(c.dir, "logs"),
      attached: c.attached,
      args: [...servingArgs(componentKubeconfig(c, name), port), ...extra],
    })
    await waitReady(proc, healthy(`https://127.0.0.1:${port}/healthz`, insecure), 60_000, 200)
    return proc
  })

/** kube-controller-manager with all default controllers (--controllers=*). */
export const startControllerManager = (c: ComponentContext): Promise<Proc> =>
  startServing(c, "kube-controller-manager", [
    "--controllers=*",
    `--root-ca-file=${c.caFile}`,
    `--service-account-private-key-file=${c.saKey}`,
    "--service-cluster-ip-range=10.96.0.0/16",
    "--cluster-name=aicr-harness",
  ])

export const startScheduler = (c: ComponentContext): Promise<Proc> => startServing(c, "kube-scheduler", [])

/** Annotation that puts a Node under the harness's kwok controller. */
export const KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"

/** The kwok controller with the "fast" stages, managing nodes annotated kwok.x-k8s.io/node=fake. */
export const startKwok = (c: ComponentContext & { readonly kubeletPort?: number }): Promise<Proc> => retryPortClash(false, () => startKwokOnce(c))

const startKwokOnce = async (c: ComponentContext & { readonly kubeletPort?: number }): Promise<Proc> => {
  const port = await freePort()
  const proc = await spawnProc({
    name: "kwok",
    bin: toolPath("kwok"),
    logDir: join(c.dir, "logs"),
    attached: c.attached,
    // kwok also loads ~/.kwok/kwok.yaml when it exists; a private HOME keeps a developer's config out.
    env: { HOME: ensureDir(join(c.dir, "kwok-home")) },
    args: [
      `--kubeconfig=${componentKubeconfig(c, "kwok")}`,
      // kwok's fast stages, with the pods the process kubelet runs left out of the pod stages.
      `--config=${writeStages(dirname(kwokStagesDir()), join(ensureDir(join(c.dir, "kwok-home")), "stages.yaml"))}`,
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      // The fast heartbeat stage refreshes node status only every 600 s, so node leases carry liveness.
      "--node-lease-duration-seconds=40",
      "--cidr=10.244.0.0/16",
      // Every fake node's address and kubelet port: the process kubelet's API (pods/log), reachable on loopback.
      ...(c.kubeletPort ? ["--node-ip=127.0.0.1", `--node-port=${c.kubeletPort}`] : []),
      `--server-address=127.0.0.1:${port}`,
    ],
  })
  await waitReady(proc, healthy(`http://127.0.0.1:${port}/healthz`), 60_000, 100)
  return proc
}

export interface KubeletContext extends ComponentContext {
  /** Port of the kube-apiserver on 127.0.0.1 (what pods get as KUBERNETES_SERVICE_HOST/PORT). */
  readonly apiPort: number
  /** The nodes' kubelet port (kwok publishes 127.0.0.1:<it> as every fake node's kubelet endpoint). */
  readonly kubeletPort: number
  /** `<registry>/<prefix>` holding AICR's images (kubelet/aicr-images.ts); without it AICR's Jobs run the local binaries. */
  readonly aicrMirror?: string
}

const tsxLoader = () => createRequire(import.meta.url).resolve("tsx")

/** The process kubelet (kubelet/kubelet.ts): runs the local registry's images and AICR's for real on the kwok nodes. */
export const startProcessKubelet = async (c: KubeletContext): Promise<Proc> => {
  const dir = ensureDir(join(c.dir, "kubelet"))
  const config = join(dir, "config.json")
  // The kubelet serves its API with the API server's own self-signed pair; the API server does not verify kubelets.
  const pki = join(c.dir, "pki")
  writeFileSync(
    config,
    JSON.stringify({
      server: c.server,
      caFile: c.caFile,
      token: c.token,
      dir,
      apiHost: "127.0.0.1",
      apiPort: c.apiPort,
      logsPort: c.kubeletPort,
      certFile: join(pki, "apiserver.crt"),
      keyFile: join(pki, "apiserver.key"),
      ...(c.aicrMirror ? { aicrMirror: c.aicrMirror } : {}),
    }),
    { mode: 0o600 },
  )
  const proc = await spawnProc({
    name: "process-kubelet",
    bin: process.execPath,
    args: ["--import", tsxLoader(), join(import.meta.dirname, "kubelet", "main.ts"), config],
    logDir: join(c.dir, "logs"),
    attached: c.attached,
  })
  await waitReady(proc, async () => existsSync(proc.log) && readFileSync(proc.log, "utf8").includes("process kubelet started"), 60_000, 100)
  return proc
}

/**
 * The cluster egress and webhook stand-in (egress/egress.ts) as its own process: the HTTP CONNECT proxy on `socket`
 * the API server's egress selector dials, answering the webhooks and aggregated APIs whose pods kwok only pretends
 * to run. Started right after the API server (which retries its dials until the socket serves).
 */
export const startWebhookStandInProc = async (c: ComponentContext & { readonly socket: string }): Promise<Proc> => {
  const dir = ensureDir(join(c.dir, "egress"))
  const config = join(dir, "config.json")
  writeFileSync(config, JSON.stringify({ server: c.server, caFile: c.caFile, token: c.token, dir, socket: c.socket }), { mode: 0o600 })
  const proc = await spawnProc({
    name: "webhook-stand-in",
    bin: process.execPath,
    args: ["--import", tsxLoader(), join(import.meta.dirname, "egress", "main.ts"), config],
    logDir: join(c.dir, "logs"),
    attached: c.attached,
  })
  await waitReady(proc, async () => existsSync(proc.log) && readFileSync(proc.log, "utf8").includes("Webhook stand-in started"), 60_000, 100)
  return proc
}
