/**
 * `aicr-dev up`: the operator's main job on the embedded local control plane.
 *
 * Starts (or reuses) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with 2 system and 4 H100
 * nodes, and an OCI registry; installs the operator's API (crds/); applies the sample ClusterRuntime of the EKS guide;
 * shows `kubectl get clusterruntime`. In the foreground until Ctrl-C, which stops everything; `--detach` leaves the
 * control plane running (stop it with `aicr-dev down`).
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { applyManifests, startControlPlane } from "@aicr/testing/harness"

const root = join(import.meta.dirname, "..")
const detach = process.argv.includes("--detach")
const stateDir = process.env.AICR_LOCAL_DIR ?? join(root, ".aicr", "local")

const started = Date.now()
// Reuses a healthy plane already recorded in stateDir (e.g. from `up --detach`).
const plane = await startControlPlane({ dir: stateDir, attached: !detach })
const { info } = plane
process.stderr.write(`[aicr-dev] control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s at ${info.server}\n`)

await applyManifests(info, join(root, "crds"))
await applyManifests(info, join(root, "e2e", "samples", "clusterruntime-eks.yaml"))

const kubectlBin = info.bin.kubectl ?? "kubectl"
const kubectl = (args: string[]) => spawnSync(kubectlBin, args, { stdio: "inherit", env: { ...process.env, KUBECONFIG: info.kubeconfig } })

kubectl(["get", "nodes", "-L", "eks.amazonaws.com/nodegroup,node.kubernetes.io/instance-type"])
kubectl(["get", "clusterruntime", "-o", "wide"])

process.stdout.write(
  [
    "",
    "The local control plane is up. In another shell:",
    `  export KUBECONFIG=${info.kubeconfig}`,
    `  export PATH=${dirname(kubectlBin)}:$PATH   # kubectl of the same Kubernetes version`,
    "  kubectl get clusterruntime -o wide",
    `OCI registry: ${info.registry} (plain HTTP)   audit log: ${info.auditLog}`,
    "No controller runs yet: the resolver, registry-mirror, planner, step-executor, approval-guard, validation-gate",
    "and ecr-credential-refresher join this command as they are built.",
    "",
  ].join("\n"),
)

if (detach) {
  process.stdout.write(`Detached. Stop it with: npx -y node@24 hack/aicr-dev.mjs down\n`)
  process.exit(0)
}

process.stdout.write("Running; press Ctrl-C to stop everything.\n")
const stop = async () => {
  process.stderr.write("[aicr-dev] stopping the local control plane\n")
  await plane.stop()
  process.exit(0)
}
process.once("SIGINT", () => void stop())
process.once("SIGTERM", () => void stop())
setInterval(() => {}, 1 << 30)
