/**
 * The resolver's AICR Jobs run with `runAicrJob` (packages/aicr run.ts) as its field manager: created suspended,
 * owned objects applied, resumed; each pass moves a Job one step.
 */
import { type AicrObject, type JobState, runAicrJob } from "@aicr/aicr"
import type { KubeObject } from "@aicr/api"
import { Kube, type KubeError } from "@aicr/kube"
import { Effect } from "effect"

export type { JobState }

export const FIELD_MANAGER = "aicr-resolver"

export const runJob = (
  job: AicrObject,
  owned: (created: KubeObject & { readonly metadata: { readonly uid?: string } }) => ReadonlyArray<AicrObject>,
): Effect.Effect<JobState, KubeError, Kube> =>
  Effect.gen(function* () {
    return yield* runAicrJob(yield* Kube, FIELD_MANAGER, job, owned)
  })
