/**
 * `aicr-dev up`: the operator's main job on the embedded local control plane.
 *
 * Starts (or reuses) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with 2 system and 4 H100
 * nodes, and an OCI registry; installs the operator's API (crds/) and its admission policies and approver roles
 * (policies/); starts the local chart upstream and every controller built so far as its own process, and Argo CD
 * (redis, repo-server, application-controller); applies the sample ClusterRuntime of the EKS guide and shows what
 * the controllers report. In the foreground until Ctrl-C, SIGTERM or SIGHUP, which stop everything; `--detach`
 * leaves it all running (stop it with `aicr-dev down`).
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  eventually,
  installApprovalPolicies,
  kubeRequest,
  loadManifests,
  runtimeOciPrefix,
  startArgoCd,
  startControlPlane,
} from "@aicr/testing/harness"
import { installEngineProject, OPERATOR_NAMESPACE, registryPrefix, startLocalOperator } from "./local-operator"

const root = join(import.meta.dirname, "..")
const detach = process.argv.includes("--detach")
// `up --aws` (or AICR_UP_AWS=1): the ECR credential refresher mints tokens from a local AWS emulator (moto).
const aws = process.argv.includes("--aws") || process.env.AICR_UP_AWS === "1"
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

await applyManifests(info, join(root, "crds"))
await applyManifests(info, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: OPERATOR_NAMESPACE } }])
// The admission policies and approver roles the chart ships (policies/), with the editor stamp this API server
// serves (it records who made each spec change), applied and in force before the sample is.
await installApprovalPolicies(info, { editorStamp: true })
const [operator, argocd] = await Promise.all([
  startLocalOperator(info, { dir: stateDir, attached: !detach, aws }).then((o) => (stoppers.push({ name: "the operator", stop: () => o.stop() }), o)),
  startArgoCd(info, { attached: !detach }).then((a) => (stoppers.push({ name: "Argo CD", stop: () => a.stop() }), a)),
])
say(`operator processes: ${operator.procs.map((p) => `${p.name} (pid ${p.pid})`).join(", ")}`)
say(`Argo CD ${argocd.info.version} ready in ${(argocd.startMs / 1000).toFixed(1)}s: ${argocd.procs.map((p) => `${p.name} (pid ${p.pid})`).join(", ")}`)
// The AppProject the operator's chart creates (the step-executor reports ProjectMissing without it).
await installEngineProject(info)
// Applied as admin (the editor stamp records admin as the editor), unchanged: deployment validation stays the sample's
// default, Required, so the validation gate runs AICR's deployment validator after the last step.
await applyManifests(info, loadManifests(join(root, "e2e", "samples", "clusterruntime-eks.yaml")))

// Wait for the resolution (real AICR snapshot, recipe and bundle Jobs), its mirror and the plan, or for a condition
// that says why not: a False reason other than the in-progress ones. Then for the rollout the planner creates.
const conditionsOf = async () => {
  const res = await kubeRequest(info, { method: "GET", path: "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster" })
  return new Map<string, { status: string; reason: string }>((res.body?.status?.conditions ?? []).map((c: { type: string; status: string; reason: string }) => [c.type, c]))
}
// Argo CD and the AppProject come up beside the operator: wait for the step-executor to have seen them.
await eventually(async () => {
  const e = (await conditionsOf()).get("EngineAvailable")
  return e?.status === "True"
}, { timeoutMs: 60_000, what: "EngineAvailable=True on ClusterRuntime cluster" })
const IN_PROGRESS = new Set(["Discovering", "Resolving", "Mirroring", "AwaitingResolution", "Stabilizing", "NotYetReported"])
for (const type of ["RegistryCredentialsReady", "Discovered", "Resolved", "Mirrored", "Planned"]) {
  const c = await eventually(async () => {
    const got = (await conditionsOf()).get(type)
    return got !== undefined && (got.status === "True" || !IN_PROGRESS.has(got.reason)) ? got : undefined
  }, { timeoutMs: 300_000, intervalMs: 500, what: `${type} on ClusterRuntime cluster` })
  say(`${type}=${c.status} (${c.reason}) after ${((Date.now() - started) / 1000).toFixed(1)}s`)
}
const rollout = (await kubeRequest(info, { method: "GET", path: "/apis/operator.aicr.run/v1alpha1/runtimerollouts" })).body?.items?.find(
  (r: { metadata: { labels?: Record<string, string> } }) => !r.metadata.labels?.["operator.aicr.run/outcome"],
)?.metadata?.name as string | undefined
// The local approvers: the static user `approver` (group aicr-approvers) gets the approver role the chart ships.
await applyManifests(info, [
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "aicr-local-approvers" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "aicr-operator-approver" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "aicr-approvers" }],
  },
])

const kubectlBin = info.bin.kubectl ?? "kubectl"
const kubectl = (args: string[]) => spawnSync(kubectlBin, args, { stdio: "inherit", env: { ...process.env, KUBECONFIG: info.kubeconfig } })

kubectl(["get", "nodes", "-L", "eks.amazonaws.com/nodegroup,node.kubernetes.io/instance-type"])
kubectl(["get", "clusterruntime", "-o", "wide"])
kubectl([
  "get", "clusterruntime", "cluster", "-o",
  'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}',
])

process.stdout.write(
  [
    "",
    "The local control plane is up. In another shell:",
    `  export KUBECONFIG=${info.kubeconfig}`,
    `  export PATH=${dirname(kubectlBin)}:$PATH   # kubectl of the same Kubernetes version`,
    "  kubectl get clusterruntime -o wide",
    `  export PATH=${join(root, "dist", "apps", "kubectl-aicr")}:$PATH   # kubectl aicr (needs Node >= 24 on PATH)`,
    "  kubectl get runtimerollouts; kubectl aicr describe <rollout>",
    `Runtime registry: ${registryPrefix(info)} (plain HTTP)   chart upstream: ${operator.upstream}`,
    `Logs: ${join(stateDir, "logs")}/   audit log: ${info.auditLog}`,
    `Argo CD ${argocd.info.version} (application-controller, repo-server, redis ${argocd.info.redis}) in namespace ${ARGOCD_NAMESPACE}:`,
    `  kubectl -n ${ARGOCD_NAMESPACE} get applications`,
    `  Applications pull each chart by digest from ${runtimeOciPrefix(info)}/{charts,wrappers}/<chart> (native OCI sources; credential template runtime-oci)`,
    `  tail -f ${argocd.info.logs["argocd-application-controller"]}   # also argocd-repo-server.log, argocd-redis.log`,
    `  the controller writes as ${argocd.info.controllerUser} (audit log); metrics ${argocd.info.metrics.controller}/metrics`,
    "Controllers running: resolver, registry-mirror, planner (stabilization window 15s here; 10m is the chart's default),",
    `approval-guard, step-executor (AppProject argocd/aicr installed as the chart would), ecr-credential-refresher (${aws ? "aws, with moto as the local AWS" : "static; up --aws for ECR tokens from a local AWS"}),`,
    "validation-gate (validation Required, the sample's default: after the last step the real aicr validate runs; evidence under <registry>/aicr/cluster/evidence/).",
    "Validation Jobs: kubectl -n aicr-validation get jobs; kubectl get runtimerollouts -o jsonpath='{.items[*].status.validation}'",
    `AICR Jobs: kubectl -n ${OPERATOR_NAMESPACE} get jobs -l operator.aicr.run/role=aicr-job`,
    ...(rollout
      ? [
          "",
          `Rollout ${rollout} awaits approval. Approve it as the local approver (not the editor, admin):`,
          `  kubectl aicr describe ${rollout}`,
          `  kubectl aicr approve ${rollout} --expires 2h --reason "first install on the local control plane" --context approver`,
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
