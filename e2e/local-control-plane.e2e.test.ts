/**
 * The README's first command, as a user story: the local control plane is up with its fake GPU node group, the
 * operator's API is installed, the EKS guide's ClusterRuntime is applied with kubectl, and `kubectl get
 * clusterruntime` tells the story in its columns. Everything runs against the real binaries the harness started.
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { repoRoot } from "@aicr/testing/harness"
import { afterAll, describe, expect, inject, it } from "vitest"

const info = inject("harness")
const run = promisify(execFile)
const sample = join(repoRoot(), "e2e", "samples", "clusterruntime-eks.yaml")

const kubectl = async (args: string[], opts: { input?: string } = {}) => {
  const child = run(info.bin.kubectl!, args, { env: { ...process.env, KUBECONFIG: info.kubeconfig } })
  if (opts.input !== undefined) {
    child.child.stdin?.end(opts.input)
  }
  return child
}

/** kubectl's table output as rows of column → value. */
const table = (out: string): Array<Record<string, string>> => {
  const [header, ...rows] = out.trimEnd().split("\n")
  const starts = [...header!.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index! }))
  return rows.map((row) => Object.fromEntries(starts.map((c, i) => [c.name, row.slice(c.at, starts[i + 1]?.at ?? row.length).trim()])))
}

describe("the local control plane of the README", () => {
  afterAll(async () => {
    await kubectl(["delete", "clusterruntime", "cluster", "--ignore-not-found", "--wait=false"])
  })

  it("has the system and H100 node groups Ready, labelled like an EKS cluster", async () => {
    const { stdout } = await kubectl(["get", "nodes", "-L", "eks.amazonaws.com/nodegroup,node.kubernetes.io/instance-type"])
    const nodes = table(stdout)
    expect(nodes.filter((n) => n.NODEGROUP === "system" && n["INSTANCE-TYPE"] === "m5.2xlarge")).toHaveLength(2)
    expect(nodes.filter((n) => n.NODEGROUP === "gpu" && n["INSTANCE-TYPE"] === "p5.48xlarge")).toHaveLength(4)
    expect(nodes.every((n) => n.STATUS === "Ready")).toBe(true)
  })

  it("runs Argo CD beside it, its Applications listed by kubectl in the argocd namespace", async () => {
    const argocd = inject("argocd")
    expect(argocd?.namespace).toBe("argocd")
    const health = await fetch(`${argocd!.metrics.controller}/healthz`)
    expect(await health.text()).toBe("ok\n")
    const { stdout } = await kubectl(["-n", "argocd", "get", "applications,appprojects", "-o", "name"])
    expect(stdout.trim()).toBe("appproject.argoproj.io/default")
  })

  it("serves the operator's API under its short names and category", async () => {
    const { stdout } = await kubectl(["api-resources", "--api-group=operator.aicr.run", "-o", "wide"])
    const resources = table(stdout)
    expect(resources.map((r) => [r.NAME, r.SHORTNAMES, r.NAMESPACED, r.KIND])).toEqual([
      ["clusterruntimes", "aicrrt", "false", "ClusterRuntime"],
      ["runtimerollouts", "aicrro", "false", "RuntimeRollout"],
    ])
  })

  it("accepts the EKS guide's ClusterRuntime and shows it in kubectl get -o wide", async () => {
    const applied = await kubectl(["apply", "-f", sample])
    expect(applied.stdout).toMatch(/clusterruntime\.operator\.aicr\.run\/cluster (created|configured|unchanged)/)

    const { stdout } = await kubectl(["get", "clusterruntime", "-o", "wide"])
    const [row, ...others] = table(stdout)
    expect(others).toHaveLength(0)
    expect(Object.keys(row!)).toEqual(["NAME", "READY", "REASON", "STEP", "STALLED", "ROLLOUT", "ACTIVE PLAN", "AGE"])
    expect(row!.NAME).toBe("cluster")

    const short = await kubectl(["get", "aicrrt", "cluster", "-o", "jsonpath={.spec.intent}/{.spec.platform}/{.spec.criteria.accelerator}"])
    expect(short.stdout).toBe("training/kubeflow/h100")
  })

  it("refuses a second runtime with a message that says why", async () => {
    const other = `apiVersion: operator.aicr.run/v1alpha1\nkind: ClusterRuntime\nmetadata: {name: staging}\nspec: {intent: training}\n`
    const refused = await kubectl(["apply", "-f", "-"], { input: other }).then(
      () => undefined,
      (e: { stderr: string }) => e.stderr,
    )
    expect(refused).toContain("ClusterRuntime is a singleton: metadata.name must be 'cluster'")
  })
})
