// kwok's stage set for the local control plane: the "fast" node and pod stages kwok ships (kustomize/stage/fast),
// with one change: the pod stages (ready, complete, delete) skip every pod that has a container whose image the
// process kubelet claims, so such a pod is only ever Running, Succeeded or Failed because its process really ran.
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- kwok Stage documents
export const patchStages = (docs: any[], pattern?: string): any[] =>
  docs.map((d) => {
    if (d?.kind !== "Stage" || d.spec?.resourceRef?.kind !== "Pod") return d
    const exprs = d.spec.selector?.matchExpressions ?? []
    return { ...d, spec: { ...d.spec, selector: { ...d.spec.selector, matchExpressions: [...exprs, claimedExpression(pattern)] } } }
  })

/** Writes the stage set into file (one multi-document YAML) from kwok's stage directory; returns file. */
export const writeStages = (kwokStageRoot: string, file: string, extra: readonly unknown[] = []): string => {
  const docs = FAST.flatMap((rel) => parseAllDocuments(readFileSync(join(kwokStageRoot, rel), "utf8")).map((d) => d.toJS()))
  writeFileSync(file, [...patchStages(docs), ...extra].map((d) => stringify(d)).join("---\n"))
  return file
}
