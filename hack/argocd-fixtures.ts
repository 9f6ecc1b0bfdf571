/**
 * Turns a recording of the step-executor int test (`<harness dir>/int/recordings/step-executor.jsonl`: every watch
 * event of the Applications and Deployments, written by `startRecorder` in apps/step-executor/test/support/world.ts)
 * into the readiness-predicate fixture of packages/argocd (`src/fixtures/argocd-<version>-sequences.json`).
 *
 * Each Application event is trimmed to the fields the predicate reads and labelled with what really ran at that point:
 * `deployed` is true when the release's Deployment, as of the etcd revision of that event (resourceVersions of one
 * etcd are ordered), had rolled out the chart the Application targets in the namespace it targets: template at that
 * chart's version, observed, every replica updated and available, no old replica left. The target is the
 * Application's targetRevision (the chart's manifest digest, as the step-executor writes it); the chart version it
 * stands for comes from the Application's plan-release record (`operator.aicr.run/plan-release`, its chart ref).
 *
 * Run: `npx tsx hack/argocd-fixtures.ts <recording.jsonl> <out.json> <argocd version>`.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { LABEL_RELEASE } from "@aicr/api"
import { ANNOTATION_RELEASE_RECORD } from "@aicr/argocd"

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any
const [input, output, version] = process.argv.slice(2)
if (!input || !output || !version) throw new Error("usage: argocd-fixtures.ts <recording.jsonl> <out.json> <argocd version>")
const events: Any[] = readFileSync(input, "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l))
const rv = (e: Any) => Number(e.object.metadata.resourceVersion)
const sorted = [...events].filter((e) => e.type !== "DELETED").sort((a, b) => rv(a) - rv(b))

const rolledOut = (d: Any, target: string): boolean => {
  const want = d.spec.replicas ?? 1
  const s = d.status ?? {}
  return (
    d.spec.template.metadata.labels?.["chart-version"] === target &&
    s.observedGeneration === d.metadata.generation &&
    s.updatedReplicas === want &&
    s.availableReplicas === want &&
    s.replicas === want
  )
}

const trim = (a: Any) => ({
  metadata: {
    name: a.metadata.name,
    resourceVersion: a.metadata.resourceVersion,
    ...(a.metadata.deletionTimestamp ? { deletionTimestamp: a.metadata.deletionTimestamp } : {}),
  },
  spec: { source: a.spec.source, destination: a.spec.destination, ...(a.spec.syncPolicy ? { syncPolicy: a.spec.syncPolicy } : {}) },
  ...(a.operation !== undefined ? { operation: a.operation } : {}),
  status:
    a.status === undefined
      ? {}
      : {
          ...(a.status.sync ? { sync: a.status.sync } : {}),
          ...(a.status.health ? { health: a.status.health } : {}),
          ...(a.status.operationState
            ? {
                operationState: {
                  phase: a.status.operationState.phase,
                  message: a.status.operationState.message,
                  ...(a.status.operationState.operation?.sync?.revision
                    ? { operation: { sync: { revision: a.status.operationState.operation.sync.revision } } }
                    : {}),
                  ...(a.status.operationState.syncResult ? { syncResult: { revision: a.status.operationState.syncResult.revision } } : {}),
                },
              }
            : {}),
          ...(a.status.conditions ? { conditions: a.status.conditions.map((c: Any) => ({ type: c.type, message: c.message })) } : {}),
        },
})

const deployments = new Map<string, Any>()
const sequences = new Map<string, Any[]>()
for (const e of sorted) {
  if (e.kind === "Deployment") {
    deployments.set(`${e.object.metadata.namespace}/${e.object.metadata.name}`, e.object)
    continue
  }
  const a = e.object
  const target = a.spec?.source?.targetRevision
  if (target === undefined) continue
  const record = a.metadata.annotations?.[ANNOTATION_RELEASE_RECORD]
  const chartVersion = record === undefined ? target : String(JSON.parse(record).release.chart.ref).split(":").at(-1)
  // The Deployment in the namespace the Application targets: after a Move, the old namespace's does not count.
  const d = deployments.get(`${a.spec.destination?.namespace}/${a.metadata.labels?.[LABEL_RELEASE] ?? a.metadata.name}`)
  const seq = sequences.get(a.metadata.name) ?? []
  seq.push({ target, version: chartVersion, deployed: d !== undefined && rolledOut(d, chartVersion), app: trim(a) })
  sequences.set(a.metadata.name, seq)
}
const out = {
  recordedWith: `Argo CD ${version} on the local control plane (apps/step-executor/test/executor.int.test.ts), trimmed by hack/argocd-fixtures.ts`,
  sequences: [...sequences].map(([release, events]) => ({ release, events })),
}
writeFileSync(output, `${JSON.stringify(out, null, 1)}\n`)
process.stdout.write(`${output}: ${out.sequences.map((s) => `${s.release} ${s.events.length}`).join(", ")}\n`)
