/**
 * Event recorder over `events.k8s.io/v1`. Events are best-effort: a failed write is logged at debug and never fails
 * the caller. A repeat of the same event (same object, type, reason, action, note) within `seriesWindow` updates
 * the first Event's `series` instead of creating another object, as client-go's events library does.
 */
import { Core, type KubeObject } from "@aicr/api"
import { Clock, Context, Duration, Effect, Layer, Result } from "effect"
import { Kube } from "./kube"
import { microTime } from "./leader"

export interface EventSpec {
  readonly type: "Normal" | "Warning"
  /** CamelCase, why the action was taken, e.g. `ChartMirrored`. */
  readonly reason: string
  /** CamelCase, what was done or failed, e.g. `Mirror`. */
  readonly action: string
  /** Human-readable, at most 1 kB; deterministic (no timestamps). */
  readonly note: string
  readonly related?: KubeObject | undefined
}

export interface EventRecorderShape {
  readonly event: (regarding: KubeObject, spec: EventSpec) => Effect.Effect<void>
}

export class EventRecorder extends Context.Service<EventRecorder, EventRecorderShape>()("@aicr/kube/EventRecorder") {}

export interface EventRecorderOptions {
  /** `reportingController`, e.g. `operator.aicr.run/approval-guard`. */
  readonly controller: string
  /** `reportingInstance`, e.g. the pod name. */
  readonly instance: string
  /** Namespace for events about cluster-scoped objects (default `default`, as client-go). */
  readonly clusterScopedNamespace?: string | undefined
  readonly seriesWindow?: Duration.Input | undefined
}

const ref = (o: KubeObject) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
  ...(o.metadata.resourceVersion ? { resourceVersion: o.metadata.resourceVersion } : {}),
})

export const makeEventRecorder = (options: EventRecorderOptions) =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const windowMs = Duration.toMillis(options.seriesWindow ?? "6 minutes")
    const seen = new Map<string, { key: string; first: number; count: number }>()
    let seq = 0

    const event = (regarding: KubeObject, spec: EventSpec): Effect.Effect<void> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const namespace = regarding.metadata.namespace ?? options.clusterScopedNamespace ?? "default"
        const id = [
          regarding.metadata.uid ?? `${regarding.kind}/${regarding.metadata.namespace ?? ""}/${regarding.metadata.name}`,
          spec.type,
          spec.reason,
          spec.action,
          spec.note,
        ].join("\u0000")
        const prior = seen.get(id)
        const note = spec.note.length > 1024 ? `${spec.note.slice(0, 1021)}...` : spec.note
        const write =
          prior !== undefined && now - prior.first < windowMs
            ? kube
                .patch(
                  Core.Event,
                  prior.key,
                  { type: "merge", body: { series: { count: prior.count + 1, lastObservedTime: microTime(now) } } },
                  { fieldManager: options.controller },
                )
                .pipe(Effect.tap(() => Effect.sync(() => void (prior.count += 1))))
            : Effect.suspend(() => {
                const name = `${regarding.metadata.name}.${(now * 1000 + (seq++ % 1000)).toString(16)}`
                return kube
                  .create(
                    Core.Event,
                    {
                      apiVersion: "events.k8s.io/v1",
                      kind: "Event",
                      metadata: { name, namespace },
                      eventTime: microTime(now),
                      reportingController: options.controller,
                      reportingInstance: options.instance,
                      type: spec.type,
                      reason: spec.reason,
                      action: spec.action,
                      note,
                      regarding: ref(regarding),
                      ...(spec.related ? { related: ref(spec.related) } : {}),
                    } as KubeObject,
                    { fieldManager: options.controller },
                  )
                  .pipe(
                    Effect.tap(() =>
                      Effect.sync(() => {
                        if (seen.size >= 4096) seen.delete(seen.keys().next().value!)
                        seen.set(id, { key: `${namespace}/${name}`, first: now, count: 1 })
                      }),
                    ),
                  )
              })
        const r = yield* Effect.result(write)
        if (Result.isFailure(r)) yield* Effect.logDebug("Recording an event failed", { err: r.failure.message, reason: spec.reason })
      })

    return { event } satisfies EventRecorderShape
  })

export const eventRecorderLayer = (options: EventRecorderOptions): Layer.Layer<EventRecorder, never, Kube> =>
  Layer.effect(EventRecorder)(makeEventRecorder(options))
