import { LABEL_OUTCOME } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { aRollout } from "../test/support/fixtures"
import { approversOf, type Binding, bindingChangesApprovers, openRollouts } from "./access"

const ROLE = "aicr-operator-approver"
const binding = (name: string, role: string, kind = "ClusterRole"): Binding => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { kind, name: role },
  subjects: [{ kind: "Group", name: "aicr-approvers" }],
})

describe("who may approve, as bindings change", () => {
  it("re-decides on a binding to the approver ClusterRole appearing, changing or going, and on nothing else", () => {
    const ours = binding("approvers", ROLE)
    const other = binding("viewers", "aicr-operator-viewer")
    expect([
      bindingChangesApprovers({ type: "add", object: ours }, ROLE),
      bindingChangesApprovers({ type: "delete", object: ours }, ROLE),
      bindingChangesApprovers({ type: "update", object: ours, old: ours }, ROLE),
      bindingChangesApprovers({ type: "update", object: other, old: ours }, ROLE),
      bindingChangesApprovers({ type: "add", object: other }, ROLE),
      bindingChangesApprovers({ type: "add", object: binding("ns-role", ROLE, "Role") }, ROLE),
    ]).toEqual([true, true, true, true, false, false])
  })

  it("maps such an event to every rollout still open (no outcome label)", () => {
    const open = aRollout()
    const closed = { ...aRollout(), metadata: { ...aRollout().metadata, name: "cluster-3f2a9c1d0e4b-0", labels: { [LABEL_OUTCOME]: "Expired" } } }
    expect(openRollouts([closed, open])).toEqual([open.metadata.name])
  })

  it("lists the subjects of the approver bindings only", () => {
    expect(approversOf([binding("approvers", ROLE), binding("viewers", "aicr-operator-viewer")], ROLE)).toEqual({ users: [], groups: ["aicr-approvers"], serviceAccounts: [] })
  })
})
