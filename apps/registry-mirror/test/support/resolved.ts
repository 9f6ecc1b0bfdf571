import { contentConfigMapName } from "@aicr/api"
import { expectOk, type HarnessInfo, kubeRequest } from "@aicr/testing/harness"

const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"

/** What the resolver writes for the runtime's current generation: Resolved=True and the resolution of `inputDigest`. */
export const resolveAsResolver = async (info: HarnessInfo, inputDigest: string): Promise<void> => {
  const generation = (expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as { metadata: { generation: number } }).metadata
    .generation
  const body = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "ClusterRuntime",
    metadata: { name: "cluster" },
    status: {
      conditions: [
        { type: "Resolved", status: "True", observedGeneration: generation, lastTransitionTime: "2026-12-02T10:00:00Z", reason: "InputsResolved", message: "" },
      ],
      resolution: { inputDigest, contentConfigMap: contentConfigMapName(inputDigest), releases: 14 },
    },
  }
  expectOk(
    await kubeRequest(info, {
      method: "PATCH",
      path: `${RUNTIME}/status?fieldManager=aicr-resolver&force=true`,
      body,
      contentType: "application/apply-patch+yaml",
    }),
    "resolve",
  )
}
