/**
 * The operator's lifecycle as a platform team lives it, on the chart `aicr-dev up` installs (its own state dir):
 * the first rollout approved and in flight, then
 *
 * - per-controller upgrade: `helm upgrade` changing the step-executor's image alone rolls that Deployment only, and
 *   the rollout in flight resumes and finishes with no Application written twice;
 * - per-controller scaling: `replicas: 2` runs one leader (the Lease) and a standby; killing the leader's process
 *   hands the Lease to the other pod;
 * - the install guide's step 3: the released chart's `operator.image` (by digest, read with `helm show values | yq`)
 *   copied with `oras cp` and set as `operator.image` runs every controller from that one image;
 * - `helm uninstall` keeps the CRDs, the runtime, the namespaces, the AppProject and every Application: the stack
 *   keeps running without the operator.
 *
 * Checked with kubectl, helm and the audit log of the API server, as a user would.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { writesByName, eventually, processesOfPod, repoRoot, toolPath } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import { DEPLOYMENTS, pushControllerRelease } from "../hack/local-chart"

const run = promisify(execFile)
const root = repoRoot()
const dir = mkdtempSync(join(tmpdir(), "aicr-lifecycle-"))
// The stand-in charts (AICR_UPSTREAM_CHARTS=stand-in), not the real ones `up` serves by default: the lifecycle's
// rollouts (install, suspension, upgrade, removal) are about the operator, and the real charts' install alone takes
// 8 minutes and more here (the acceptance stories run it: e2e/acceptance*.e2e.test.ts).
const env = { ...process.env, AICR_LOCAL_DIR: dir, AICR_UPSTREAM_CHARTS: "stand-in" }
const devScript = join(root, "hack", "aicr-dev.mjs")
const kubeconfig = join(dir, "kubeconfig")
const audit = { auditLog: join(dir, "audit.log") }
const NS = "aicr-system"
const EXECUTOR = `system:serviceaccount:${NS}:aicr-step-executor`

const kubectl = async (...args: string[]) =>
  (
    await run(toolPath("kubectl"), args, {
      // KUBECONFIG, not --kubeconfig: kubectl finds a plugin (kubectl aicr) only when no flag comes before its name.
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        PATH: [join(root, "dist", "apps", "kubectl-aicr"), dirname(toolPath("kubectl")), dirname(process.execPath), process.env.PATH].join(":"),
      },
      maxBuffer: 16 << 20,
    })
  ).stdout
const helm = async (...args: string[]) =>
  (
    await run(toolPath("helm"), ["--kubeconfig", kubeconfig, ...args], {
      env: {
        ...process.env,
        HELM_CONFIG_HOME: join(dir, "helm", "config"),
        HELM_CACHE_HOME: join(dir, "helm", "cache"),
        HELM_DATA_HOME: join(dir, "helm", "data"),
      },
      maxBuffer: 16 << 20,
    })
  ).stdout
const json = async <A>(...args: string[]): Promise<A> => JSON.parse(await kubectl(...args, "-o", "json")) as A

interface Pod {
  metadata: { name: string; uid: string; labels: Record<string, string> }
  status: { phase: string }
}
interface Deployment {
  metadata: { name: string; generation: number }
  spec: { replicas: number }
  status: { readyReplicas?: number }
}
interface Application {
  metadata: { name: string }
  status?: { sync?: { status: string }; health?: { status: string } }
}
interface Rollout {
  metadata: { name: string; labels?: Record<string, string> }
  status?: { steps?: { items?: Array<{ release: string; state: string }> } }
}

const operatorPods = async () => (await json<{ items: Pod[] }>("-n", NS, "get", "pods", "-l", "app.kubernetes.io/part-of=aicr-operator")).items
const deployments = async () => (await json<{ items: Deployment[] }>("-n", NS, "get", "deployments")).items
const applications = async () => (await json<{ items: Application[] }>("-n", "argocd", "get", "applications")).items
const rolloutOf = async (name: string) => json<Rollout>("get", "runtimerollout", name)

/**
 * The step-executor's writes of each Application, by name: its creates and server-side applies (from the audit log). A step
 * writes its Application once; a repeated write would count twice.
 */
const writesByApplication = (): Map<string, number> => writesByName(audit, { resource: "applications", namespace: "argocd", username: EXECUTOR })

let rollout = ""

beforeAll(async () => {
  await run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 16 << 20 })
  const rollouts = (await json<{ items: Rollout[] }>("get", "runtimerollouts")).items
  expect(rollouts).toHaveLength(1)
  rollout = rollouts[0]!.metadata.name
  await kubectl("aicr", "approve", rollout, "--expires", "2h", "--reason", "lifecycle e2e", "--context", "approver")
}, 1_500_000)

afterAll(async () => {
  await run(process.execPath, [devScript, "down"], { cwd: root, env }).catch(() => undefined)
  rmSync(dir, { recursive: true, force: true })
})

describe("the operator's lifecycle through its chart", () => {
  it(
    "helm upgrade changing one controller's image rolls that Deployment only; the rollout in flight resumes with no repeated write",
    { timeout: 1_500_000 },
    async () => {
      const steps = (await rolloutOf(rollout)).status?.steps?.items?.length ?? 0
      expect(steps).toBeGreaterThanOrEqual(13)
      // In flight: the step-executor has written its first Applications, not all of them.
      await eventually(
        async () => {
          const n = writesByApplication().size
          return n >= 1 && n < steps ? n : undefined
        },
        { timeoutMs: 600_000, intervalMs: 500, what: "the rollout in flight (some Applications written)" },
      )
      const before = new Map((await deployments()).map((d) => [d.metadata.name, d.metadata.generation]))
      const podsBefore = await operatorPods()

      // A new step-executor image: the same bundle, another version label, so another digest.
      const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as {
        registry: { plainHttp: string[] }
        controllers: { stepExecutor: { image: { repository: string; digest: string } } }
      }
      const registry = values.registry.plainHttp[0]!
      const built = await pushControllerRelease({ registry }, "stepExecutor", "0.1.1-e2e", join(dir, "images"))
      expect(built.digest).not.toBe(values.controllers.stepExecutor.image.digest)

      await helm(
        "upgrade",
        "aicr-operator",
        `oci://${registry}/charts/aicr-operator`,
        "--plain-http",
        "--namespace",
        NS,
        "--reuse-values",
        "--set",
        `controllers.stepExecutor.image.digest=${built.digest}`,
      )
      expect(await kubectl("-n", NS, "rollout", "status", "deployment/aicr-step-executor", "--timeout=600s")).toContain("successfully rolled out")
      const after = await deployments()
      for (const d of after) {
        if (d.metadata.name === "aicr-step-executor") expect(d.metadata.generation, d.metadata.name).toBe(before.get(d.metadata.name)! + 1)
        else expect(d.metadata.generation, d.metadata.name).toBe(before.get(d.metadata.name))
      }
      const podsAfter = await operatorPods()
      const kept = (p: Pod) => p.metadata.labels["app.kubernetes.io/component"] !== "step-executor" && !p.metadata.name.startsWith("aicr-step-executor-")
      expect(
        podsAfter
          .filter(kept)
          .map((p) => p.metadata.uid)
          .sort(),
      ).toEqual(
        podsBefore
          .filter(kept)
          .map((p) => p.metadata.uid)
          .sort(),
      )
      const executor = podsAfter.find((p) => p.metadata.name.startsWith("aicr-step-executor-"))!
      expect(podsBefore.map((p) => p.metadata.uid)).not.toContain(executor.metadata.uid)
      expect((await json<{ spec: { containers: Array<{ image: string }> } }>("-n", NS, "get", "pod", executor.metadata.name)).spec.containers[0]!.image).toBe(
        `${registry}/nvidia/aicr-operator-step-executor@${built.digest}`,
      )

      // The new step-executor resumes the same rollout: every release written, each Application written once.
      await eventually(async () => ((await rolloutOf(rollout)).metadata.labels?.["operator.aicr.run/outcome"] === undefined ? undefined : true), {
        timeoutMs: 1_200_000,
        intervalMs: 2000,
        what: `rollout ${rollout} to finish`,
      })
      expect((await rolloutOf(rollout)).metadata.labels?.["operator.aicr.run/outcome"]).toBe("Succeeded")
      const writes = writesByApplication()
      expect([...writes.keys()].sort()).toEqual((await applications()).map((a) => a.metadata.name).sort())
      expect(writes.size).toBeGreaterThanOrEqual(13)
      expect([...writes.entries()].filter(([, n]) => n !== 1)).toEqual([])
    },
  )

  it(
    "replicas: 2 runs one leader and a standby; when the leader's process stops, the other pod takes the Lease, and the killed leader comes back as a standby",
    { timeout: 900_000 },
    async () => {
      const registry = (parse(readFileSync(join(dir, "values.yaml"), "utf8")) as { registry: { plainHttp: string[] } }).registry.plainHttp[0]!
      await helm(
        "upgrade",
        "aicr-operator",
        `oci://${registry}/charts/aicr-operator`,
        "--plain-http",
        "--namespace",
        NS,
        "--reuse-values",
        "--set",
        "controllers.planner.replicas=2",
      )
      expect(await kubectl("-n", NS, "rollout", "status", "deployment/aicr-planner", "--timeout=600s")).toContain("successfully rolled out")
      const planners = (await operatorPods()).filter((p) => p.metadata.name.startsWith("aicr-planner-") && p.status.phase === "Running")
      expect(planners).toHaveLength(2)
      const holderOf = async () => (await json<{ spec: { holderIdentity?: string } }>("-n", NS, "get", "lease", "aicr-planner")).spec.holderIdentity ?? ""
      const leader = await eventually(
        async () => {
          const h = await holderOf()
          return planners.find((p) => h.startsWith(`${p.metadata.name}_`))
        },
        { timeoutMs: 120_000, what: "one of the two planner pods to hold the Lease" },
      )
      const standby = planners.find((p) => p !== leader)!
      const oldHolder = await holderOf()

      // The leader's process stops dead (SIGSTOP: it neither renews nor releases the Lease, as on a lost node); the
      // standby takes the Lease once it expires. Then the stopped process is killed: the kubelet restarts the container,
      // which waits as the standby now.
      const pids = processesOfPod(leader.metadata.name)
      expect(pids.length).toBeGreaterThan(0)
      for (const pid of pids) process.kill(pid, "SIGSTOP")
      try {
        const taken = await eventually(
          async () => {
            const h = await holderOf()
            return h !== oldHolder && h !== "" ? h : undefined
          },
          { timeoutMs: 120_000, intervalMs: 500, what: "the Lease to change hands after the leader's process stopped" },
        )
        expect(taken.startsWith(`${standby.metadata.name}_`), taken).toBe(true)
      } finally {
        for (const pid of pids) process.kill(pid, "SIGKILL")
      }
      const newHolder = await holderOf()
      const restarted = await eventually(
        async () => {
          const p = await json<{ status: { containerStatuses?: Array<{ restartCount: number; ready: boolean }> } }>(
            "-n",
            NS,
            "get",
            "pod",
            leader.metadata.name,
          )
          const c = p.status.containerStatuses?.[0]
          return c && c.restartCount >= 1 && c.ready ? c : undefined
        },
        { timeoutMs: 300_000, intervalMs: 1000, what: "the killed leader's container to restart and be ready" },
      )
      expect(restarted.restartCount).toBeGreaterThanOrEqual(1)
      expect(await holderOf()).toBe(newHolder)
    },
  )

  it(
    "the guide's step 3: the released chart names the operator image by digest; a copy of it, set as operator.image, runs every controller",
    { timeout: 900_000 },
    async () => {
      const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as Record<string, unknown> & { registry: { plainHttp: string[] } }
      const registry = values.registry.plainHttp[0]!
      const version = (parse(readFileSync(join(root, "charts", "aicr-operator", "Chart.yaml"), "utf8")) as { version: string }).version
      // The guide's lines, with the registry's address for ghcr.io and ECR. The one change: `--plain-http` (helm) and
      // `--from-plain-http --to-plain-http` (oras), since the local registry speaks HTTP where ghcr.io and ECR speak HTTPS.
      const script = [
        `IMAGE=$(helm show values oci://${registry}/charts/aicr-operator --version "\${VERSION}" --plain-http | yq -r .operator.image)`,
        `oras cp --from-plain-http --to-plain-http "\${IMAGE}" "\${ECR}/aicr-operator:v\${VERSION}" >&2`,
        `echo "\${ECR}/aicr-operator@\${IMAGE#*@}"          # operator.image`,
      ].join("\n")
      const ecr = `${registry}/ecr-copy`
      const path = [dirname(toolPath("helm")), dirname(toolPath("yq")), dirname(toolPath("oras")), process.env.PATH].join(":")
      const helmEnv = { HELM_CONFIG_HOME: join(dir, "helm", "config"), HELM_CACHE_HOME: join(dir, "helm", "cache"), HELM_DATA_HOME: join(dir, "helm", "data") }
      const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], {
        env: { ...process.env, ...helmEnv, PATH: path, HOME: dir, VERSION: version, ECR: ecr },
      })
      const copy = stdout.trim()
      expect(copy).toMatch(new RegExp(`^${ecr.replace(/[.]/gu, "\\.")}/aicr-operator@sha256:[0-9a-f]{64}$`, "u"))
      // The copy keeps the digest: the chart's default names the same digest under the release's repository.
      const shown = parse(await helm("show", "values", `oci://${registry}/charts/aicr-operator`, "--version", version, "--plain-http")) as {
        operator: { image: string }
        aicr: { version: string; digests: Record<string, string> }
      }
      expect(shown.operator.image).toBe(`${registry}/nvidia/aicr-operator@${copy.split("@")[1]}`)
      // The AICR images the release was qualified against, by digest: the resolver runs the pinned version's.
      const aicrVersion = (values["aicr"] as { version: string }).version
      expect(shown.aicr.digests[aicrVersion]).toMatch(/^sha256:[0-9a-f]{64}$/u)
      const resolverArgs = (
        await json<{ spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }>("-n", NS, "get", "deployment", "aicr-resolver")
      ).spec.template.spec.containers[0]!.args
      expect(resolverArgs).toContain(`--aicr-image=ghcr.io/nvidia/aicr:${aicrVersion}@${shown.aicr.digests[aicrVersion]}`)

      // values.yaml as the guide writes it: no controller image, operator.image the copy. Every Deployment rolls to it.
      const { controllers: _pinned, ...guide } = values
      const file = join(dir, "values-ecr-copy.yaml")
      writeFileSync(file, stringify({ ...guide, operator: { ...(guide["operator"] as object | undefined), image: copy } }))
      await helm(
        "upgrade",
        "aicr-operator",
        `oci://${registry}/charts/aicr-operator`,
        "--version",
        version,
        "--plain-http",
        "--namespace",
        NS,
        "--reset-values",
        "-f",
        file,
      )
      for (const d of DEPLOYMENTS)
        expect(await kubectl("-n", NS, "rollout", "status", `deployment/${d}`, "--timeout=600s"), d).toContain("successfully rolled out")
      type ImagePod = Pod & { metadata: { deletionTimestamp?: string }; spec: { containers: Array<{ image: string }> } }
      const pods = (await json<{ items: ImagePod[] }>("-n", NS, "get", "pods", "-l", "app.kubernetes.io/part-of=aicr-operator")).items
      const running = pods.filter((p) => p.status.phase === "Running" && p.metadata.deletionTimestamp === undefined)
      expect(new Set(running.map((p) => p.metadata.labels["app.kubernetes.io/component"]))).toEqual(
        new Set(["resolver", "registry-mirror", "planner", "approval-guard", "step-executor", "ecr-credential-refresher", "validation-gate"]),
      )
      expect([...new Set(running.map((p) => p.spec.containers[0]!.image))]).toEqual([copy])
      // The operator from the one image still holds the runtime: Ready stays True.
      const ready = await eventually(
        async () => {
          const c = (
            await json<{ status: { conditions: Array<{ type: string; status: string; reason: string }> } }>("get", "clusterruntime", "cluster")
          ).status.conditions.find((x) => x.type === "Ready")
          return c?.status === "True" ? c : undefined
        },
        { timeoutMs: 300_000, intervalMs: 2_000, what: "Ready=True on ClusterRuntime cluster from the operator image's controllers" },
      )
      expect(ready.reason).toBe("RolledOut")
    },
  )

  it(
    "helm uninstall keeps the CRDs, the runtime, the namespaces, the AppProject and every Application: the stack keeps running",
    { timeout: 600_000 },
    async () => {
      const appsBefore = (await applications()).map((a) => a.metadata.name).sort()
      expect(appsBefore.length).toBeGreaterThanOrEqual(13)
      await helm("uninstall", "aicr-operator", "--namespace", NS, "--wait")
      await eventually(async () => ((await deployments()).length === 0 ? true : undefined), { timeoutMs: 120_000, what: "the operator's Deployments to go" })
      expect(DEPLOYMENTS.length).toBe(7)
      for (const crd of ["clusterruntimes.operator.aicr.run", "runtimerollouts.operator.aicr.run"])
        expect(await kubectl("get", "crd", crd, "-o", "name")).toContain(crd)
      expect(await kubectl("get", "clusterruntime", "cluster", "-o", "name")).toContain("cluster")
      const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as { namespaces: { components: Array<{ name: string; create?: boolean }> } }
      for (const c of values.namespaces.components) {
        const ns = await json<{ metadata: { deletionTimestamp?: string; labels: Record<string, string> } }>("get", "namespace", c.name)
        expect(ns.metadata.deletionTimestamp, c.name).toBeUndefined()
        if (c.create !== false) expect(ns.metadata.labels["pod-security.kubernetes.io/enforce"], c.name).toBe("privileged")
      }
      expect(await kubectl("-n", "argocd", "get", "appproject", "aicr", "-o", "name")).toContain("aicr")
      // Every Application is still there, synced and healthy, after a while without the operator.
      await new Promise((r) => setTimeout(r, 15_000))
      const apps = await applications()
      expect(apps.map((a) => a.metadata.name).sort()).toEqual(appsBefore)
      expect(apps.filter((a) => a.status?.sync?.status !== "Synced" || a.status?.health?.status !== "Healthy").map((a) => a.metadata.name)).toEqual([])
    },
  )
})
