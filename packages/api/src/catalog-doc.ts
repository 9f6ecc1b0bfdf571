/**
 * Renders the condition catalog (type → owner → polarity → reasons with "surfaces when") as Markdown for
 * `docs/api/conditions.md` (style.md §B.4.4). Written by generate-crds.ts, golden-tested with the CRDs.
 */
import type { AnyConditionDef } from "@aicr/conditions"
import { ClusterRuntimeConditions } from "./clusterruntime-conditions"
import { RuntimeRolloutConditions } from "./runtimerollout-conditions"

const escape = (s: string): string => s.replaceAll("|", "\\|")

const section = (kind: string, defs: ReadonlyArray<AnyConditionDef>): string[] => [
  `## ${kind}`,
  "",
  ...defs.flatMap((d) => [
    `### ${d.type}`,
    "",
    `Owner: \`${d.owner}\`. Polarity: ${d.polarity}. ${escape(d.doc)}.`,
    "",
    "| Status | Reason | Surfaces when |",
    "| --- | --- | --- |",
    ...d.entries().map((e) => `| ${e.status} | \`${e.reason}\` | ${escape(e.doc)} |`),
    "",
  ]),
]

export const renderConditionCatalog = (): string =>
  [
    "<!-- Generated from packages/api by `npx tsx packages/api/src/generate-crds.ts`. DO NOT EDIT. -->",
    "# Condition catalog (operator.aicr.run/v1alpha1)",
    "",
    "Every condition type, the one controller that writes it, and every reason it may carry. Readers treat a",
    "missing or stale condition as Unknown (`NotYetReported`, `Stale`), never as True.",
    "",
    ...section("ClusterRuntime", ClusterRuntimeConditions),
    ...section("RuntimeRollout", RuntimeRolloutConditions),
  ].join("\n")
