/**
 * `aicr-dev up`: the operator installed the way the install guide installs it, on the embedded local control plane.
 *
 * Starts (or reuses) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with 2 system and 4 H100
 * nodes, the process kubelet and an OCI registry; starts Argo CD (redis, repo-server, application-controller) and the
 * local chart upstream (standing in for the public chart repositories: it serves the projects' own chart packages of
 * third-party/charts whenever that folder is there, else the stand-ins; AICR_UPSTREAM_CHARTS=real|stand-in chooses);
 * then the guide's install (hack/local-chart.ts):
 * the controllers' images built without a daemon and pushed to the local registry, `aicr-system` with its Pod
 * Security label, `helm install` of the chart from the local registry with a guide-shaped values.yaml (printed), and
 * `kubectl rollout status` of every Deployment. The process kubelet runs each controller's pod from its image. Then
 * the sample ClusterRuntime of the EKS guide, and it waits until the first rollout awaits approval and prints the
 * approve line. In the foreground until Ctrl-C, SIGTERM or SIGHUP, which stop everything; `--detach` leaves it all
 * running (stop it with `aicr-dev down`).
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { LABEL_OUTCOME } from "@aicr/api"
import { realChartsDir } from "@aicr/chart-upstream"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  eventually,
  installEditorStamp,
  kubeRequest,
  loadManifests,
  runtimeOciPrefix,
  startArgoCd,
  startControlPlane,
} from "@aicr/testing/harness"
import {
  buildLocalImages,
  buildLocalOperatorImage,
  localAicrDigests,
  createReleaseNamespace,
  DEPLOYMENTS,
  imagePrefix,
  installLocalChart,
  installStaticCredentials,
  localKubectl,
  localValues,
  pushLocalChart,
  RELEASE,
  writeValues,
} from "./local-chart"
import { OPERATOR_NAMESPACE, registryPrefix, startLocalUpstream } from "./local-operator"

const root = join(import.meta.dirname, "..")
/** The step executor's step timeout `up` sets when it serves the real charts (unless AICR_STEP_TIMEOUT says otherwise). */
const REAL_CHARTS_STEP_TIMEOUT = "45m"
/**
 * How long the install took after the approval on the real charts here: Ready 16 minutes after the approval at a load
 * average of 15-20 on 2 shared cores, kube-prometheus-stack's first sync alone up to 20 minutes at 25-40
 * (docs/benchmarks.md, real-charts).
 */
const REAL_CHARTS_WAIT = "15-20 minutes, more on a loaded machine,"
const detach = process.argv.includes("--detach")
if (process.argv.includes("--aws") || process.env.AICR_UP_AWS === "1") {
  // The chart's refresher gets AWS through EKS Pod Identity or IRSA, which the local control plane does not emulate
  // for its pods yet; the local AWS (moto) runs with the refresher as a local process in the e2e tier only.
  process.stderr.write(
    "[aicr-dev] up --aws is not supported since up installs the chart (registry.auth.provider static here); see docs/local-control-plane.md\n",
  )
  process.exit(2)
}
const stateDir = process.env.AICR_LOCAL_DIR ?? join(root, ".aicr", "local")
const say = (msg: string) => process.stderr.write(`[aicr-dev] ${msg}\n`)

// SIGINT (Ctrl-C), SIGTERM and SIGHUP (a process manager, a closed terminal) stop everything started so far, at any
// point of the start-up too; a repeated signal (a terminal sends SIGINT to the whole process group, and aicr-dev
// passes it on as well) does not interrupt the stop. Attached components would also go with this process (their
// watchdogs), but a stop in order is quicker and leaves no half-written state.
const stoppers: Array<{ readonly name: string; readonly stop: () => Promise<unknown> }> = []
let stopping = false
const stopAll = async (signal: string) => {
  if (stopping) return
  stopping = true
  say(`${signal}: stopping the operator and the local control plane`)
  for (const s of stoppers.reverse()) {
    await s.stop().catch((e: unknown) => say(`stopping ${s.name}: ${e instanceof Error ? e.message : String(e)}`))
  }
  // A stop on request is a clean end: exit 0, as before (a process manager counts it a success).
  process.exit(0)
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stopAll(signal))

const started = Date.now()
// Reuses a healthy plane already recorded in stateDir (e.g. from `up --detach`).
const plane = await startControlPlane({ dir: stateDir, attached: !detach })
stoppers.push({ name: "the control plane", stop: () => plane.stop() })
const { info } = plane
say(`control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s at ${info.server}`)

// Argo CD first: the guide installs the operator into a cluster that runs Argo CD (its CRDs hold the chart's AppProject).
const argocd = await startArgoCd(info, { attached: !detach })
stoppers.push({ name: "Argo CD", stop: () => argocd.stop() })
say(`Argo CD ${argocd.info.version} ready in ${(argocd.startMs / 1000).toFixed(1)}s: ${argocd.procs.map((p) => `${p.name} (pid ${p.pid})`).join(", ")}`)
// The local chart upstream stands in for the public chart repositories (the registry-mirror's upstream rewrites).
const upstream = await startLocalUpstream(info, { dir: stateDir, attached: !detach })
stoppers.push({ name: "the chart upstream", stop: () => upstream.stop() })
const realCharts = upstream.charts.filter((c) => c.origin === "real")
const chartsLine =
  realCharts.length > 0
    ? `the projects' own packages (${realCharts.length} of ${upstream.charts.length} charts real) from ${realChartsDir() ?? "the real charts folder"}`
    : `the stand-in charts (${upstream.charts.length}; ${process.env.AICR_UPSTREAM_CHARTS === "stand-in" ? "AICR_UPSTREAM_CHARTS=stand-in" : "no real charts folder"})`
say(`chart upstream at ${upstream.httpUrl}: ${chartsLine}`)
// The real charts' first sync can take longer than the chart's default step timeout (15m) here: on 2 shared cores the
// API server took minutes to establish kube-prometheus-stack's large CRDs (docs/adr/20261203-real-charts.md). A
// local-control-plane allowance, like the planner's 15s stabilization window; AICR_STEP_TIMEOUT sets it either way.
const stepTimeout = process.env.AICR_STEP_TIMEOUT ?? (realCharts.length > 0 ? REAL_CHARTS_STEP_TIMEOUT : undefined)

// The install guide's steps: the operator's images (built without a daemon, cached by content) and its chart pushed
// to the plane's registry, the release namespace with its Pod Security label, values.yaml, helm install, rollout status.
const images = await buildLocalImages(info)
say(
  `operator images pushed to ${imagePrefix(info)}: ${Object.values(images)
    .map((i) => `${i.repository.split("/").pop()}@${i.digest.slice(0, 19)}… (${i.seconds.toFixed(1)}s)`)
    .join(", ")}`,
)
// The release image (every controller in one) that the pushed chart's defaults pin by digest, as a released chart's do;
// values.yaml below still pins each controller's own image, which wins over it.
const operatorImage = await buildLocalOperatorImage(info)
const chart = pushLocalChart(info, stateDir, { operatorImage: `${operatorImage.repository}@${operatorImage.digest}`, aicrDigests: await localAicrDigests() })
createReleaseNamespace(info)
await installStaticCredentials(info)
const values = writeValues(
  stateDir,
  localValues(info, {
    images,
    upstreamRewrites: upstream.rewrites,
    ...(process.env.AICR_VERSION ? { aicrVersion: process.env.AICR_VERSION } : {}),
    ...(stepTimeout ? { stepTimeout } : {}),
  }),
)
process.stdout.write(`\n# ${values.file}\n${values.text}\n`)
installLocalChart(info, stateDir, chart, values.file)
const pods = localKubectl(info)(["-n", OPERATOR_NAMESPACE, "get", "pods", "-o", "wide"], { echo: true })
process.stdout.write(pods)
say(`operator installed: helm release ${RELEASE} in ${OPERATOR_NAMESPACE} (${chart.ref}:${chart.version}); every Deployment rolled out`)
// The optional editor stamp (a MutatingAdmissionPolicy this API server serves) beside the chart's admission policies:
// it records who made each spec change, so the sample needs no editor annotation.
await installEditorStamp(info)
// Applied as admin (the editor stamp records admin as the editor), unchanged: deployment validation stays the sample's
// default, Required, so the validation gate runs AICR's deployment validator after the last step.
await applyManifests(info, loadManifests(join(root, "e2e", "samples", "clusterruntime-eks.yaml")))

// Wait for the resolution (real AICR snapshot, recipe and bundle Jobs), its mirror and the plan, or for a condition
// that says why not: a False reason other than the in-progress ones. Then for the rollout the planner creates.
const conditionsOf = async () => {
  const res = await kubeRequest(info, { method: "GET", path: "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster" })
  return new Map<string, { status: string; reason: string }>(
    (res.body?.status?.conditions ?? []).map((c: { type: string; status: string; reason: string }) => [c.type, c]),
  )
}
// Argo CD and the chart's AppProject: wait for the step-executor to have seen them.
await eventually(
  async () => {
    const e = (await conditionsOf()).get("EngineAvailable")
    return e?.status === "True"
  },
  { timeoutMs: 60_000, what: "EngineAvailable=True on ClusterRuntime cluster" },
)
const IN_PROGRESS = new Set(["Discovering", "Resolving", "Mirroring", "AwaitingResolution", "Stabilizing", "NotYetReported"])
for (const type of ["RegistryCredentialsReady", "Discovered", "Resolved", "Mirrored", "Planned"]) {
  const c = await eventually(
    async () => {
      const got = (await conditionsOf()).get(type)
      return got !== undefined && (got.status === "True" || !IN_PROGRESS.has(got.reason)) ? got : undefined
    },
    { timeoutMs: 300_000, intervalMs: 500, what: `${type} on ClusterRuntime cluster` },
  )
  say(`${type}=${c.status} (${c.reason}) after ${((Date.now() - started) / 1000).toFixed(1)}s`)
}
// Stop at AwaitingApproval: the planner's first rollout waits for an approver (its Approved condition).
type Rollout = {
  metadata: { name: string; labels?: Record<string, string> }
  status?: { conditions?: Array<{ type: string; status: string; reason: string }> }
}
const open = async () =>
  (((await kubeRequest(info, { method: "GET", path: "/apis/operator.aicr.run/v1alpha1/runtimerollouts" })).body?.items as Rollout[] | undefined) ?? []).find(
    (r) => !r.metadata.labels?.[LABEL_OUTCOME],
  )
const awaiting =
  (await conditionsOf()).get("Planned")?.status === "True"
    ? await eventually(
        async () => {
          const r = await open()
          const approved = r?.status?.conditions?.find((c) => c.type === "Approved")
          return approved && approved.reason !== "NotYetReported" ? { name: r!.metadata.name, approved } : undefined
        },
        { timeoutMs: 120_000, intervalMs: 500, what: "the first rollout's Approved condition (AwaitingApproval)" },
      )
    : undefined
if (awaiting)
  say(`rollout ${awaiting.name}: Approved=${awaiting.approved.status} (${awaiting.approved.reason}) after ${((Date.now() - started) / 1000).toFixed(1)}s`)
const rollout = awaiting?.name
// The local approver: the static user `approver` is in group aicr-approvers, which values.yaml binds (approvers.groups).
const kubectlBin = info.bin.kubectl ?? "kubectl"
const kubectl = (args: string[]) => spawnSync(kubectlBin, args, { stdio: "inherit", env: { ...process.env, KUBECONFIG: info.kubeconfig } })

kubectl(["get", "nodes", "-L", "eks.amazonaws.com/nodegroup,node.kubernetes.io/instance-type"])
kubectl(["get", "clusterruntime", "-o", "wide"])
kubectl(["get", "clusterruntime", "cluster", "-o", 'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}'])

process.stdout.write(
  [
    "",
    "The local control plane is up. In another shell:",
    `  export KUBECONFIG=${info.kubeconfig}`,
    `  export PATH=${dirname(kubectlBin)}:$PATH   # kubectl of the same Kubernetes version`,
    "  kubectl get clusterruntime -o wide",
    `  export PATH=${join(root, "dist", "apps", "kubectl-aicr")}:$PATH   # kubectl aicr (needs Node >= 24 on PATH)`,
    "  kubectl get runtimerollouts; kubectl aicr describe <rollout>",
    `Runtime registry: ${registryPrefix(info)} (plain HTTP)   chart upstream: ${upstream.httpUrl}`,
    `Charts: ${chartsLine}`,
    `Operator: helm release ${RELEASE} in ${OPERATOR_NAMESPACE} from ${chart.ref} ${chart.version}, values ${values.file}; images ${imagePrefix(info)}/aicr-operator-<controller>`,
    `  kubectl -n ${OPERATOR_NAMESPACE} get deployments,pods   # ${DEPLOYMENTS.join(", ")}`,
    `  kubectl -n ${OPERATOR_NAMESPACE} logs deployment/aicr-resolver   # the process kubelet's container logs`,
    `Logs: ${join(stateDir, "logs")}/   audit log: ${info.auditLog}`,
    `Argo CD ${argocd.info.version} (application-controller, repo-server, redis ${argocd.info.redis}) in namespace ${ARGOCD_NAMESPACE}:`,
    `  kubectl -n ${ARGOCD_NAMESPACE} get applications`,
    `  Applications pull each chart by digest from ${runtimeOciPrefix(info)}/{charts,wrappers}/<chart> (native OCI sources; credential template runtime-oci)`,
    `  tail -f ${argocd.info.logs["argocd-application-controller"]}   # also argocd-repo-server.log, argocd-redis.log`,
    `  the controller writes as ${argocd.info.controllerUser} (audit log); metrics ${argocd.info.metrics.controller}/metrics`,
    "Controllers running from their images: resolver, registry-mirror, planner (stabilization window 15s here; 10m is the chart's default),",
    `approval-guard, step-executor (the chart's AppProject argocd/aicr${stepTimeout ? `; step timeout ${stepTimeout} here, 15m is the chart's default` : ""}), ecr-credential-refresher (static: the local registry needs no login),`,
    "validation-gate (validation Required, the sample's default: after the last step the real aicr validate runs; evidence under <registry>/aicr/cluster/evidence/).",
    "Validation Jobs: kubectl -n aicr-validation get jobs; kubectl get runtimerollouts -o jsonpath='{.items[*].status.validation}'",
    `AICR Jobs: kubectl -n ${OPERATOR_NAMESPACE} get jobs -l operator.aicr.run/role=aicr-job (the snapshot agent in aicr-discovery)`,
    ...(rollout
      ? [
          "",
          awaiting?.approved.reason === "AwaitingApproval"
            ? `Rollout ${rollout} awaits approval (AwaitingApproval). Approve it as the local approver (not the editor, admin):`
            : `Rollout ${rollout}: Approved=${awaiting?.approved.status} (${awaiting?.approved.reason}). To approve it as the local approver (not the editor, admin):`,
          `  kubectl aicr describe ${rollout}`,
          `  kubectl aicr approve ${rollout} --expires 2h --reason "first install on the local control plane" --context approver`,
          ...(realCharts.length > 0
            ? [
                "After the approval the releases roll out one at a time from the real charts through Argo CD, each with its CRDs,",
                `hooks and webhooks: expect ${REAL_CHARTS_WAIT} before Ready on 2 cores (step timeout ${stepTimeout} here).`,
                `Follow it with kubectl aicr watch ${rollout}. For the small stand-in charts instead, which install much faster:`,
                "down, then up with AICR_UPSTREAM_CHARTS=stand-in and a new AICR_LOCAL_DIR (the registry here keeps the real charts' tags).",
              ]
            : []),
        ]
      : ["", "No rollout yet: see the Planned condition above."]),
    "",
  ].join("\n"),
)

if (detach) {
  process.stdout.write(`Detached. Stop it with: npx -y node@24 hack/aicr-dev.mjs down\n`)
  process.exit(0)
}

process.stdout.write("Running; press Ctrl-C (or send SIGTERM) to stop everything.\n")
setInterval(() => {}, 1 << 30)
