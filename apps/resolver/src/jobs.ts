/**
 * Running one AICR Job, level-triggered: each call looks at the Job (and its pod) and moves it one step. Absent →
 * created suspended, its owned objects created with an ownerReference to it, then resumed. Finished → how it ended
 * (`jobOutcome`), with its output ConfigMap's document. A transient failure deletes the Job so the next pass (after
 * the driver's backoff) runs it again; a terminal one stays, recording the failure, until its TTL.
 */
import { type AicrObject, type JobOutcome, jobOutcome, type JobView, outputOf, type PodView } from "@aicr/aicr"
import { Core, type KubeObject } from "@aicr/api"
import { Kube, type KubeError } from "@aicr/kube"
import { Effect, Option } from "effect"

export type JobState =
  | { readonly _tag: "Started"; readonly name: string }
  | (JobOutcome & { readonly name: string; readonly output?: string | undefined })

type Job = KubeObject & JobView & { readonly metadata: { readonly uid?: string } }
type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

export const FIELD_MANAGER = "aicr-resolver"

export const runJob = (
  job: AicrObject,
  owned: (created: Job) => ReadonlyArray<AicrObject>,
): Effect.Effect<JobState, KubeError, Kube> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const ns = job.metadata.namespace!
    const name = job.metadata.name
    const key = `${ns}/${name}`
    const found = yield* kube.get<Job>(Core.Job, key)
    if (Option.isNone(found)) {
      const created = yield* kube.create<Job>(Core.Job, job as unknown as Job).pipe(
        Effect.catchReason("KubeError", "AlreadyExists", () => kube.get<Job>(Core.Job, key).pipe(Effect.map(Option.getOrThrow))),
      )
      yield* resume(created, owned)
      return { _tag: "Started", name } satisfies JobState
    }
    const existing = found.value
    if (existing.spec?.suspend === true) {
      yield* resume(existing, owned)
      return { _tag: "Started", name } satisfies JobState
    }
    const pods = yield* kube.list<KubeObject & PodView>(Core.Pod, { namespace: ns, labelSelector: `job-name=${name}` })
    const outcome = jobOutcome(existing, pods.items[0])
    if (outcome._tag === "Succeeded") {
      const cm = yield* kube.get<ConfigMap>(Core.ConfigMap, key)
      return { ...outcome, name, output: Option.isSome(cm) ? outputOf(cm.value.data) : undefined }
    }
    if (outcome._tag === "Failed" && outcome.transient) {
      yield* kube.delete(Core.Job, key, { propagationPolicy: "Background" }).pipe(Effect.catchReason("KubeError", "NotFound", () => Effect.void))
    }
    return { ...outcome, name }
  })

const kindOf = (o: AicrObject) => (o.kind === "Secret" ? Core.Secret : Core.ConfigMap)

const resume = (job: Job, owned: (created: Job) => ReadonlyArray<AicrObject>) =>
  Effect.gen(function* () {
    const kube = yield* Kube
    for (const o of owned(job)) yield* kube.apply(kindOf(o), o, { fieldManager: FIELD_MANAGER, force: true })
    yield* kube.patch(Core.Job, `${job.metadata.namespace}/${job.metadata.name}`, { type: "merge", body: { spec: { suspend: false } } })
  })
