import { readFileSync } from "node:fs"
import { parseAllDocuments } from "yaml"
import { describe, expect, it } from "vitest"
import {
  APPROVER_ROLE,
  DEFAULT_POLICY_OPTIONS,
  EDITOR_STAMP_VERSIONS,
  editorStampFile,
  editorStampObjects,
  operatorIdentityCel,
  policyObjects,
  renderPolicies,
  roles,
  runtimeEditsPolicy,
} from "./policies"

const DIR = new URL("../../../policies/", import.meta.url)
const REGENERATE = "policies/ is out of date with packages/api: run `npx tsx packages/api/src/generate-crds.ts` (or `npm run crds`) and commit the result"

describe("generated admission policies and roles (golden)", () => {
  it.each(renderPolicies().map((c) => [c.file, c.yaml] as const))("policies/%s matches the generator", (file, yaml) => {
    let onDisk = ""
    try {
      onDisk = readFileSync(new URL(file, DIR), "utf8")
    } catch {
      expect.fail(`policies/${file} is missing. ${REGENERATE}`)
    }
    expect(onDisk === yaml, REGENERATE).toBe(true)
  })

  it("parses back into the objects it was rendered from", () => {
    const docs = renderPolicies().flatMap((f) => parseAllDocuments(f.yaml).map((d) => d.toJS() as { kind: string; metadata: { name: string } }))
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      ...policyObjects().map((o) => `${o.kind}/${o.metadata.name}`),
      ...roles(DEFAULT_POLICY_OPTIONS).map((o) => `${o.kind}/${o.metadata.name}`),
      ...EDITOR_STAMP_VERSIONS.flatMap((v) => editorStampObjects(v).map((o) => `${o.kind}/${o.metadata.name}`)),
    ])
  })
})

describe("policy shape", () => {
  it("binds every policy with Deny, and the creation policy to the cluster runtime as parameter", () => {
    const bindings = policyObjects().filter((o) => o.kind === "ValidatingAdmissionPolicyBinding") as Array<{
      spec: { validationActions: string[]; paramRef?: { name: string } }
    }>
    expect(bindings).toHaveLength(3)
    expect(bindings.every((b) => b.spec.validationActions.join() === "Deny")).toBe(true)
    expect(bindings.map((b) => b.spec.paramRef?.name).filter(Boolean)).toEqual(["cluster"])
  })

  it("treats every ServiceAccount of the operator and validation namespaces as an operator identity", () => {
    const cel = operatorIdentityCel(DEFAULT_POLICY_OPTIONS)
    expect(cel).toContain("['aicr-system', 'aicr-validation']")
    expect(cel).toContain("'system:serviceaccount:' + ns + ':'")
    expect(cel).toContain("'system:serviceaccounts:' + ns")
  })

  it("grants the custom verbs only through the approver role, and aggregates into no built-in role", () => {
    const rs = roles(DEFAULT_POLICY_OPTIONS) as Array<{ metadata: { name: string; labels: Record<string, string> }; rules: Array<{ verbs: string[] }> }>
    const withVerbs = rs.filter((r) => r.rules.some((x) => x.verbs.includes("approve")))
    expect(withVerbs.map((r) => r.metadata.name)).toEqual([APPROVER_ROLE])
    expect(rs.flatMap((r) => Object.keys(r.metadata.labels)).filter((k) => k.includes("aggregate-to"))).toEqual([])
  })
})

describe("editor stamp (MutatingAdmissionPolicy)", () => {
  it("is rendered once per API version that serves it, each file holding the policy and its binding", () => {
    expect(EDITOR_STAMP_VERSIONS.map(editorStampFile)).toEqual(["editor-stamp/v1beta1.yaml", "editor-stamp/v1.yaml"])
    for (const v of EDITOR_STAMP_VERSIONS) {
      expect(editorStampObjects(v).map((o) => `${o.apiVersion} ${o.kind}`)).toEqual([
        `admissionregistration.k8s.io/${v} MutatingAdmissionPolicy`,
        `admissionregistration.k8s.io/${v} MutatingAdmissionPolicyBinding`,
      ])
    }
  })

  it("sets only the editor annotation, to the API server's name, and skips the operator's identities", () => {
    const [policy] = editorStampObjects("v1beta1")
    const spec = (policy as { spec: { matchConditions: Array<{ expression: string }>; mutations: Array<{ applyConfiguration: { expression: string } }> } }).spec
    expect(spec.mutations.map((m) => m.applyConfiguration.expression)).toEqual([
      "Object{metadata: Object.metadata{annotations: {'operator.aicr.run/edited-by': request.userInfo.username}}}",
    ])
    expect(spec.matchConditions[0]!.expression).toBe(`!(${operatorIdentityCel(DEFAULT_POLICY_OPTIONS)})`)
  })

  it("leaves the validating rule in place, whose refusal names the stamp and the command to run", () => {
    const msg = (runtimeEditsPolicy(DEFAULT_POLICY_OPTIONS).spec as unknown as { validations: Array<{ messageExpression: string }> }).validations[0]!
      .messageExpression
    expect(msg).toContain("MutatingAdmissionPolicy aicr-runtime-editor-stamp is not installed")
    expect(msg).toContain(
      "kubectl annotate --local --overwrite -o yaml -f clusterruntime.yaml operator.aicr.run/edited-by=' + request.userInfo.username + ' | kubectl apply -f -",
    )
  })
})
