/**
 * What the acceptance files share: one `hack/aicr-dev.mjs up --detach` in its own state directory (AICR_LOCAL_DIR),
 * checked the user's way — `kubectl` and `kubectl aicr` (the plugin on PATH, contexts of the plane's kubeconfig per
 * user), `helm` with its own homes, the API server's audit log — and the long-running "training job" on a kwok GPU
 * node: a Job whose container the process kubelet really runs (a process on this machine, from an image on the
 * plane's registry), which must stay the same pod (UID), never restarted, still Running, its process alive.
 */
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { type Application } from "@aicr/argocd"
import {
  ARGOCD_NAMESPACE,
  eventually,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  processesOfPod,
  readVersions,
  repoRoot,
  toolPath,
  writesByName,
} from "@aicr/testing/harness"
import { expect } from "vitest"
import { parse } from "yaml"

export const run = promisify(execFile)
export const root = repoRoot()
export const versions = readVersions()
export const devScript = join(root, "hack", "aicr-dev.mjs")
export const NS = "aicr-system"
export const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
export const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
export const APPS = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications`
export const TRAINING_NS = "training"
export const OUTCOME = "operator.aicr.run/outcome"
/** The step-executor's identity in the audit log. */
export const EXECUTOR = `system:serviceaccount:${NS}:aicr-step-executor`

export interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
export interface Step {
  index: number
  release: string
  namespace: string
  action: string
  state: string
  writtenRevision?: string
  readyAtRevision?: string
  startedAt?: string
}
export interface Rollout {
  metadata: { name: string; labels?: Record<string, string>; creationTimestamp: string }
  spec: {
    kind: string
    toDigest: string
    fromDigest?: string
    requestedBy?: string
    requiresApproval?: boolean
    steps?: Array<{ release: string; namespace: string; action: string; verdict?: string; from?: string; to?: string }>
    approval?: { approvedBy: string }
  }
  status?: { conditions?: Cond[]; steps?: { total: number; done: number; items?: Step[] }; validation?: { evidenceRef?: string } }
}
export interface Pod {
  metadata: { name: string; uid: string }
  spec: { nodeName?: string; containers: Array<{ image: string }> }
  status: {
    phase: string
    podIP?: string
    conditions?: Array<{ type: string; status: string }>
    containerStatuses?: Array<{ restartCount: number; ready: boolean }>
  }
}

export const conditionOf = (o: { status?: { conditions?: Cond[] } }, type: string) => o.status?.conditions?.find((c) => c.type === type)
export const nowIso = () => new Date().toISOString()

/**
 * A state directory for one `up --detach` and the helpers that act on it as its users would. `env` is what `up` runs
 * with: the state directory, the AICR version and the charts the local chart upstream serves.
 */
export const acceptanceWorld = (opts: { prefix: string; aicrVersion: string; charts: "stand-in" | "real" }) => {
  const dir = mkdtempSync(join(tmpdir(), opts.prefix))
  const kubeconfig = join(dir, "kubeconfig")
  const env = { ...process.env, AICR_LOCAL_DIR: dir, AICR_VERSION: opts.aicrVersion, AICR_UPSTREAM_CHARTS: opts.charts }
  /** kubectl finds the plugin (kubectl aicr) on PATH; KUBECONFIG, not --kubeconfig, so that no flag comes before its name. */
  const userEnv = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    PATH: [join(root, "dist", "apps", "kubectl-aicr"), dirname(toolPath("kubectl")), dirname(process.execPath), process.env.PATH].join(":"),
  }

  /** Runs a command line in bash as a user would type it; stdout, stderr and the exit code (never throws). */
  const sh = async (script: string) => {
    try {
      const { stdout, stderr } = await run("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: dir, env: userEnv, maxBuffer: 16 << 20 })
      return { stdout, stderr, code: 0 }
    } catch (e) {
      const x = e as { stdout: string; stderr: string; code: number }
      return { stdout: x.stdout, stderr: x.stderr, code: x.code }
    }
  }
  const kubectl = async (...args: string[]) => (await run(toolPath("kubectl"), args, { env: userEnv, maxBuffer: 16 << 20 })).stdout
  const helmCmd = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(toolPath("helm"), ["--kubeconfig", kubeconfig, ...args], {
        env: {
          ...process.env,
          HELM_CONFIG_HOME: join(dir, "helm", "config"),
          HELM_CACHE_HOME: join(dir, "helm", "cache"),
          HELM_DATA_HOME: join(dir, "helm", "data"),
        },
        maxBuffer: 16 << 20,
      })
      return { stdout, stderr, code: 0 }
    } catch (e) {
      const x = e as { stdout: string; stderr: string; code: number }
      return { stdout: x.stdout, stderr: x.stderr, code: x.code }
    }
  }
  const json = async <A>(...args: string[]): Promise<A> => JSON.parse(await kubectl(...args, "-o", "json")) as A

  /** The charts the local chart upstream serves, with where each comes from, as its first line lists them. */
  const servedCharts = (): Array<{ name?: string; origin: string }> => {
    const line = readFileSync(join(dir, "logs", "chart-upstream.log"), "utf8")
      .split("\n")
      .find((l) => l.includes('"httpUrl"'))
    if (line === undefined) throw new Error(`the chart upstream's first line is not in ${join(dir, "logs", "chart-upstream.log")}`)
    return (JSON.parse(line) as { charts: Array<{ name?: string; origin: string }> }).charts
  }
  /** The plane `up` started (its state.json). */
  const plane = (): HarnessInfo => (JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { info: HarnessInfo }).info
  const get = async (path: string) => expectOk(await kubeRequest(plane(), { method: "GET", path }), `GET ${path}`)

  const rollouts = async (): Promise<Rollout[]> => (await get(ROLLOUTS)).items
  const rolloutOf = async (name: string): Promise<Rollout> => get(`${ROLLOUTS}/${name}`)
  const applications = async (): Promise<Application[]> => (await get(APPS)).items

  /** The open rollout (no outcome yet) other than those named, once the guard has said whether it awaits approval. */
  const openRollout = (not: ReadonlyArray<string> = []) =>
    eventually(
      async () => {
        const r = (await rollouts()).find((x) => x.metadata.labels?.[OUTCOME] === undefined && !not.includes(x.metadata.name))
        const approved = r && conditionOf(r, "Approved")
        return approved && approved.reason !== "NotYetReported" ? r : undefined
      },
      { timeoutMs: 600_000, intervalMs: 1_000, what: "an open rollout" },
    )

  const waitOutcome = (name: string, timeoutMs = 1_200_000) =>
    eventually(async () => (await rolloutOf(name)).metadata.labels?.[OUTCOME], { timeoutMs, intervalMs: 1_000, what: `rollout ${name} to end` })

  /** A runtime edit as the platform team makes it (admin; the editor stamp records admin as the editor, so approver may approve). */
  const editRuntime = async (patch: unknown, type: "merge" | "json" = "merge") => {
    const r = await sh(`kubectl patch clusterruntime cluster --context admin --type ${type} -p '${JSON.stringify(patch)}'`)
    expect(r.code, r.stderr).toBe(0)
  }
  /** `kubectl aicr approve` as the approver; returns when the approval is written. */
  const approve = async (name: string, reason: string) => {
    const r = await sh(`kubectl aicr approve ${name} --expires 2h --reason "${reason}" --context approver`)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`runtimerollout.operator.aicr.run/${name} approved by approver until `)
  }
  /** The step-executor's writes of each Application since a time (its creates and server-side applies, from the audit log). */
  const writesSince = (since: string) => writesByName(plane(), { resource: "applications", namespace: ARGOCD_NAMESPACE, username: EXECUTOR, since })

  // --- the training job ------------------------------------------------------------------------------------------

  const training = { uid: "", name: "", node: "", pids: [] as number[] }
  const trainingPods = async () => (await json<{ items: Pod[] }>("-n", TRAINING_NS, "get", "pods", "-l", "job-name=train")).items
  /** An image of the plane's registry with Node.js at /nodejs/bin/node (the planner's, by digest, from values.yaml). */
  const nodeImage = () => {
    const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as { controllers: { planner: { image: { repository: string; digest: string } } } }
    return `${values.controllers.planner.image.repository}@${values.controllers.planner.image.digest}`
  }

  /** Starts the long-running training job on a GPU node: a process the process kubelet runs from an image of the plane's registry. */
  const startTraining = async () => {
    const manifest = {
      apiVersion: "v1",
      kind: "List",
      items: [
        { apiVersion: "v1", kind: "Namespace", metadata: { name: TRAINING_NS } },
        {
          apiVersion: "batch/v1",
          kind: "Job",
          metadata: { name: "train", namespace: TRAINING_NS },
          spec: {
            backoffLimit: 0,
            template: {
              spec: {
                restartPolicy: "OnFailure",
                nodeSelector: { "eks.amazonaws.com/nodegroup": "gpu" },
                tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
                containers: [
                  {
                    name: "trainer",
                    image: nodeImage(),
                    // One epoch a second, for as long as the job runs.
                    command: ["/nodejs/bin/node", "-e", "let epoch = 0; setInterval(() => console.log(`epoch ${++epoch}`), 1000)"],
                    env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
                    resources: { limits: { "nvidia.com/gpu": "1" } },
                  },
                ],
              },
            },
          },
        },
      ],
    }
    const p = spawn(toolPath("kubectl"), ["apply", "-f", "-"], { env: userEnv })
    p.stdin.end(JSON.stringify(manifest))
    await new Promise((resolve, reject) =>
      p.on("exit", (code) => (code === 0 ? resolve(undefined) : reject(new Error(`kubectl apply of the training job exited ${code}`)))),
    )
    const pod = await eventually(
      async () => {
        const [x] = await trainingPods()
        return x?.status.phase === "Running" && x.status.containerStatuses?.[0]?.ready ? x : undefined
      },
      { timeoutMs: 300_000, intervalMs: 1_000, what: "the training job's pod Running" },
    )
    const pids = await eventually(
      async () => {
        const x = trainerProcesses(pod.metadata.name)
        return x.length > 0 ? x : undefined
      },
      { timeoutMs: 60_000, what: "the training job's process" },
    )
    Object.assign(training, { uid: pod.metadata.uid, name: pod.metadata.name, node: pod.spec.nodeName ?? "", pids })
  }

  /**
   * The trainer's own process: the pod's processes running the trainer's script. A short-lived second process with the
   * pod's environment was seen once as the pod started, and gone at the next check, so the pod's whole process list is
   * not a stable baseline.
   */
  const trainerProcesses = (pod: string) =>
    processesOfPod(pod).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("epoch")
      } catch {
        return false
      }
    })

  /** The check at the end of every story: the same pod, never restarted, Running, its process alive and still training. */
  const expectTrainingUntouched = async () => {
    const pods = await trainingPods()
    expect(pods.map((p) => p.metadata.uid)).toEqual([training.uid])
    const [pod] = pods
    expect(pod!.status.phase).toBe("Running")
    expect(pod!.status.containerStatuses?.[0]?.restartCount).toBe(0)
    expect(pod!.spec.nodeName).toBe(training.node)
    expect(trainerProcesses(training.name)).toEqual(training.pids)
    expect(await kubectl("-n", TRAINING_NS, "logs", training.name, "--tail=1")).toMatch(/^epoch \d+\n$/)
  }

  /** `up --detach` in this state directory (a second call upgrades in place), and `down`. */
  const up = () => run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 64 << 20 })
  const down = () => run(process.execPath, [devScript, "down"], { cwd: root, env }).catch(() => undefined)

  return {
    dir,
    kubeconfig,
    env,
    userEnv,
    sh,
    kubectl,
    helmCmd,
    json,
    plane,
    servedCharts,
    get,
    rollouts,
    rolloutOf,
    applications,
    openRollout,
    waitOutcome,
    editRuntime,
    approve,
    writesSince,
    training,
    trainingPods,
    nodeImage,
    startTraining,
    expectTrainingUntouched,
    up,
    down,
  }
}
