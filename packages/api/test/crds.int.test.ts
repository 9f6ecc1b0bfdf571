/**
 * The generated CRDs against a real kube-apiserver (the harness applies crds/*.yaml before the run): valid
 * samples are accepted, invalid objects and edits are refused with a clear message, status is a subresource that
 * several field managers share through `listType=map` conditions, and `kubectl get` columns are served.
 */
import { kubeRequest, type KubeResponse } from "@aicr/testing/harness"
import { afterEach, describe, expect, inject, it } from "vitest"
import { allowedEdits, approval, refusedCreates, refusedEdits, rollout, runtime } from "./crd-cases"

const info = inject("harness")
const BASE = "/apis/operator.aicr.run/v1alpha1"
type Plural = "clusterruntimes" | "runtimerollouts"
const path = (plural: Plural, name?: string, sub?: string) => [BASE, plural, name, sub].filter(Boolean).join("/")

const created: Array<[Plural, string]> = []
const create = async (plural: Plural, body: unknown): Promise<KubeResponse> => {
  const res = await kubeRequest(info, { method: "POST", path: path(plural), body })
  if (res.status === 201) created.push([plural, res.body.metadata.name])
  return res
}
const mustCreate = async (plural: Plural, body: unknown) => {
  const res = await create(plural, body)
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body
}
const get = async (plural: Plural, name: string) => (await kubeRequest(info, { method: "GET", path: path(plural, name) })).body
const applyStatus = (plural: Plural, name: string, manager: string, status: unknown) =>
  kubeRequest(info, {
    method: "PATCH",
    path: `${path(plural, name, "status")}?fieldManager=${manager}`,
    contentType: "application/apply-patch+yaml",
    body: { apiVersion: "operator.aicr.run/v1alpha1", kind: plural === "clusterruntimes" ? "ClusterRuntime" : "RuntimeRollout", metadata: { name }, status },
  })

afterEach(async () => {
  for (const [plural, name] of created.splice(0)) await kubeRequest(info, { method: "DELETE", path: path(plural, name) })
})

const message = (res: KubeResponse): string => (typeof res.body === "object" ? String(res.body?.message) : String(res.body))
const cond = (type: string, status: string, reason: string, observedGeneration = 1) => ({
  type,
  status,
  reason,
  observedGeneration,
  message: `${type} is ${status}`,
  lastTransitionTime: "2026-12-02T10:00:00Z",
})

describe("valid objects are accepted", () => {
  it("accepts the EKS sample and defaults spec.validation.deployment to Required", async () => {
    const obj = await mustCreate("clusterruntimes", runtime())
    expect(obj.spec).toMatchObject({
      intent: "training",
      platform: "kubeflow",
      criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
      validation: { deployment: "Required" },
    })
    expect(obj.spec.placement.accelerated.tolerations).toEqual([{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }])
  })

  it("accepts every optional field at its bounds", async () => {
    const spec = {
      validation: { deployment: "Disabled" },
      paused: true,
      suspendEngine: true,
      pin: { desiredStateDigest: `sha256:${"a".repeat(64)}` },
      adoption: { fromRuntimeUID: "0b6f3d0e-7c1a-4d59-9a43-5c1f1f6a2e10" },
      overrides: [
        { path: "gpuoperator:driver.version", value: "580.105.08" },
        { path: "kaischeduler:global.x", value: "é".repeat(2048) },
      ],
      placement: {
        accelerated: {
          nodeSelector: { "eks.amazonaws.com/nodegroup": "gpu" },
          tolerations: [{ key: "k", operator: "Equal", value: "v", effect: "NoExecute", tolerationSeconds: 30 }, { operator: "Exists" }],
        },
      },
    }
    expect((await mustCreate("clusterruntimes", runtime(spec))).spec.validation.deployment).toBe("Disabled")
  })

  it("accepts a first-install rollout and an approved upgrade with acknowledgements", async () => {
    await mustCreate("runtimerollouts", rollout({}, "ok-install"))
    const up = rollout(
      {
        kind: "Upgrade",
        fromDigest: `sha256:${"0".repeat(64)}`,
        approval: approval({ groups: ["aicr-approvers"] }),
        acknowledgements: [{ step: "gpu-operator", acknowledgedBy: "bob", at: "2026-12-02T11:00:00Z" }],
      },
      "ok-upgrade",
    )
    expect((await mustCreate("runtimerollouts", up)).spec.approval.approvedBy).toBe("bob")
  })
})

describe("invalid objects are refused at admission", () => {
  it.each(refusedCreates.map((c) => [c.name, c] as const))("refuses %s", async (_, c) => {
    const res = await create(c.plural, c.body)
    expect(res.status, message(res)).toBe(422)
    expect(message(res)).toMatch(c.want)
  })
})

describe("edits of durable decisions are refused", () => {
  it.each(refusedEdits.map((c, i) => [c.name, c, i] as const))("refuses %s", async (_, c, i) => {
    const name = `edit-refused-${i}`
    await mustCreate("runtimerollouts", { ...c.initial, metadata: { name } })
    const res = await kubeRequest(info, { method: "PATCH", path: path("runtimerollouts", name), body: c.patch })
    expect(res.status, message(res)).toBe(422)
    expect(message(res)).toMatch(c.want)
  })

  it.each(allowedEdits.map((c, i) => [c.name, c, i] as const))("allows %s", async (_, c, i) => {
    const name = `edit-allowed-${i}`
    await mustCreate("runtimerollouts", { ...c.initial, metadata: { name } })
    const res = await kubeRequest(info, { method: "PATCH", path: path("runtimerollouts", name), body: c.patch })
    expect(res.status, message(res)).toBe(200)
  })

  it("refuses a second ClusterRuntime beside cluster", async () => {
    await mustCreate("clusterruntimes", runtime())
    const res = await create("clusterruntimes", runtime({}, "cluster-2"))
    expect([res.status, message(res)]).toEqual([422, expect.stringMatching(/singleton/)])
  })
})

describe("status is a subresource shared by field managers", () => {
  it("ignores spec in a status write and status in a spec write", async () => {
    await mustCreate("runtimerollouts", rollout({}, "sub"))
    await kubeRequest(info, { method: "PATCH", path: path("runtimerollouts", "sub"), body: { status: { approval: { approvedBy: "x" } } } })
    const viaStatus = await kubeRequest(info, {
      method: "PATCH",
      path: path("runtimerollouts", "sub", "status"),
      body: { spec: { requestedBy: "x" }, status: { approval: { approvedBy: "approver" } } },
    })
    expect(viaStatus.status).toBe(200)
    const obj = await get("runtimerollouts", "sub")
    expect([obj.spec.requestedBy, obj.status.approval.approvedBy, obj.metadata.generation]).toEqual(["alice", "approver", 1])
  })

  it("merges conditions of two field managers by type, and omission deletes only the writer's own entries", async () => {
    await mustCreate("runtimerollouts", rollout({}, "ssa"))
    const guard = (conditions: unknown[]) => applyStatus("runtimerollouts", "ssa", "aicr-approval-guard", { conditions, approval: { approvedBy: "bob" } })
    expect((await guard([cond("Approved", "False", "AwaitingApproval")])).status).toBe(200)
    const exec = await applyStatus("runtimerollouts", "ssa", "aicr-step-executor", {
      conditions: [cond("Progressing", "False", "AwaitingApproval")],
      steps: { total: 18, done: 0 },
    })
    expect(exec.status, message(exec)).toBe(200)
    expect((await guard([cond("Approved", "True", "ApprovedByUser")])).status).toBe(200)
    let obj = await get("runtimerollouts", "ssa")
    expect(obj.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`).sort()).toEqual(["Approved=True", "Progressing=False"])
    expect(obj.status.steps).toEqual({ total: 18, done: 0 })

    expect((await guard([])).status).toBe(200)
    obj = await get("runtimerollouts", "ssa")
    expect(obj.status.conditions.map((c: { type: string }) => c.type)).toEqual(["Progressing"])
  })

  it("answers 409 Conflict when a manager writes another's condition with a different value", async () => {
    await mustCreate("runtimerollouts", rollout({}, "conflict"))
    await applyStatus("runtimerollouts", "conflict", "aicr-approval-guard", { conditions: [cond("Approved", "False", "AwaitingApproval")] })
    const res = await applyStatus("runtimerollouts", "conflict", "aicr-step-executor", { conditions: [cond("Approved", "True", "ApprovedByUser")] })
    expect(res.status).toBe(409)
    expect(message(res)).toMatch(/conflicts? with "aicr-approval-guard"/)
  })

  it("refuses a status write with an invalid condition", async () => {
    await mustCreate("runtimerollouts", rollout({}, "badcond"))
    const res = await applyStatus("runtimerollouts", "badcond", "aicr-approval-guard", { conditions: [{ ...cond("Approved", "Yes", "ok reason") }] })
    expect(res.status).toBe(422)
    expect(message(res)).toMatch(/status\.conditions\[0\]\.status: Unsupported value: "Yes"/)
  })
})

describe("kubectl get columns", () => {
  const table = (plural: Plural) =>
    kubeRequest(info, { method: "GET", path: path(plural), headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } })
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- meta.k8s.io/v1 Table
  const cells = (t: any) => Object.fromEntries(t.columnDefinitions.map((c: { name: string }, i: number) => [c.name, t.rows[0].cells[i]]))

  it("shows Ready, Reason, Step, Age, and Stalled, Rollout and Active Plan at priority 1 (-o wide), for ClusterRuntime", async () => {
    await mustCreate("clusterruntimes", runtime())
    const plans = { active: `sha256:${"a".repeat(64)}`, rollout: { name: "cluster-aaaaaaaaaaaa-1", step: "9/18 gpu-operator (Upgrade)" } }
    const res = await applyStatus("clusterruntimes", "cluster", "aicr-planner", { conditions: [cond("Ready", "False", "RollingOut")], plans })
    expect(res.status, message(res)).toBe(200)
    const t = (await table("clusterruntimes")).body
    expect(t.kind).toBe("Table")
    expect(t.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}${c.priority ? "*" : ""}`)).toEqual([
      "Name",
      "Ready",
      "Reason",
      "Step",
      "Stalled*",
      "Rollout*",
      "Active Plan*",
      "Age",
    ])
    expect(cells(t)).toMatchObject({ Name: "cluster", Ready: "False", Reason: "RollingOut", Step: "9/18 gpu-operator (Upgrade)", "Active Plan": plans.active })
  })

  it("shows Kind, Approved, Progressing, Step and Outcome for RuntimeRollout", async () => {
    await mustCreate("runtimerollouts", rollout({}, "cols"))
    await applyStatus("runtimerollouts", "cols", "aicr-approval-guard", { conditions: [cond("Approved", "True", "ApprovedByUser")] })
    await applyStatus("runtimerollouts", "cols", "aicr-step-executor", {
      conditions: [cond("Progressing", "True", "StepInProgress")],
      steps: { total: 18, done: 8, current: "9/18 gpu-operator (Upgrade)" },
    })
    await applyStatus("runtimerollouts", "cols", "aicr-planner", { conditions: [cond("Succeeded", "False", "InProgress")] })
    const t = (await table("runtimerollouts")).body
    expect(cells(t)).toMatchObject({
      Name: "cols",
      Kind: "Install",
      Approved: "True",
      Progressing: "True",
      Step: "9/18 gpu-operator (Upgrade)",
      Outcome: "InProgress",
    })
  })
})
