import type { StaticUser } from "./auth"

/** Everything a test needs to reach the local control plane. Plain data: it travels through vitest's provide/inject. */
export interface HarnessInfo {
  /** State directory of this harness instance. */
  readonly dir: string
  /** Admin kubeconfig: one file, contexts admin + one per static user, current-context admin. */
  readonly kubeconfig: string
  /** https://127.0.0.1:PORT */
  readonly server: string
  /** CA bundle that verifies the apiserver's serving certificate. */
  readonly caFile: string
  /** Static-token users by key: admin (system:masters), alice, bob, carol, approver (aicr-approvers), tenant (tenants). */
  readonly users: Record<string, StaticUser>
  /** http://127.0.0.1:PORT */
  readonly etcd: string
  /** host:port of a plain-HTTP, no-auth OCI registry. */
  readonly registry: string
  /** kube-apiserver JSON-lines audit log (Metadata level for writes, nothing for reads). */
  readonly auditLog: string
  /** Tool name → absolute path. */
  readonly bin: Record<string, string>
  readonly pids: Record<string, number>
  /** Component versions, e.g. { k8s: "v1.35.4", etcd: "v3.6.16", kwok: "v0.8.0", helm: "v4.2.4" }. */
  readonly versions: Record<string, string>
  /** Component name → log file. */
  readonly logs: Record<string, string>
  /** ISO time the plane became ready. */
  readonly startedAt: string
}

/** What kubeRequest needs: a full HarnessInfo or just one apiserver's coordinates. */
export type KubeTarget = Pick<HarnessInfo, "server" | "caFile" | "users">
