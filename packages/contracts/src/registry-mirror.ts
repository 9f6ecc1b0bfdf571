import { ClusterRuntimeKind, Core, LABEL_ROLE, Mirrored, ROLE_CONTENT, Resolved } from "@aicr/api"
import { Contract, Watch } from "./contract"

/** registry-mirror: copies every chart, wrapper and the bundle of a resolution into the runtime registry. */
export const registryMirror = Contract.make({
  controller: "registry-mirror",
  fieldManager: "aicr-registry-mirror",
  reconciles: ClusterRuntimeKind,
  watches: [
    Watch.self(ClusterRuntimeKind),
    Watch.mapped(Core.ConfigMap, "singleton", "the content ConfigMap of the resolution to mirror", `${LABEL_ROLE}=${ROLE_CONTENT}`),
  ],
  // Registry credentials arrive as a mounted docker config file (a Secret volume), so no Secret is read through the API.
  reads: { conditions: [Resolved], kinds: [Core.ConfigMap] },
  writes: [{ kind: ClusterRuntimeKind, conditions: [Mirrored], statusKeys: ["mirror"] }],
  creates: [],
})
