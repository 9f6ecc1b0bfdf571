/**
 * Renders the condition catalog (type → owner → polarity → reasons with "surfaces when", and the int and e2e tests
 * that assert each reason on the real control plane) as Markdown for `docs/api/conditions.md` (style.md §B.4.4).
 * Written by generate-crds.ts, golden-tested with the CRDs (crds.test.ts), so adding, removing or renaming a test
 * that asserts a reason means regenerating the page.
 */
import type { AnyConditionDef } from "@aicr/conditions"
import { ClusterRuntimeConditions } from "./clusterruntime-conditions"
import { RuntimeRolloutConditions } from "./runtimerollout-conditions"

const escape = (s: string): string => s.replaceAll("|", "\\|")

/** The tests asserting a (condition type, status, reason); see asserted-in-tests.ts. */
export type AssertedIn = (type: string, status: string, reason: string) => ReadonlyArray<{ readonly path: string; readonly test: string | undefined }>

const cell = (tests: ReturnType<AssertedIn>): string =>
  tests.length === 0 ? "none" : tests.map((t) => `\`${t.path}\`${t.test === undefined ? "" : ` › ${escape(t.test)}`}`).join("<br>")

const section = (kind: string, defs: ReadonlyArray<AnyConditionDef>, asserted: AssertedIn): string[] => [
  `## ${kind}`,
  "",
  ...defs.flatMap((d) => [
    `### ${d.type}`,
    "",
    `Set by: \`${d.owner}\`. Polarity: ${d.polarity}. ${escape(d.doc)}.`,
    "",
    "| Status | Reason | Surfaces when | Asserted by (int, e2e) |",
    "| --- | --- | --- | --- |",
    ...d.entries().map((e) => `| ${e.status} | \`${e.reason}\` | ${escape(e.doc)} | ${cell(asserted(d.type, e.status, e.reason))} |`),
    "",
  ]),
]

export const renderConditionCatalog = (asserted: AssertedIn): string =>
  [
    "<!-- Generated from packages/api by `npx tsx packages/api/src/generate-crds.ts`. DO NOT EDIT. -->",
    "# Condition catalog (operator.aicr.run/v1alpha1)",
    "",
    "Every condition type, the one controller that writes it, and every reason it may carry. Readers treat a",
    "missing or stale condition as Unknown (`NotYetReported`, `Stale`), never as True.",
    "",
    '"Asserted by" names the int and e2e tests (file › test) that reach the reason on the real control plane and assert',
    "it with `expectCondition` or `untilCondition` (`@aicr/testing/harness`), the condition type, status and reason",
    "written as literals; `packages/api/src/asserted-in-tests.ts` finds those calls in the tests' syntax trees.",
    "`packages/api/src/catalog.test.ts` fails when a documented reason (operator.md §3.2) is asserted by no int or e2e",
    "test, except the ones it lists, each with why, as not reached on the real control plane yet.",
    "",
    ...section("ClusterRuntime", ClusterRuntimeConditions, asserted),
    ...section("RuntimeRollout", RuntimeRolloutConditions, asserted),
  ].join("\n")
