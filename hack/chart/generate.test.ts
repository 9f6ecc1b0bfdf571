/**
 * The chart's generated parts are up to date with the code they come from (golden), and the RBAC rendered from the
 * contracts keeps to the privilege boundaries of operator.md §5.2.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { CONTRACTS } from "@aicr/contracts"
import { describe, expect, it } from "vitest"
import { CHART_DIR, renderChartFiles } from "../generate-chart"
import { kindKey } from "@aicr/api"
import { ALL_RBAC, grantsOf, PLACEMENT, rbacOf } from "./rbac"
import { valueRows } from "./values-doc"

const rulesOf = (r: (typeof ALL_RBAC)[number]) => [
  ...r.clusterRules.map((x) => ({ ...x, where: "cluster" })),
  ...r.namespaced.flatMap((n) => n.rules.map((x) => ({ ...x, where: n.namespace }))),
]

describe("the chart's generated files", () => {
  it.each(renderChartFiles().map((f) => [f.path, f.content] as const))(
    "%s is what hack/generate-chart.ts writes (run it after changing the code it comes from)",
    (path, content) => {
      expect(readFileSync(join(CHART_DIR, path), "utf8")).toBe(content)
    },
  )

  it("the README lists every value of values.yaml with its default", () => {
    const readme = readFileSync(join(CHART_DIR, "README.md"), "utf8")
    const rows = valueRows(readFileSync(join(CHART_DIR, "values.yaml"), "utf8"))
    expect(rows.map((r) => r.key)).toEqual(
      expect.arrayContaining([
        "registry.repository",
        "registry.auth.provider",
        "operator.image",
        "namespaces.components",
        "validation.signingKey",
        "controllers.planner.replicas",
      ]),
    )
    for (const r of rows) expect(readme, r.key).toContain(`| \`${r.key}\` | ${r.type} | \`${r.default.replaceAll("|", "\\|")}\` |`)
  })

  it("refuses a values.yaml key without a description", () => {
    expect(() => valueRows("a:\n  # -- documented\n  b: 1\n  c: 2\n")).toThrow(/a\.c/u)
  })
})

describe("RBAC rendered from the contracts", () => {
  it.each(CONTRACTS.map((c) => [c.controller, c] as const))("%s may write its status rooms and read what it watches", (_, c) => {
    const grants = grantsOf(c)
    for (const w of c.writes) {
      expect(
        grants.some((g) => g.group === w.kind.group && g.resource === `${w.kind.plural}/status` && g.verbs.includes("patch")),
        `${w.kind.plural}/status`,
      ).toBe(true)
    }
    for (const w of c.watches) {
      expect(
        grants.some((g) => g.group === w.kind.group && g.resource === w.kind.plural && ["get", "list", "watch"].every((v) => g.verbs.includes(v))),
        w.kind.plural,
      ).toBe(true)
    }
    for (const cr of c.creates) {
      const mayCreate = grants.some((g) => g.group === cr.kind.group && g.resource === cr.kind.plural && g.verbs.includes("create"))
      // An object addressed by name only is created by the chart (the repo-creds Secret) or by a process need.
      const byName = grants.some(
        (g) => g.group === cr.kind.group && g.resource === cr.kind.plural && g.resourceNames !== undefined && g.verbs.includes("patch"),
      )
      expect(mayCreate || byName, cr.kind.plural).toBe(true)
    }
  })

  it.each(CONTRACTS.map((c) => [c.controller, c] as const))("%s: every placement names a kind its contract watches, reads, writes or creates", (_, c) => {
    const named = new Set([...c.watches, ...c.writes, ...c.creates].map((x) => kindKey(x.kind)).concat(c.reads.kinds.map(kindKey)))
    expect(Object.keys(PLACEMENT[c.controller]).filter((k) => !named.has(k))).toEqual([])
  })

  it.each(ALL_RBAC.map((r) => [r.controller, r] as const))(
    "%s holds no wildcard, no escalation verb, no exec, no Namespace write and reads Secrets only by name",
    (_, r) => {
      for (const rule of rulesOf(r)) {
        const what = `${rule.where}: ${rule.apiGroups.join(",")}/${rule.resources.join(",")} ${rule.verbs.join(",")}`
        expect(rule.verbs, what).not.toContain("*")
        expect(rule.resources, what).not.toContain("*")
        expect(
          rule.verbs.filter((v) => ["escalate", "bind", "impersonate"].includes(v)),
          what,
        ).toEqual([])
        expect(
          rule.resources.filter((x) => x === "pods/exec"),
          what,
        ).toEqual([])
        // Namespaces are read only (the step executor waits for a release namespace; the chart creates them).
        if (rule.resources.includes("namespaces"))
          expect(
            rule.verbs.filter((v) => !["get", "list", "watch"].includes(v)),
            what,
          ).toEqual([])
        if (rule.apiGroups[0] === "" && rule.resources.includes("secrets") && rule.verbs.some((v) => ["get", "list", "watch"].includes(v))) {
          expect(rule.resourceNames, `${what}: Secrets are read by name only`).toBeDefined()
        }
      }
    },
  )

  it("runs the controller that needs AWS as aicr-operator, the seed's Pod Identity and IRSA subject, and every other as its own account", () => {
    expect(ALL_RBAC.map((r) => [r.controller, r.serviceAccount])).toEqual(
      CONTRACTS.map((c) => [c.controller, c.controller === "ecr-credential-refresher" ? "aicr-operator" : `aicr-${c.controller}`]),
    )
  })

  it("gives no controller but the planner write access to rollouts, and none write access to a ClusterRuntime's spec", () => {
    for (const c of CONTRACTS) {
      const writes = grantsOf(c).filter((g) => g.group === "operator.aicr.run" && g.verbs.some((v) => ["create", "update", "patch", "delete"].includes(v)))
      const plain = writes.filter((g) => !g.resource.endsWith("/status"))
      const allowed = c.controller === "planner" ? ["clusterruntimes", "runtimerollouts"] : []
      expect([...new Set(plain.map((g) => g.resource))].sort(), c.controller).toEqual(allowed)
    }
    // The planner's ClusterRuntime access is for its cleanup finalizer; the admission policy holds it to that.
    expect(
      rbacOf(CONTRACTS.find((c) => c.controller === "planner")!).clusterRules.some((r) => r.resources.includes("clusterruntimes") && r.verbs.includes("patch")),
    ).toBe(true)
  })
})
