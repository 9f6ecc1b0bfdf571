// kwok's stage set for the local control plane: the "fast" node and pod stages kwok ships (kustomize/stage/fast),
// with two changes:
// - the pod stages (ready, complete, delete) skip every pod that has a container whose image the process kubelet
//   claims, so such a pod is only ever Running, Succeeded or Failed because its process really ran;
// - the ready stage skips a pod labelled HOLD_LABEL: it stays Pending, not ready, until the label is removed from it
//   (`kubectl label pod NAME aicr-e2e-hold-`), when kwok sees the update and readies it. This holds a real upstream
//   chart's workload (whose image nothing here runs) in flight through a chart value it already has (`podLabels`);
//   the acceptance stories use it to revoke a rollout during a step.
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseAllDocuments, stringify } from "yaml"
import { claimedImagePattern } from "./images"

/** The stage files of kwok's "fast" set, relative to its kustomize/stage directory. */
const FAST = [
  "node/fast/node-initialize.yaml",
  "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
  "pod/fast/pod-ready.yaml",
  "pod/fast/pod-complete.yaml",
  "pod/fast/pod-delete.yaml",
]

/** A kwok selector expression (gojq) true for a pod with at least one claimed image. */
export const claimedExpression = (pattern: string = claimedImagePattern()): { key: string; operator: "NotIn"; values: string[] } => ({
  key: `[.spec.containers.[].image | test(${JSON.stringify(pattern)})] | any`,
  operator: "NotIn",
  values: ["true"],
})

/** The pod label that keeps kwok from readying a pod (a name with no dot or slash: a chart value path can carry it). */
export const HOLD_LABEL = "aicr-e2e-hold"
/** A kwok selector expression true for a pod without HOLD_LABEL. */
const notHeldExpression = { key: `.metadata.labels.[${JSON.stringify(HOLD_LABEL)}]`, operator: "DoesNotExist" as const }

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- kwok Stage documents
export const patchStages = (docs: any[], pattern?: string): any[] =>
  docs.map((d) => {
    if (d?.kind !== "Stage" || d.spec?.resourceRef?.kind !== "Pod") return d
    const exprs = d.spec.selector?.matchExpressions ?? []
    const added = d.metadata?.name === "pod-ready" ? [claimedExpression(pattern), notHeldExpression] : [claimedExpression(pattern)]
    return { ...d, spec: { ...d.spec, selector: { ...d.spec.selector, matchExpressions: [...exprs, ...added] } } }
  })

/** Writes the stage set into file (one multi-document YAML) from kwok's stage directory; returns file. */
export const writeStages = (kwokStageRoot: string, file: string, extra: readonly unknown[] = []): string => {
  const docs = FAST.flatMap((rel) => parseAllDocuments(readFileSync(join(kwokStageRoot, rel), "utf8")).map((d) => d.toJS()))
  writeFileSync(file, [...patchStages(docs), ...extra].map((d) => stringify(d)).join("---\n"))
  return file
}
