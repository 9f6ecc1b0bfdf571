/**
 * The README's first command exactly as a user runs it (`hack/aicr-dev.mjs up`, detached so the test can go on), in
 * its own state directory. It must do the install guide's steps on the local control plane: push the operator's
 * images and chart to the local registry, create `aicr-system` with its Pod Security label, `helm install` the chart
 * with a guide-shaped values.yaml (printed, images by digest), have every Deployment roll out from its image (the
 * process kubelet runs each controller's pod), apply the sample runtime and stop at AwaitingApproval with the approve
 * line. Checked the user's way, with kubectl and helm. A second `up` reuses the plane and rolls nothing; `down` leaves
 * no process behind.
 *
 * Charts: `up`'s default, as the README's command runs it: the real upstream charts (third-party/charts), which the
 * mirror copies into the runtime registry before the rollout is planned; `helm pull` of each from there is the
 * project's own package byte for byte. The file stops at the approval, so it does not run the real charts' install
 * (8 minutes and more here, after the approval): the acceptance stories run it (e2e/acceptance.e2e.test.ts, story 1).
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { realChartsDir } from "@aicr/chart-upstream"
import { pidAlive, processesOfPod, repoRoot, toolPath } from "@aicr/testing/harness"
import { afterAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { DEPLOYMENTS } from "../hack/local-chart"

const run = promisify(execFile)
const root = repoRoot()
const dir = mkdtempSync(join(tmpdir(), "aicr-readme-up-"))
const env = { ...process.env, AICR_LOCAL_DIR: dir }
const devScript = join(root, "hack", "aicr-dev.mjs")
const kubeconfig = join(dir, "kubeconfig")

const kubectl = async (...args: string[]) => (await run(toolPath("kubectl"), ["--kubeconfig", kubeconfig, ...args], { maxBuffer: 16 << 20 })).stdout
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

const recordedPlane = (): Array<{ name: string; pid: number }> =>
  (JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { procs: Array<{ name: string; pid: number }> }).procs
const planePids = (): number[] => recordedPlane().map((p) => p.pid)
/** The control plane's own processes (Argo CD's are restarted by every up). */
const corePids = (): number[] =>
  recordedPlane()
    .filter((p) => !/argocd|redis/.test(p.name))
    .map((p) => p.pid)
const recordedPids = (): number[] => {
  const local = JSON.parse(readFileSync(join(dir, "operator.json"), "utf8")) as Array<{ pid: number }>
  return [...planePids(), ...local.map((p) => p.pid)]
}

interface Pod {
  metadata: { name: string; uid: string; labels: Record<string, string> }
  spec: { serviceAccountName: string; containers: Array<{ image: string }> }
  status: { phase: string; podIP?: string; containerStatuses?: Array<{ ready: boolean; imageID: string }> }
}
/** The charts of AICR v0.11.1's recipe (the one `up` resolves), as the recipe pins them. */
const RECIPE_CHARTS = [
  ["aws-ebs-csi-driver", "2.55.0"],
  ["aws-efa-k8s-device-plugin", "v0.5.3"],
  ["cert-manager", "v1.17.2"],
  ["kube-prometheus-stack", "82.8.0"],
  ["k8s-ephemeral-storage-metrics", "1.19.2"],
  ["prometheus-adapter", "5.3.0"],
  ["skyhook-operator", "v0.14.0"],
  ["gpu-operator", "v25.10.1"],
  ["kai-scheduler", "v0.13.0"],
  ["kubeflow-trainer", "2.1.0"],
  ["nvidia-dra-driver-gpu", "25.12.0"],
  ["nvsentinel", "v1.1.0"],
] as const

const operatorPods = async (): Promise<Pod[]> =>
  (JSON.parse(await kubectl("-n", "aicr-system", "get", "pods", "-l", "app.kubernetes.io/part-of=aicr-operator", "-o", "json")) as { items: Pod[] }).items

describe("aicr-dev up --detach and down", () => {
  let pids: number[] = []
  let pods: Pod[] = []
  let stdout = ""

  afterAll(async () => {
    await run(process.execPath, [devScript, "down"], { cwd: root, env }).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  })

  it("installs the chart the guide's way, with a printed values.yaml that pins each controller's image by digest", { timeout: 1_200_000 }, async () => {
    const res = await run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 16 << 20 })
    stdout = res.stdout
    // The values file, printed and on disk, shaped like the guide's.
    const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as {
      registry: { repository: string; auth: { provider: string } }
      namespaces: { components: Array<{ name: string; podSecurity: string }> }
      approvers: { groups: string[] }
      validation: { enabled: boolean }
      controllers: Record<string, { image: { repository: string; digest: string } }>
    }
    expect(stdout).toContain(readFileSync(join(dir, "values.yaml"), "utf8"))
    expect(values.registry.repository).toMatch(/^oci:\/\/127\.0\.0\.1:\d+\/aicr\/cluster$/)
    expect(values.namespaces.components.map((c) => c.name)).toContain("gpu-operator")
    expect(values.approvers.groups).toEqual(["aicr-approvers"])
    expect(values.validation.enabled).toBe(true)
    expect(Object.keys(values.controllers)).toHaveLength(7)
    for (const [key, c] of Object.entries(values.controllers)) expect(c.image.digest, key).toMatch(/^sha256:[0-9a-f]{64}$/)

    // helm knows the release, installed from the chart in the local registry.
    const status = await helm("status", "aicr-operator", "--namespace", "aicr-system")
    expect(status).toMatch(/STATUS: deployed/)
    const ns = JSON.parse(await kubectl("get", "namespace", "aicr-system", "-o", "json")) as { metadata: { labels: Record<string, string> } }
    expect(ns.metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted")
  })

  it("every Deployment rolled out, each pod running from its image under its own ServiceAccount on a pod IP of its own", async () => {
    for (const d of DEPLOYMENTS)
      expect(await kubectl("-n", "aicr-system", "rollout", "status", `deployment/${d}`, "--timeout=10s"), d).toContain(
        `deployment "${d}" successfully rolled out`,
      )
    pods = await operatorPods()
    expect(pods).toHaveLength(7)
    const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as { controllers: Record<string, { image: { repository: string; digest: string } }> }
    const wanted = new Set(Object.values(values.controllers).map((c) => `${c.image.repository}@${c.image.digest}`))
    for (const p of pods) {
      expect(p.status.phase, p.metadata.name).toBe("Running")
      expect(wanted.has(p.spec.containers[0]!.image), p.spec.containers[0]!.image).toBe(true)
      expect(p.status.containerStatuses![0]!.ready, p.metadata.name).toBe(true)
      expect(p.status.podIP, p.metadata.name).toMatch(/^127\.(?!0\.0\.1$)\d+\.\d+\.\d+$/)
      // Really running: a process of this pod exists on the machine (kwok would only have marked it Running).
      expect(processesOfPod(p.metadata.name).length, p.metadata.name).toBeGreaterThan(0)
    }
    expect(new Set(pods.map((p) => p.status.podIP)).size).toBe(7)
    expect(new Set(pods.map((p) => p.spec.serviceAccountName)).size).toBe(7)
  })

  it("applies the sample runtime, resolves it for real and stops at AwaitingApproval with the approve line", async () => {
    expect(stdout).toMatch(/^cluster\s/m)
    expect(stdout).toContain("Discovered=True NodeGroupsDiscovered")
    // The local AICR is 0.x: up runs the resolver with the development allowance, and the message says so.
    expect(stdout).toMatch(
      /^Resolved=True InputsResolved: Resolved input [0-9a-f]{12} with AICR v\S+ into 13 releases; AICR \S+ is outside the supported range >=1\.0\.0,<2\.0\.0, allowed for development only \(aicr\.allowUnsupportedVersion\)$/m,
    )
    expect(stdout).toMatch(/^Mirrored=True ContentMirrored: /m)
    expect(stdout).toContain("RegistryCredentialsReady=True CredentialsPresent")
    expect(stdout).toContain("EngineAvailable=True EngineReady")
    expect(stdout).toContain(`export KUBECONFIG=${kubeconfig}`)
    const rollouts = JSON.parse(await kubectl("get", "runtimerollouts", "-o", "json")) as { items: Array<{ metadata: { name: string } }> }
    expect(rollouts.items).toHaveLength(1)
    const name = rollouts.items[0]!.metadata.name
    expect(stdout).toContain(`kubectl aicr approve ${name} --expires 2h`)
    // The runtime says RollingOut; the rollout's own Approved condition says what it waits for.
    const approved = await kubectl(
      "get",
      "runtimerollout",
      name,
      "-o",
      'jsonpath={.status.conditions[?(@.type=="Approved")].status} {.status.conditions[?(@.type=="Approved")].reason}',
    )
    expect(approved).toBe("False AwaitingApproval")
    expect(stdout).toContain(`Rollout ${name} awaits approval (AwaitingApproval)`)
    // What the user waits for after the approval, on the real charts up serves by default.
    expect(stdout).toMatch(/^After the approval the releases roll out one at a time from the real charts through Argo CD/m)
    expect(stdout).toContain(`Follow it with kubectl aicr watch ${name}.`)
    pids = recordedPids()
    // etcd, registry, apiserver, webhook stand-in, KCM, scheduler, kwok, process kubelet, Argo CD's redis, repo-server,
    // controller + the chart upstream; the controllers are pods of the process kubelet.
    expect(pids.length).toBeGreaterThanOrEqual(12)
    expect(pids.every((pid) => pidAlive(pid))).toBe(true)
  })

  it("serves the real upstream charts by default: each chart of the recipe, pulled from the runtime registry, is the project's own package", async () => {
    const charts = realChartsDir()
    expect(charts, "third-party/charts beside the checkout").toBeDefined()
    const served = /^Charts: the projects' own packages \((\d+) of (\d+) charts real\) from (.+)$/m.exec(stdout)
    expect(served, "the Charts line up prints").not.toBeNull()
    expect([served![1], served![3]]).toEqual([served![2], charts])
    // The step timeout up raises for the real charts, in the printed values.yaml.
    const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as { registry: { repository: string }; stepExecutor?: { stepTimeout?: string } }
    expect(values.stepExecutor?.stepTimeout).toBe("45m")
    // The user's way: helm pull from the runtime registry the mirror wrote, and cmp with the project's package.
    const pulled = mkdtempSync(join(dir, "pulled-"))
    for (const [chart, version] of RECIPE_CHARTS) {
      await helm("pull", `${values.registry.repository}/charts/${chart}`, "--version", version, "--plain-http", "--destination", pulled)
      const file = `${chart}-${version}.tgz`
      await run("cmp", [join(pulled, file), join(charts!, file)])
    }
  })

  it("reuses the running control plane on a second up, and rolls no Deployment (same images, same values)", { timeout: 900_000 }, async () => {
    const plane = corePids()
    const { stderr } = await run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env, maxBuffer: 16 << 20 })
    expect(stderr).toMatch(/control plane ready in \d+\.\ds/)
    expect(corePids()).toEqual(plane)
    expect(plane.every((pid) => pidAlive(pid))).toBe(true)
    // helm upgraded the release in place (revision 2), and every pod is the one the first up started.
    expect(await helm("history", "aicr-operator", "--namespace", "aicr-system", "--max", "1")).toMatch(/^2\s/m)
    expect((await operatorPods()).map((p) => p.metadata.uid).sort()).toEqual(pods.map((p) => p.metadata.uid).sort())
  })

  it("stops every process it started on down", async () => {
    const all = recordedPids()
    const controllers = pods.flatMap((p) => processesOfPod(p.metadata.name))
    expect(controllers.length).toBeGreaterThanOrEqual(7)
    const { stderr } = await run(process.execPath, [devScript, "down"], { cwd: root, env })
    expect(stderr).toMatch(/stopped 1 operator processes, 3 Argo CD processes and 8 control-plane processes/)
    expect(all.filter((pid) => pidAlive(pid))).toEqual([])
    // The controllers' containers went with the process kubelet.
    expect(controllers.filter((pid) => pidAlive(pid))).toEqual([])
  })
})
