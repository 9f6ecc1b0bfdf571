/**
 * The server-side-apply ownership scenarios, as one table run against both FakeKube (unit tier) and a real
 * kube-apiserver (`packages/kube/test/ssa.int.test.ts`), so FakeKube's model stays honest (design/style.md §B.7).
 * Each scenario applies status bodies as different field managers to a fresh `Widget` and reports, per step, `ok`
 * or the KubeError reason, plus the final conditions and status keys.
 */
import type { ResourceKind } from "@aicr/api"
import type { KubeShape } from "@aicr/kube"
import { Effect } from "effect"

/** A cluster-scoped test-only kind with a status subresource, `listType=map` conditions and two rooms. */
export const WidgetKind: ResourceKind = { group: "test.aicr.run", version: "v1", kind: "Widget", plural: "widgets", namespaced: false }

const conditionSchema = {
  type: "object",
  required: ["type", "status", "lastTransitionTime", "reason", "message"],
  properties: {
    type: { type: "string", maxLength: 316 },
    status: { type: "string", enum: ["True", "False", "Unknown"] },
    observedGeneration: { type: "integer", format: "int64", minimum: 0 },
    lastTransitionTime: { type: "string", format: "date-time" },
    reason: { type: "string", minLength: 1, maxLength: 1024 },
    message: { type: "string", maxLength: 32768 },
  },
}
const room = { type: "object", properties: { n: { type: "integer" }, digest: { type: "string" }, steps: { type: "array", items: { type: "string" } } } }

/** The CRD for {@link WidgetKind}, ready for `applyManifests`. */
export const widgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.test.aicr.run" },
  spec: {
    group: "test.aicr.run",
    scope: "Cluster",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", properties: { size: { type: "integer" }, color: { type: "string" } } },
              status: {
                type: "object",
                properties: {
                  conditions: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"], items: conditionSchema },
                  alpha: room,
                  beta: room,
                },
              },
            },
          },
        },
      },
    ],
  },
}

const c = (type: string, status: "True" | "False" | "Unknown") => ({
  type,
  status,
  reason: status === "True" ? "Ready" : "NotReady",
  message: `${type} is ${status}`,
  lastTransitionTime: "2026-12-02T10:00:00Z",
  observedGeneration: 1,
})

export interface SsaStep {
  readonly manager: string
  readonly status: Readonly<Record<string, unknown>>
  readonly force?: boolean
}

export interface SsaOutcome {
  /** Per step: `ok` or the KubeError reason. */
  readonly steps: ReadonlyArray<string>
  /** Final `type → status` of every condition. */
  readonly conditions: Readonly<Record<string, string>>
  /** Final value of each status key other than conditions. */
  readonly keys: Readonly<Record<string, unknown>>
}

export interface SsaScenario {
  readonly name: string
  readonly steps: ReadonlyArray<SsaStep>
  readonly want: SsaOutcome
}

export const ssaScenarios: ReadonlyArray<SsaScenario> = [
  {
    name: "two field managers each own their own condition and status key in one object",
    steps: [
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "True")], alpha: { n: 1 } } },
      { manager: "aicr-beta", status: { conditions: [c("Beta", "False")], beta: { n: 2 } } },
    ],
    want: { steps: ["ok", "ok"], conditions: { Alpha: "True", Beta: "False" }, keys: { alpha: { n: 1 }, beta: { n: 2 } } },
  },
  {
    name: "omitting a condition deletes only the applier's own condition",
    steps: [
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "True"), c("AlphaReady", "True")] } },
      { manager: "aicr-beta", status: { conditions: [c("Beta", "True")] } },
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "True")] } },
    ],
    want: { steps: ["ok", "ok", "ok"], conditions: { Alpha: "True", Beta: "True" }, keys: {} },
  },
  {
    name: "omitting a status key deletes only the applier's own key",
    steps: [
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "True")], alpha: { n: 1, digest: "d1" } } },
      { manager: "aicr-beta", status: { conditions: [c("Beta", "True")], beta: { n: 2 } } },
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "False")] } },
    ],
    want: { steps: ["ok", "ok", "ok"], conditions: { Alpha: "False", Beta: "True" }, keys: { beta: { n: 2 } } },
  },
  {
    name: "a different value for another manager's condition is a FieldManagerConflict and changes nothing",
    steps: [
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "True")] } },
      { manager: "aicr-beta", status: { conditions: [c("Alpha", "False")] } },
    ],
    want: { steps: ["ok", "FieldManagerConflict"], conditions: { Alpha: "True" }, keys: {} },
  },
  {
    name: "a different value for another manager's status key is a FieldManagerConflict",
    steps: [
      { manager: "aicr-alpha", status: { alpha: { n: 1 } } },
      { manager: "aicr-beta", status: { alpha: { n: 2 } } },
    ],
    want: { steps: ["ok", "FieldManagerConflict"], conditions: {}, keys: { alpha: { n: 1 } } },
  },
  {
    name: "an identical value for another manager's condition is accepted and co-owned, so one owner's omission keeps it",
    steps: [
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "True")] } },
      { manager: "aicr-beta", status: { conditions: [c("Alpha", "True")] } },
      { manager: "aicr-alpha", status: { conditions: [] } },
    ],
    want: { steps: ["ok", "ok", "ok"], conditions: { Alpha: "True" }, keys: {} },
  },
  {
    name: "force takes another manager's condition, after which the old owner's omission leaves it alone",
    steps: [
      { manager: "aicr-alpha", status: { conditions: [c("Alpha", "True")] } },
      { manager: "aicr-beta", status: { conditions: [c("Alpha", "False")] }, force: true },
      { manager: "aicr-alpha", status: { conditions: [] } },
    ],
    want: { steps: ["ok", "ok", "ok"], conditions: { Alpha: "False" }, keys: {} },
  },
]

/** Run one scenario against any `Kube` on a fresh Widget named `name`. The Widget must not exist yet. */
export const runSsaScenario = (kube: KubeShape, scenario: SsaScenario, name: string): Effect.Effect<SsaOutcome, unknown> =>
  Effect.gen(function* () {
    yield* kube.create(WidgetKind, { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name }, spec: { size: 1 } } as never)
    const steps: Array<string> = []
    for (const s of scenario.steps) {
      const r = yield* kube
        .apply(
          WidgetKind,
          { apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name }, status: s.status },
          { fieldManager: s.manager, force: s.force ?? false, subresource: "status" },
        )
        .pipe(
          Effect.as("ok"),
          Effect.catchTag("KubeError", (e) => Effect.succeed(e.reason._tag)),
        )
      steps.push(r)
    }
    const live = yield* kube.get(WidgetKind, name)
    const status = ((live._tag === "Some" ? (live.value as unknown as { status?: Record<string, unknown> }).status : undefined) ?? {}) as Record<
      string,
      unknown
    >
    const conditions: Record<string, string> = {}
    for (const cond of (status["conditions"] as ReadonlyArray<{ type: string; status: string }> | undefined) ?? []) conditions[cond.type] = cond.status
    const keys: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(status)) if (k !== "conditions") keys[k] = v
    return { steps, conditions, keys }
  })
