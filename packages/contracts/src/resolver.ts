import { ClusterRuntimeKind, Core, Discovered, LABEL_ROLE, ROLE_AICR_JOB, ROLE_CONTENT, Resolved } from "@aicr/api"
import { Contract, Watch } from "./contract"

/** resolver: discovers node groups and runs AICR snapshot → recipe → bundle for the current inputs. */
export const resolver = Contract.make({
  controller: "resolver",
  fieldManager: "aicr-resolver",
  reconciles: ClusterRuntimeKind,
  watches: [
    Watch.self(ClusterRuntimeKind),
    Watch.mapped(Core.Node, "singleton", "node groups follow the placement selectors and node labels"),
    Watch.mapped(Core.Job, "singleton", "snapshot, recipe and bundle Jobs finish", `${LABEL_ROLE}=${ROLE_AICR_JOB}`),
    Watch.mapped(Core.ConfigMap, "singleton", "AICR Job outputs and the content it published", `${LABEL_ROLE} in (${ROLE_AICR_JOB},${ROLE_CONTENT})`),
  ],
  reads: { conditions: [], kinds: [Core.Node, Core.Job, Core.Pod, Core.ConfigMap] },
  writes: [{ kind: ClusterRuntimeKind, conditions: [Discovered, Resolved], statusKeys: ["discovery", "resolution"] }],
  creates: [
    { kind: Core.Job, why: "AICR snapshot, recipe and bundle runs" },
    { kind: Core.ConfigMap, why: "Job inputs, and the content ConfigMap (recipe.json, values.json, snapshot.json)" },
  ],
})
