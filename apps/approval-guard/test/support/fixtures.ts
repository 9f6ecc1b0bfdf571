// RuntimeRollout objects in the states the approval-guard reacts to, for unit and component tests.
import type { RuntimeRollout } from "@aicr/api"

export const T0 = Date.parse("2026-12-02T10:00:00Z")
export const TO = `sha256:${"3f2a9c1d0e4b".padEnd(64, "5")}`
export const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString().replace(/\.\d{3}Z$/u, "Z")

type Spec = RuntimeRollout["spec"]
type Status = NonNullable<RuntimeRollout["status"]>

export interface RolloutState {
  readonly spec?: Partial<Spec>
  readonly status?: Status
  readonly labels?: Record<string, string>
  readonly generation?: number
}

/** A rollout created at T0 by the planner, deadline T0+60m, requested by alice, unapproved unless given. */
export const aRollout = (s: RolloutState = {}): RuntimeRollout => ({
  apiVersion: "operator.aicr.run/v1alpha1",
  kind: "RuntimeRollout",
  metadata: { name: "cluster-3f2a9c1d0e4b-1", uid: "r-uid", generation: s.generation ?? 1, resourceVersion: "7", ...(s.labels ? { labels: s.labels } : {}) },
  spec: {
    runtimeUID: "0b6f3d0e-7c1a-4d59-9a43-5c1f1f6a2e10",
    kind: "Upgrade",
    fromDigest: `sha256:${"1".repeat(64)}`,
    toDigest: TO,
    deadline: at(60),
    requiresApproval: true,
    requestedBy: "alice",
    ...s.spec,
  },
  ...(s.status ? { status: s.status } : {}),
})

export const anApproval = (o: Partial<NonNullable<Spec["approval"]>> = {}): NonNullable<Spec["approval"]> => ({
  approvedBy: "approver",
  groups: ["aicr-approvers", "system:authenticated"],
  reason: "Maintenance window",
  approvedAt: at(1),
  expiresAt: at(31),
  toDigest: TO,
  ...o,
})

export const awaitingAck = (release: string, index = 1) => ({
  index,
  release,
  namespace: release,
  action: "Upgrade" as const,
  verdict: "manual" as const,
  state: "AwaitingAcknowledgement" as const,
})
