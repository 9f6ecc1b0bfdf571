// The status stand-in: for custom resources whose health Argo CD reads from a status that a controller pod writes,
// and whose controller kwok only pretends to run, it writes that status once, as the controller would after its
// work (docs/local-control-plane.md, "What kwok cannot run"). Argo CD's own health checks
// (resource_customizations/<group>/<kind>/health.lua) decide what counts:
// - monitoring.coreos.com Prometheus: condition Available=True (the Prometheus operator, once its StatefulSet runs);
// - cert-manager.io Certificate, Issuer, ClusterIssuer: condition Ready=True (cert-manager, once issued or checked).
// Nothing else is written, and an object that already has the condition is left alone.
import { toConditionTime } from "@aicr/conditions"
import { kubeRequest } from "../kube"
import type { KubeTarget } from "../types"

export interface StatusStandIn {
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly namespaced: boolean
  /** The condition the controller sets once its work is done. */
  readonly condition: string
  readonly reason: string
}

export const STATUS_STAND_INS: readonly StatusStandIn[] = [
  { group: "monitoring.coreos.com", version: "v1", plural: "prometheuses", namespaced: true, condition: "Available", reason: "StandIn" },
  { group: "cert-manager.io", version: "v1", plural: "certificates", namespaced: true, condition: "Ready", reason: "StandIn" },
  { group: "cert-manager.io", version: "v1", plural: "issuers", namespaced: true, condition: "Ready", reason: "StandIn" },
  { group: "cert-manager.io", version: "v1", plural: "clusterissuers", namespaced: false, condition: "Ready", reason: "StandIn" },
]

interface Obj {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly generation?: number }
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }> }
}

/** One pass: writes the missing condition on every object of every kind that exists on the cluster; returns what it wrote. */
export const standInStatuses = async (target: KubeTarget, user: string, manager: string): Promise<string[]> => {
  const wrote: string[] = []
  for (const s of STATUS_STAND_INS) {
    const list = await kubeRequest(target, { method: "GET", path: `/apis/${s.group}/${s.version}/${s.plural}`, user })
    if (list.status !== 200) continue // the CRD is not installed
    for (const o of (list.body as { items: Obj[] | null }).items ?? []) {
      if ((o.status?.conditions ?? []).some((c) => c.type === s.condition && c.status === "True")) continue
      const path = `/apis/${s.group}/${s.version}/${s.namespaced ? `namespaces/${o.metadata.namespace}/` : ""}${s.plural}/${o.metadata.name}/status?fieldManager=${manager}`
      const now = toConditionTime(Date.now())
      const condition = {
        type: s.condition,
        status: "True",
        reason: s.reason,
        message: "Written by the local control plane's status stand-in: no controller runs on kwok nodes",
        lastTransitionTime: now,
        ...(o.metadata.generation !== undefined ? { observedGeneration: o.metadata.generation } : {}),
      }
      const res = await kubeRequest(target, {
        method: "PATCH",
        path,
        user,
        body: { status: { conditions: [...(o.status?.conditions ?? []).filter((c) => c.type !== s.condition), condition] } },
      })
      if (res.status === 200) wrote.push(`${s.plural}.${s.group}/${o.metadata.namespace !== undefined ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`)
    }
  }
  return wrote
}
