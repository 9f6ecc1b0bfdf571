import { describe, expect, it } from "vitest"
import { approversOf, type Binding, bindingChangesApprovers } from "./access"

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

  it("lists the subjects of the approver bindings only", () => {
    expect(approversOf([binding("approvers", ROLE), binding("viewers", "aicr-operator-viewer")], ROLE)).toEqual({
      users: [],
      groups: ["aicr-approvers"],
      serviceAccounts: [],
    })
  })
})
