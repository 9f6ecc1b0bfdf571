/**
 * Renders the condition catalog (type → owner → polarity → reasons with "surfaces when", and the component, int and
 * e2e test files that name each reason with its condition) as Markdown for `docs/api/conditions.md` (style.md
 * §B.4.4). Written by generate-crds.ts, golden-tested with the CRDs (crds.test.ts), so adding or removing a test that
 * names a reason means regenerating the page.
 */
import type { AnyConditionDef } from "@aicr/conditions"
import { ClusterRuntimeConditions } from "./clusterruntime-conditions"
import { RuntimeRolloutConditions } from "./runtimerollout-conditions"

const escape = (s: string): string => s.replaceAll("|", "\\|")

/** The test files naming a (condition type, reason) pair; see named-in-tests.ts. */
export type NamedIn = (type: string, reason: string) => ReadonlyArray<string>

const section = (kind: string, defs: ReadonlyArray<AnyConditionDef>, named: NamedIn): string[] => [
  `## ${kind}`,
  "",
  ...defs.flatMap((d) => [
    `### ${d.type}`,
    "",
    `Set by: \`${d.owner}\`. Polarity: ${d.polarity}. ${escape(d.doc)}.`,
    "",
    "| Status | Reason | Surfaces when | Named in tests |",
    "| --- | --- | --- | --- |",
    ...d.entries().map((e) => {
      const files = named(d.type, e.reason)
      return `| ${e.status} | \`${e.reason}\` | ${escape(e.doc)} | ${files.length === 0 ? "none" : files.map((f) => `\`${f}\``).join("<br>")} |`
    }),
    "",
  ]),
]

export const renderConditionCatalog = (named: NamedIn): string =>
  [
    "<!-- Generated from packages/api by `npx tsx packages/api/src/generate-crds.ts`. DO NOT EDIT. -->",
    "# Condition catalog (operator.aicr.run/v1alpha1)",
    "",
    "Every condition type, the one controller that writes it, and every reason it may carry. Readers treat a",
    "missing or stale condition as Unknown (`NotYetReported`, `Stale`), never as True.",
    "",
    '"Named in tests" lists the component, int and e2e test files that hold both the condition type and the reason as',
    "string literals, as an assertion on that condition does: an index of where to look, not a proof that each file",
    "reaches the reason. `Stalled` and `Ready` repeat reasons of the conditions they summarise; their tests mostly name",
    "the source condition. `packages/api/src/catalog.test.ts` fails when a documented reason is named by no test file,",
    "except the ones it lists as not reached yet.",
    "",
    ...section("ClusterRuntime", ClusterRuntimeConditions, named),
    ...section("RuntimeRollout", RuntimeRolloutConditions, named),
  ].join("\n")
