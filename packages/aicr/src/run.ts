/**
 * Running one AICR Job, level-triggered: each call looks at the Job (and its pod) and moves it one step. Absent →
 * created suspended, its owned objects created with an ownerReference to it, then resumed. Finished → how it ended
 * (`jobOutcome`), with its output ConfigMap's document. A transient failure deletes the Job so the next pass (after
 * the driver's backoff) runs it again; a terminal one stays, recording the failure, until its TTL. A finished Job whose
 * output ConfigMap (one it owns, of its own name) is gone counts as a transient failure: its output is lost.
 *
 * The API server comes in as `JobApi`, the part of the `Kube` service (packages/kube) this needs, so the resolver
 * and the planner run their Jobs the same way without this package depending on the kube layer.
 */
import { Core, type KubeObject, type ResourceKind } from "@aicr/api"
import { Effect, Option } from "effect"
import type { AicrObject } from "./job"
import { type JobOutcome, jobOutcome, type JobView, outputOf, type PodView } from "./outcome"

export type JobState = { readonly _tag: "Started"; readonly name: string } | (JobOutcome & { readonly name: string; readonly output?: string | undefined })

type Job = KubeObject & JobView & { readonly metadata: { readonly uid?: string } }
type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

/** What a Kube error tells: its reason's tag (`AlreadyExists`, `NotFound`, …). */
export interface TaggedKubeError {
  readonly reason: { readonly _tag: string }
}

/** The API calls a Job run makes, as the `Kube` service shapes them. */
export interface JobApi<E extends TaggedKubeError> {
  readonly get: <T extends KubeObject = KubeObject>(kind: ResourceKind, key: string) => Effect.Effect<Option.Option<T>, E>
  readonly list: <T extends KubeObject = KubeObject>(
    kind: ResourceKind,
    options?: { readonly namespace?: string | undefined; readonly labelSelector?: string | undefined },
  ) => Effect.Effect<{ readonly items: ReadonlyArray<T> }, E>
  readonly create: <T extends KubeObject>(kind: ResourceKind, obj: T) => Effect.Effect<T, E>
  readonly apply: <T extends KubeObject = KubeObject>(
    kind: ResourceKind,
    obj: unknown,
    options: { readonly fieldManager: string; readonly force?: boolean | undefined },
  ) => Effect.Effect<T, E>
  readonly patch: <T extends KubeObject = KubeObject>(
    kind: ResourceKind,
    key: string,
    patch: { readonly type: "merge"; readonly body: unknown },
  ) => Effect.Effect<T, E>
  readonly delete: (kind: ResourceKind, key: string, options?: { readonly propagationPolicy?: "Background" | undefined }) => Effect.Effect<void, E>
}

const ignoring =
  <E extends TaggedKubeError>(tag: string) =>
  (e: E) =>
    e.reason._tag === tag

/** One step of the Job's run; `owned` builds the objects it owns once its uid is known. */
export const runAicrJob = <E extends TaggedKubeError>(
  kube: JobApi<E>,
  fieldManager: string,
  job: AicrObject,
  owned: (created: Job) => ReadonlyArray<AicrObject>,
): Effect.Effect<JobState, E> =>
  Effect.gen(function* () {
    const ns = job.metadata.namespace!
    const name = job.metadata.name
    const key = `${ns}/${name}`
    const resume = (j: Job) =>
      Effect.gen(function* () {
        for (const o of owned(j)) yield* kube.apply(o.kind === "Secret" ? Core.Secret : Core.ConfigMap, o, { fieldManager, force: true })
        yield* kube.patch(Core.Job, `${ns}/${name}`, { type: "merge", body: { spec: { suspend: false } } })
      })
    const found = yield* kube.get<Job>(Core.Job, key)
    if (Option.isNone(found)) {
      const created = yield* kube
        .create<Job>(Core.Job, job as unknown as Job)
        .pipe(Effect.catchIf(ignoring<E>("AlreadyExists"), () => kube.get<Job>(Core.Job, key).pipe(Effect.map(Option.getOrThrow))))
      yield* resume(created)
      return { _tag: "Started", name } satisfies JobState
    }
    const existing = found.value
    if (existing.spec?.suspend === true) {
      yield* resume(existing)
      return { _tag: "Started", name } satisfies JobState
    }
    const pods = yield* kube.list<KubeObject & PodView>(Core.Pod, { namespace: ns, labelSelector: `job-name=${name}` })
    const outcome = jobOutcome(existing, pods.items[0])
    const deleteJob = kube.delete(Core.Job, key, { propagationPolicy: "Background" }).pipe(Effect.catchIf(ignoring<E>("NotFound"), () => Effect.void))
    if (outcome._tag === "Succeeded") {
      const cm = yield* kube.get<ConfigMap>(Core.ConfigMap, key)
      // A Job that writes its output into a ConfigMap of its own name, finished, with that ConfigMap gone (deleted by
      // hand or by a cleanup after the run): the output is lost, not malformed. Run it again, as after a transient failure.
      if (Option.isNone(cm) && owned(existing).some((o) => o.kind === "ConfigMap" && o.metadata.name === name)) {
        yield* deleteJob
        return {
          _tag: "Failed",
          reason: "AICRInternal",
          transient: true,
          message: `completed, but its output ConfigMap ${key} is gone; running it again`,
          exitCode: undefined,
          name,
        } satisfies JobState
      }
      return { ...outcome, name, output: Option.isSome(cm) ? outputOf(cm.value.data) : undefined }
    }
    if (outcome._tag === "Failed" && outcome.transient) yield* deleteJob
    return { ...outcome, name }
  })
