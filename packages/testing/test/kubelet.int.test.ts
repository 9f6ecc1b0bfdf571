// The process kubelet on the real control plane: AICR's own Jobs run the real AICR binaries "on" kwok nodes, see
// those nodes' fake hosts, and report what really happened; every other pod keeps kwok's fake lifecycle.
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { parse, stringify } from "yaml"
import { createNamespace, eventually, expectOk, h100Host, HOLD_LABEL, kubeRequest, readVersions, setHostProfile } from "../src/harness/index"
import { aicrBinary } from "../src/harness/tools"

const run = promisify(execFile)
const info = inject("harness")
const { aicr: version } = readVersions()
const work = mkdtempSync(join(tmpdir(), "aicr-kubelet-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** The real `aicr` CLI as a user runs it against the cluster (KUBECONFIG: validate ignores --kubeconfig). */
const aicr = async (args: string[], opts: { allowFail?: boolean } = {}) => {
  try {
    const r = await run(aicrBinary(version), args, {
      env: { PATH: process.env.PATH, HOME: work, KUBECONFIG: info.kubeconfig },
      maxBuffer: 64 << 20,
      timeout: 300_000,
    })
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string }
    if (!opts.allowFail) throw new Error(`aicr ${args.join(" ")} exited ${err.code}:\n${err.stderr}`, { cause: e })
    return { code: err.code ?? -1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" }
  }
}

interface Measurement {
  type: string
  subtypes: { subtype: string; data: Record<string, unknown> }[]
}
const reading = (snap: { measurements: Measurement[] }, type: string, subtype: string, key: string): unknown =>
  snap.measurements.find((m) => m.type === type)?.subtypes.find((s) => s.subtype === subtype)?.data[key]

const get = async (path: string) => expectOk(await kubeRequest(info, { method: "GET", path }), `GET ${path}`)

/** Snapshot of one node through AICR's own agent Job (the CLI deploys it, the process kubelet runs it). */
const snapshotOf = async (ns: string, node: string) => {
  const out = join(work, `snapshot-${node}.yaml`)
  await aicr([
    "snapshot",
    "--namespace",
    ns,
    "--node-selector",
    `kubernetes.io/hostname=${node}`,
    "--image",
    `ghcr.io/nvidia/aicr:${version}`,
    "--timeout",
    "3m",
    "--output",
    out,
  ])
  return parse(readFileSync(out, "utf8"))
}

describe("process kubelet: AICR's snapshot agent runs for real on the fake hosts", () => {
  let ns: string
  beforeAll(async () => {
    ns = await createNamespace(info, "snap")
  })

  it("on a GPU node the snapshot shows that node's Ubuntu 24.04, AWS kernel and 8 × H100, not the build machine", async () => {
    const snap = await snapshotOf(ns, "kwok-gpu-0")
    expect(reading(snap, "OS", "release", "ID")).toBe("ubuntu")
    expect(reading(snap, "OS", "release", "VERSION_ID")).toBe("24.04")
    expect(reading(snap, "OS", "sysctl", "/proc/sys/kernel/osrelease")).toBe(h100Host().kernel)
    expect(reading(snap, "GPU", "smi", "gpu-count")).toBe(8)
    expect(reading(snap, "GPU", "smi", "gpu.model")).toBe("NVIDIA H100 80GB HBM3")
    expect(reading(snap, "GPU", "smi", "driver")).toBe(h100Host().gpu!.driver)
    expect(reading(snap, "K8s", "server", "version")).toBe(readVersions().k8s)
    // The agent pod really ran: its container ended with exit code 0 after a measurable time, on that node.
    const events = readFileSync(join(info.dir, "logs", "process-kubelet.log"), "utf8")
    expect(events).toMatch(new RegExp(`${ns}/aicr-\\S+: running aicr \\(pid \\d+\\) on kwok-gpu-0`))
    expect(events).toMatch(new RegExp(`${ns}/aicr-\\S+: ended aicr=0`))
  })

  it("on a system node the snapshot shows no GPU", async () => {
    const snap = await snapshotOf(ns, "kwok-system-0")
    expect(reading(snap, "OS", "release", "ID")).toBe("ubuntu")
    expect(reading(snap, "GPU", "smi", "gpu-count")).toBe(0)
  })

  it("a changed host profile (driver upgrade) is what the next snapshot sees", async () => {
    await setHostProfile(info, "kwok-gpu-1", h100Host({ driver: "580.95.05", cuda: "13.0" }))
    const snap = await snapshotOf(ns, "kwok-gpu-1")
    expect(reading(snap, "GPU", "smi", "driver")).toBe("580.95.05")
    expect(reading(snap, "GPU", "smi", "cuda-version")).toBe("13.0")
    const node = await get("/api/v1/nodes/kwok-gpu-1")
    expect(node.metadata.labels).toMatchObject({ "nvidia.com/cuda.driver.major": "580", "nvidia.com/cuda.driver.minor": "95" })
  })
})

describe("process kubelet: AICR's deployment validator runs the real check", () => {
  let ns: string
  let snapshot: string
  let recipeFile: string
  beforeAll(async () => {
    ns = await createNamespace(info, "val")
    snapshot = join(work, "snapshot-val.yaml")
    await aicr([
      "snapshot",
      "--namespace",
      ns,
      "--node-selector",
      "kubernetes.io/hostname=kwok-gpu-2",
      "--image",
      `ghcr.io/nvidia/aicr:${version}`,
      "--output",
      snapshot,
    ])
    recipeFile = join(work, "recipe.yaml")
    await aicr(["recipe", "--service", "eks", "--accelerator", "h100", "--intent", "training", "--os", "ubuntu", "--output", recipeFile])
    const recipe = parse(readFileSync(recipeFile, "utf8"))
    // The generated recipe declares four deployment checks; keep the one whose outcome depends on the cluster
    // (check-nvidia-smi would wait 10 minutes for a CUDA pod that kwok only pretends to run).
    expect(recipe.validation.deployment.checks).toContain("operator-health")
    recipe.validation.deployment.checks = ["operator-health"]
    writeFileSync(recipeFile, stringify(recipe))
  })

  afterAll(async () => {
    await kubeRequest(info, { method: "DELETE", path: "/api/v1/namespaces/gpu-operator" })
  })

  const validate = async () => {
    const report = join(work, `ctrf-${Date.now()}.json`)
    const r = await aicr(["validate", "--phase", "deployment", "-r", recipeFile, "-s", snapshot, "-n", ns, "-o", report], { allowFail: true })
    const ctrf = JSON.parse(readFileSync(report, "utf8"))
    process.stderr.write(`[kubelet test] aicr validate (exit ${r.code}): ${JSON.stringify(ctrf.results.tests)}\n`)
    return { code: r.code, ctrf, test: ctrf.results.tests.find((t: { name: string }) => t.name === "operator-health") }
  }

  it("operator-health fails with the validator's own message when no GPU Operator pod exists", async () => {
    const { code, ctrf, test } = await validate()
    // The validator's own words (validators/deployment/operator_health.go), through /dev/termination-log.
    expect(test).toMatchObject({ status: "failed", message: "[NOT_FOUND] no gpu-operator pods found" })
    // The CLI read the validator's output through pods/log: the API server proxied it to the process kubelet.
    expect(test.stdout.join("\n")).toMatch(/listing pods.*namespace=gpu-operator/)
    expect(ctrf.results.summary).toMatchObject({ tests: 1, failed: 1, passed: 0 })
    expect(code).toBe(8)
  })

  it("operator-health passes once a GPU Operator pod runs, and names it", async () => {
    const created = await kubeRequest(info, { method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: "gpu-operator" } } })
    if (created.status !== 409) expectOk(created, "namespace gpu-operator")
    const pod = {
      metadata: { name: "gpu-operator-7c9d", labels: { app: "gpu-operator" } },
      spec: { nodeName: "kwok-system-0", containers: [{ name: "gpu-operator", image: "nvcr.io/nvidia/gpu-operator:v25.3.0" }] },
    }
    expectOk(await kubeRequest(info, { method: "POST", path: "/api/v1/namespaces/gpu-operator/pods", body: pod }), "gpu-operator pod")
    await eventually(async () => (await get("/api/v1/namespaces/gpu-operator/pods/gpu-operator-7c9d")).status?.phase === "Running", {
      what: "the gpu-operator pod Running",
    })
    const { code, test } = await validate()
    expect(test).toMatchObject({ status: "passed" })
    expect(test.stdout.join("\n")).toContain("gpu-operator-7c9d")
    expect(code).toBe(0)
  })
})

describe("process kubelet: every other pod keeps kwok's fake lifecycle", () => {
  it("a Job with any other image completes as before, without a process", async () => {
    const ns = await createNamespace(info, "other")
    const job = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "plain", namespace: ns },
      spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1.37", command: ["false"] }] } } },
    }
    expectOk(await kubeRequest(info, { method: "POST", path: `/apis/batch/v1/namespaces/${ns}/jobs`, body: job }), "create job")
    await eventually(async () => (await get(`/apis/batch/v1/namespaces/${ns}/jobs/plain`)).status?.succeeded === 1, {
      timeoutMs: 60_000,
      what: "kwok completes the job",
    })
    const pods = await get(`/api/v1/namespaces/${ns}/pods`)
    expect(pods.items[0].status.containerStatuses[0].containerID ?? "").not.toMatch(/^harness:/)
  })

  it(`a pod labelled ${HOLD_LABEL} stays not ready until the label is removed, then kwok readies it`, async () => {
    const ns = await createNamespace(info, "held")
    const pod = (name: string, labels: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: ns, labels },
      spec: { nodeName: "kwok-system-0", containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
    })
    const ready = async (name: string) =>
      (await get(`/api/v1/namespaces/${ns}/pods/${name}`)).status?.conditions?.find((c: { type: string }) => c.type === "Ready")?.status === "True"
    for (const p of [pod("held", { [HOLD_LABEL]: "true" }), pod("free", {})])
      expectOk(await kubeRequest(info, { method: "POST", path: `/api/v1/namespaces/${ns}/pods`, body: p }), `create pod ${p.metadata.name}`)
    // The unlabelled twin on the same node turning ready shows kwok has seen both pods.
    await eventually(() => ready("free"), { timeoutMs: 60_000, what: "kwok readies the unlabelled pod" })
    await new Promise((r) => setTimeout(r, 3_000))
    const held = await get(`/api/v1/namespaces/${ns}/pods/held`)
    expect([held.status.phase, await ready("held")]).toEqual(["Pending", false])
    // Released the way the acceptance stories do it: the label removed from the pod.
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `/api/v1/namespaces/${ns}/pods/held`,
        body: { metadata: { labels: { [HOLD_LABEL]: null } } },
        contentType: "application/merge-patch+json",
      }),
      "remove the hold label",
    )
    await eventually(() => ready("held"), { timeoutMs: 60_000, what: "kwok readies the released pod" })
  })
})

describe("process kubelet: a killed AICR process is a failed pod, not a hang", () => {
  it("SIGKILL of the running aicr process ends the pod Failed with exit code 137", async () => {
    const ns = await createNamespace(info, "kill")
    // A real aicr command that blocks: the CLI, in-cluster, deploying a snapshot agent that can never schedule.
    expectOk(await kubeRequest(info, { method: "POST", path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: "runner" } } }), "sa")
    expectOk(
      await kubeRequest(info, {
        method: "POST",
        path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        body: {
          metadata: { name: `${ns}-runner` },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ kind: "ServiceAccount", name: "runner", namespace: ns }],
        },
      }),
      "crb",
    )
    const job = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "blocked", namespace: ns },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: "Never",
            serviceAccountName: "runner",
            nodeSelector: { "kubernetes.io/hostname": "kwok-system-1" },
            containers: [
              {
                name: "aicr",
                image: `ghcr.io/nvidia/aicr:${version}`,
                command: ["aicr"],
                args: ["snapshot", "--namespace", ns, "--node-selector", "no-such=node", "--timeout", "10m", "-o", "-"],
              },
            ],
          },
        },
      },
    }
    expectOk(await kubeRequest(info, { method: "POST", path: `/apis/batch/v1/namespaces/${ns}/jobs`, body: job }), "create job")
    // In-cluster, with the pod's own token, the CLI got as far as creating its agent Job.
    await eventually(
      async () => (await get(`/apis/batch/v1/namespaces/${ns}/jobs`)).items.some((j: { metadata: { name: string } }) => j.metadata.name !== "blocked"),
      {
        timeoutMs: 60_000,
        what: "the in-pod aicr to create its agent Job",
      },
    )
    const pod = (await get(`/api/v1/namespaces/${ns}/pods?labelSelector=job-name%3Dblocked`)).items[0]
    expect(pod.status.phase).toBe("Running")
    // kubectl logs works: the API server proxies pods/log to the process kubelet's containerLogs endpoint.
    const logs = await eventually(
      async () => {
        const r = await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}/log?container=aicr` })
        return r.status === 200 && typeof r.body === "string" && r.body.includes("agent") && r.body
      },
      { timeoutMs: 30_000, what: "pods/log of the running aicr" },
    )
    expect(logs).toMatch(/agent/i)
    const pid = Number(pod.status.containerStatuses[0].containerID.split("/").at(-1))
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]).toMatch(/aicr$/)
    process.kill(pid, "SIGKILL")
    const ended = await eventually(
      async () => {
        const p = await get(`/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`)
        return p.status.phase === "Failed" && p
      },
      { timeoutMs: 30_000, what: "the pod to fail" },
    )
    expect(ended.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 137, reason: "Error" })
    await eventually(async () => ((await get(`/apis/batch/v1/namespaces/${ns}/jobs/blocked`)).status?.failed ?? 0) === 1, {
      what: "the Job to count the failure",
    })
  })
})
