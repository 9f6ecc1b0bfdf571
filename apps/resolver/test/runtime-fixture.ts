// The ClusterRuntime as the resolver's int tests read and edit it on the plane: a spec for one accelerated node group,
// the runtime read back, a condition only when current (written for the runtime's generation), the spec replaced.
import { expectOk, type HarnessInfo, kubeRequest } from "@aicr/testing/harness"
import { RUNTIME } from "@aicr/testing/world"

export interface Cond {
  type: string
  status: string
  reason: string
  message: string
  observedGeneration?: number
}
export interface Runtime {
  metadata: { generation: number }
  status?: { conditions?: Cond[]; resolution?: { contentConfigMap?: string } }
}

/** The reference criteria, the system group and `group` as the accelerated one (tainted as EKS GPU groups are). */
export const specFor = (group: string) => ({
  intent: "training",
  platform: "kubeflow",
  criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
  placement: {
    system: { nodeSelector: { "eks.amazonaws.com/nodegroup": "system" } },
    accelerated: { nodeSelector: { "eks.amazonaws.com/nodegroup": group }, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] },
  },
})

/** `R`: the runtime as a test reads it (the fields it checks beyond these). */
export const runtimeFixture = <R extends Runtime = Runtime>(info: HarnessInfo) => {
  const getRuntime = async () => expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as R
  const current = (r: R, type: string) => {
    const c = r.status?.conditions?.find((x) => x.type === type)
    return c?.observedGeneration === r.metadata.generation ? c : undefined
  }
  const setSpec = async (spec: unknown) =>
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: RUNTIME,
        body: [{ op: "replace", path: "/spec", value: spec }],
        contentType: "application/json-patch+json",
      }),
      "replace spec",
    )
  return { getRuntime, current, setSpec }
}
