/**
 * act: the side effects of a decision, one step at a time. Each step that starts or waits for an AICR Job ends the
 * pass (the Job's end is a watched event that brings the next); between the steps, the pure checks of decide.ts.
 * Its reads depend on what the pass learns on its way: the content ConfigMap of the inputDigest, the last snapshot's
 * output. Every failure of ours becomes an `Outcome` through `errorsToOutcome`; API server errors fail the pass (the
 * driver backs off, no status write).
 *
 *   Snapshot Job ─ snapshotCriteria ─┐
 *   Resolve ─────────────────────────┴ decideInputs ─ content already published? ─► Resolved=True (no AICR run)
 *     └ spec.paused ─► Resolving "spec.paused is set" (no AICR run)
 *       └ recipe Job ─ checkRecipe ─ bundle Job ─ read back ─ checkBundle ─ content ConfigMap ─► Resolved=True
 */
import { bundleJob, credentialSecret, jobName, outputConfigMap, recipeJob, snapshotJob } from "@aicr/aicr"
import { Core, type KubeObject } from "@aicr/api"
import { shortDigest, toConditionTime } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { Effect, Option, Result } from "effect"
import {
  aicrMessage,
  bundleFailure,
  checkBundle,
  checkRecipe,
  contentOf,
  type Decision,
  decideInputs,
  pushedDigest,
  resolvingText,
  snapshotCriteria,
} from "./decide"
import { AicrJobFailedError, BundleUnreadableError, RegistryCredentialsUnavailableError, type ResolverError, toOutcome } from "./errors"
import type { Observed } from "./gather"
import { snapshotKeyOf } from "./inputs"
import { runJob } from "./jobs"
import { BundleStore } from "./services"
import type { Known, Outcome } from "./status"

const isLoopbackHost = (host: string) => /^(127\.|localhost|\[::1\])/u.test(host)

export const act = (o: Observed, decision: Decision): Effect.Effect<Outcome, KubeError, Kube | BundleStore> => {
  switch (decision._tag) {
    case "Fail":
      return Effect.succeed({ ...toOutcome(decision.error, ""), known: {} })
    case "Wait":
      return Effect.succeed({ _tag: "Discovering", message: decision.message, resolving: decision.message, known: {} })
    case "Resolve":
      return resolve(o, { criteria: decision.criteria }, undefined)
    case "Snapshot":
      return Effect.gen(function* () {
        const s = yield* runJob(snapshotJob(o.settings.jobs, decision.key, decision.node), (job) => [outputConfigMap(job, "snapshot", decision.key)])
        const where = `Snapshot Job ${o.settings.jobs.discoveryNamespace}/${s.name} on node ${decision.node}`
        if (s._tag === "Started" || s._tag === "Running") {
          const message = `${where}: ${s._tag === "Started" ? "started" : s.detail}`
          return { _tag: "Discovering", message, resolving: `Waiting for discovery: ${message}`, known: {} } satisfies Outcome as Outcome
        }
        if (s._tag === "Failed") {
          const error = new AicrJobFailedError({ job: "Snapshot", reason: s.reason, transient: s.transient, message: `${where} ${s.message}` })
          return { ...toOutcome(error, ""), known: {} }
        }
        const criteria = snapshotCriteria(s.output ?? "", o.settings, where)
        if (Result.isFailure(criteria)) return { ...toOutcome(criteria.failure, ""), known: {} }
        return yield* resolve(o, { criteria: criteria.success, snapshot: { criteria: criteria.success, digest: decision.key, takenAt: o.now } }, s.output)
      })
  }
}

/** The resolution of the current inputs, discovery done; `snapshotText` is the snapshot this pass took, if any. */
const resolve = (o: Observed, known: Known, snapshotText: string | undefined): Effect.Effect<Outcome, KubeError, Kube | BundleStore> =>
  Effect.gen(function* () {
    const { settings } = o
    const decided = decideInputs(o, known.criteria)
    if (Result.isFailure(decided)) return { ...toOutcome(decided.failure, ""), known }
    const inputs = decided.success
    const what = resolvingText(inputs.inputDigest)
    const failed = (e: ResolverError): Outcome => ({ ...toOutcome(e, what), known })
    const resolving = (message: string): Outcome => ({ _tag: "Resolving", message, known })
    const kube = yield* Kube
    if (
      o.resolution?.inputDigest === inputs.inputDigest &&
      o.resolution.contentConfigMap === inputs.contentName &&
      Option.isSome(yield* kube.get(Core.ConfigMap, `${settings.namespace}/${inputs.contentName}`))
    ) {
      return { _tag: "Resolved", resolution: o.resolution, known } satisfies Outcome as Outcome
    }
    if (o.runtime.spec.paused === true) return resolving(`spec.paused is set: input ${shortDigest(inputs.inputDigest)} is not resolved until it is cleared`)

    const recipe = yield* runJob(recipeJob(settings.jobs, inputs.inputDigest, inputs.recipe), (job) => [outputConfigMap(job, "recipe", inputs.inputDigest)])
    if (recipe._tag === "Started" || recipe._tag === "Running")
      return resolving(`${what}: recipe Job ${settings.jobs.namespace}/${recipe.name} ${recipe._tag === "Started" ? "started" : recipe.detail}`)
    if (recipe._tag === "Failed")
      return failed(
        new AicrJobFailedError({ job: "Recipe", reason: recipe.reason, transient: recipe.transient, message: aicrMessage("Recipe", recipe, settings) }),
      )
    const recipeOutput = recipe.output ?? ""
    const parsedRecipe = checkRecipe(recipeOutput, recipe.name, settings)
    if (Result.isFailure(parsedRecipe)) return failed(parsedRecipe.failure)

    const store = yield* BundleStore
    const target = {
      reference: `${settings.registry.host}/${settings.registry.prefix}/bundles/cluster:aicr-${inputs.inputDigest.slice(7, 39)}`,
      plainHttp: settings.plainHttp.includes(settings.registry.host) || isLoopbackHost(settings.registry.host),
    }
    const credential = yield* store.credential().pipe(Effect.result)
    if (Result.isFailure(credential)) return failed(new RegistryCredentialsUnavailableError({ message: credential.failure.message }))
    const bundle = yield* runJob(bundleJob(settings.jobs, inputs.inputDigest, recipe.name, inputs.bundle, target), (job) => [
      credentialSecret(job, inputs.inputDigest, credential.success),
    ])
    if (bundle._tag === "Started" || bundle._tag === "Running")
      return resolving(`${what}: bundle Job ${settings.jobs.namespace}/${bundle.name} ${bundle._tag === "Started" ? "started" : bundle.detail}`)
    if (bundle._tag === "Failed") return failed(bundleFailure(bundle, settings))
    const digest = pushedDigest(bundle.terminationMessage, bundle.name, settings)
    if (Result.isFailure(digest)) return failed(digest.failure)
    const reference = `${target.reference.replace(/:[^:/]+$/u, "")}@${digest.success}`
    const pulled = yield* store.pull(reference).pipe(Effect.result)
    if (Result.isFailure(pulled))
      return failed(new BundleUnreadableError({ kind: pulled.failure.kind, digest: digest.success, message: pulled.failure.message }))
    const checked = checkBundle(pulled.success, parsedRecipe.success, o, bundle.name)
    if (Result.isFailure(checked)) return failed(checked.failure)

    const content = contentOf({
      settings,
      inputs,
      recipeJob: recipe.name,
      recipeOutput,
      files: pulled.success,
      target,
      bundle: reference,
      snapshotYaml: snapshotText ?? (yield* latestSnapshotText(o)),
    })
    if (Result.isFailure(content)) return failed(content.failure)
    yield* kube.create(Core.ConfigMap, content.success).pipe(Effect.catchReason("KubeError", "AlreadyExists", () => Effect.void))
    return {
      _tag: "Resolved",
      resolution: {
        inputDigest: inputs.inputDigest,
        aicr: { version: settings.version, image: settings.jobs.image },
        contentConfigMap: inputs.contentName,
        releases: checked.success.releases,
        resolvedAt: toConditionTime(o.now),
      },
      known,
    } satisfies Outcome as Outcome
  })

/** The snapshot the current discovery was confirmed with, if its output ConfigMap is still there. */
const latestSnapshotText = (o: Observed): Effect.Effect<string | undefined, KubeError, Kube> =>
  Effect.gen(function* () {
    if (o.discovery.snapshotNode === undefined) return undefined
    const kube = yield* Kube
    const cm = yield* kube.get<KubeObject & { data?: Record<string, string> }>(
      Core.ConfigMap,
      `${o.settings.jobs.discoveryNamespace}/${jobName("snapshot", snapshotKeyOf(o.pin, o.discovery.facts))}`,
    )
    return Option.isSome(cm) ? (cm.value.data?.["snapshot.yaml"] ?? cm.value.data?.["snapshot.json"]) : undefined
  })
