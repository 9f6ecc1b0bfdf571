/**
 * act: the validation run of a rollout whose steps are all ready, one level-triggered step per pass (operator.md
 * §4.9; docs/controllers/validation-gate.md):
 *
 * 1. a fresh snapshot: AICR's snapshot agent as a Job (`snapshotJob`, packages/aicr) on the first accelerated node,
 *    in the validation namespace under the launcher's ServiceAccount;
 * 2. `aicr validate --phase deployment` as a Job from the plan's pinned AICR image under the same identity, in-cluster,
 *    with the plan's recipe (checked against the plan's sha256) and that snapshot in a Job-owned input ConfigMap, its
 *    own deadline, the CTRF report through AICR's `cm://` writer (`validateJob`);
 * 3. the verdict from the report (`verdictOf`: exit 0 is not a pass);
 * 4. the evidence, pushed to `<prefix>/evidence/<runtime>:<rollout>-<uid, 8 hex>` (and signed when a key is configured).
 *
 * Jobs are named by the rollout's uid and target digest, so a pass after a crash finds the same Jobs; the evidence
 * bytes are deterministic, so a repeated push changes nothing.
 */
import {
  type AicrObject,
  type CheckCounts,
  type JobState,
  outputConfigMap,
  parseCtrf,
  runAicrJob,
  snapshotJob,
  validateInput,
  validateJob,
  validateJobName,
  verdictOf,
} from "@aicr/aicr"
import { Core, digestOf, type KubeObject, planConfigMapName, readPlan, recipeContentOf, sha256 } from "@aicr/api"
import { shortDigest } from "@aicr/conditions"
import { Kube, type KubeError } from "@aicr/kube"
import { openOnFirstUse } from "@aicr/runtime"
import { Context, Effect, Option, Result, type Scope } from "effect"
import type { GateSettings } from "./config"
import type { TerminalReason } from "./decide"
import type { EvidenceError } from "./errors"
import {
  BINDING_FILE,
  BINDING_MEDIA_TYPE,
  bindingDocument,
  CTRF_FILE,
  CTRF_MEDIA_TYPE,
  type EvidencePush,
  evidenceRepository,
  EVIDENCE_ARTIFACT_TYPE,
  SIGNATURE_FILE,
  SIGNATURE_MEDIA_TYPE,
} from "./evidence"
import type { Observed, ValidationRoom } from "./gather"

export const FIELD_MANAGER = "aicr-validation-gate"
/** The snapshot agent's own deadline (AICR's agent default is 5 minutes). */
const SNAPSHOT_DEADLINE_SECONDS = 300
const TTL_SECONDS = 3600

export interface EvidenceRegistryShape {
  /** The digest of the manifest a reference names (the bundle, bound into the evidence). */
  readonly resolve: (ref: string) => Effect.Effect<string, EvidenceError>
  /** Pushes the evidence; the digest reference `host/…/evidence/<runtime>@sha256:…`. */
  readonly push: (p: EvidencePush) => Effect.Effect<string, EvidenceError>
}
export class EvidenceRegistry extends Context.Service<EvidenceRegistry, EvidenceRegistryShape>()("@aicr/validation-gate/EvidenceRegistry") {}

export interface SignerShape {
  /** A signature of `payload` with the configured key (base64 of the DER ECDSA signature), or why there is none. */
  readonly sign: (payload: Uint8Array) => Effect.Effect<string, EvidenceError>
}
export class Signer extends Context.Service<Signer, SignerShape | undefined>()("@aicr/validation-gate/Signer") {}

/** The running gate's registry, loaded by the first push (an idle gate never loads `@aicr/oras`). */
export const lazyRegistry = (settings: GateSettings, userAgent: string): Effect.Effect<EvidenceRegistryShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const opened = yield* openOnFirstUse(() => import("./registry").then((m) => m.openRegistry(settings, userAgent)))
    return {
      resolve: (ref) => opened.pipe(Effect.flatMap((o) => o.registry.resolve(ref))),
      push: (p) => opened.pipe(Effect.flatMap((o) => o.registry.push(p))),
    }
  })

/** What a validation pass came to. */
export type RunOutcome =
  | { readonly _tag: "Running"; readonly message: string; readonly room: ValidationRoom }
  | { readonly _tag: "Verdict"; readonly status: "True"; readonly reason: "ValidationPassed"; readonly message: string; readonly room: ValidationRoom }
  | { readonly _tag: "Verdict"; readonly status: "False"; readonly reason: TerminalReason; readonly message: string; readonly room: ValidationRoom }
  | { readonly _tag: "EvidenceFailed"; readonly error: EvidenceError; readonly room: ValidationRoom }

type Job = KubeObject & { readonly spec?: { readonly suspend?: boolean }; readonly status?: { readonly startTime?: string; readonly completionTime?: string } }
type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

const notValidated = (reason: TerminalReason, message: string, room: ValidationRoom): RunOutcome => ({
  _tag: "Verdict",
  status: "False",
  reason,
  message,
  room: { ...room, result: "Failed" },
})

/** The run's key: one run per rollout (uid) and target plan. */
export const runKey = (o: Observed): string =>
  digestOf({ rollout: o.rollout.metadata.uid ?? o.rollout.metadata.name, toDigest: o.rollout.spec.toDigest, purpose: "deployment-validation" })

const withRolloutLabel = (job: AicrObject, rollout: string): AicrObject => {
  const tag = (labels: unknown) => ({ ...(labels as Record<string, string>), "operator.aicr.run/rollout": rollout })
  const spec = job["spec"] as { template: { metadata: { labels: unknown } } }
  return {
    ...job,
    metadata: { ...job.metadata, labels: tag(job.metadata.labels) },
    spec: { ...spec, template: { ...spec.template, metadata: { ...spec.template.metadata, labels: tag(spec.template.metadata.labels) } } },
  }
}

interface Inputs {
  readonly recipe: string
  readonly plan: { readonly desiredStateDigest: string; readonly inputDigest?: string | undefined; readonly bundle?: string | undefined }
  readonly aicr: { readonly version: string; readonly image: string }
}

/** The plan's recipe and pinned AICR, checked against what the plan recorded; or why not. */
const readInputs = (o: Observed): Effect.Effect<Result.Result<Inputs, string>, KubeError, Kube> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const ns = o.settings.namespace
    const to = o.rollout.spec.toDigest
    const planCm = yield* kube.get<ConfigMap>(Core.ConfigMap, `${ns}/${planConfigMapName(to)}`)
    const text = Option.isSome(planCm) ? planCm.value.data?.["plan.json"] : undefined
    if (text === undefined) return Result.fail(`the target plan ${shortDigest(to)} (ConfigMap ${ns}/${planConfigMapName(to)}) cannot be read`)
    const plan = readPlan(text)
    if (Result.isFailure(plan)) return Result.fail(`the target plan ${shortDigest(to)} is unreadable: ${plan.failure}`)
    const p = plan.success
    // A plan rebuilt from live Applications records AICR and the recipe only when a resolution rendered what runs
    // (ADR 20261203-adopted-plan-validation); one without them says where they should have come from.
    const adopted =
      p.source === "Adoption"
        ? ", as it was rebuilt from live Applications without a resolution that renders them (the planner adopts with validation Required only once one does)"
        : ""
    if (p.aicr === undefined) return Result.fail(`the target plan ${shortDigest(to)} records no AICR image to validate with${adopted}`)
    const content = recipeContentOf(p)
    if (content === undefined) return Result.fail(`the target plan ${shortDigest(to)} records no recipe to validate against${adopted}`)
    const cm = yield* kube.get<ConfigMap>(Core.ConfigMap, `${ns}/${content.configMap}`)
    const recipe = Option.isSome(cm) ? cm.value.data?.["recipe.json"] : undefined
    if (recipe === undefined) return Result.fail(`the recipe of plan ${shortDigest(to)} (ConfigMap ${ns}/${content.configMap}) is gone`)
    if (sha256(recipe) !== content.digest)
      return Result.fail(`the recipe in ConfigMap ${ns}/${content.configMap} is not the one plan ${shortDigest(to)} recorded`)
    return Result.succeed({
      recipe,
      plan: { desiredStateDigest: p.desiredStateDigest, inputDigest: p.inputDigest, bundle: p.bundle?.ref },
      aicr: { version: p.aicr.version, image: p.aicr.image },
    })
  })

const jobTimes = (job: Job | undefined): Pick<ValidationRoom, "startedAt" | "completedAt"> => ({
  ...(job?.status?.startTime !== undefined
    ? { startedAt: job.status.startTime }
    : job?.metadata.creationTimestamp !== undefined
      ? { startedAt: job.metadata.creationTimestamp }
      : {}),
  ...(job?.status?.completionTime !== undefined ? { completedAt: job.status.completionTime } : {}),
})

export const runValidation = (o: Observed): Effect.Effect<RunOutcome, KubeError, Kube | EvidenceRegistry | Signer> =>
  Effect.gen(function* () {
    const kube = yield* Kube
    const s = o.settings
    const ns = s.validationNamespace
    const key = runKey(o)
    const name = o.rollout.metadata.name
    const runID = validateJobName(key)
    const where = `${ns}/${runID}`
    const found = yield* kube.get<Job>(Core.Job, where)
    const starting = Option.isNone(found) || found.value.spec?.suspend === true
    const room0: ValidationRoom = { runID, ...jobTimes(Option.getOrUndefined(found)) }

    // Inputs: needed to start the run (its input ConfigMap) and for the evidence binding.
    const inputs = yield* readInputs(o)
    if (Result.isFailure(inputs)) return notValidated("ValidationIncomplete", `Deployment validation cannot run: ${inputs.failure}`, room0)
    const { recipe, plan, aicr } = inputs.success

    let snapshot = ""
    if (starting) {
      const node = o.runtime?.status?.discovery?.accelerated?.nodes?.[0]
      if (node === undefined)
        return notValidated("ValidationIncomplete", "Deployment validation cannot take a fresh snapshot: the runtime's status names no accelerated node", room0)
      const snapSettings = {
        image: aicr.image,
        namespace: ns,
        discoveryNamespace: ns,
        serviceAccount: s.launcher,
        agentServiceAccount: s.launcher,
        activeDeadlineSeconds: SNAPSHOT_DEADLINE_SECONDS,
        ttlSecondsAfterFinished: TTL_SECONDS,
      }
      const snapJob = withRolloutLabel(snapshotJob(snapSettings, key, node), name)
      const snap: JobState = yield* runAicrJob(kube, FIELD_MANAGER, snapJob, (job) => [outputConfigMap(job, "snapshot", key)])
      const snapWhere = `Snapshot Job ${ns}/${snap.name} on node ${node}`
      if (snap._tag === "Started" || snap._tag === "Running")
        return {
          _tag: "Running",
          message: `Validation run ${runID} for rollout ${name}: ${snapWhere}: ${snap._tag === "Started" ? "started" : snap.detail}`,
          room: room0,
        }
      if (snap._tag === "Failed") {
        if (snap.transient)
          return { _tag: "Running", message: `Validation run ${runID} for rollout ${name}: ${snapWhere} ${snap.message}; retrying`, room: room0 }
        return notValidated("ValidationIncomplete", `Deployment validation could not take a fresh snapshot: ${snapWhere} ${snap.message}`, room0)
      }
      if (snap.output === undefined || snap.output.trim() === "")
        return notValidated("ValidationIncomplete", `Deployment validation could not take a fresh snapshot: ${snapWhere} wrote no snapshot`, room0)
      snapshot = snap.output
    }

    const vs = { image: aicr.image, namespace: ns, serviceAccount: s.launcher, activeDeadlineSeconds: s.deadlineSeconds, ttlSecondsAfterFinished: TTL_SECONDS }
    const vJob = withRolloutLabel(validateJob(vs, key), name)
    const state: JobState = yield* runAicrJob(kube, FIELD_MANAGER, vJob, (job) => [validateInput(job, key, { recipe, snapshot })])
    const job = Option.getOrUndefined(yield* kube.get<Job>(Core.Job, where))
    const room: ValidationRoom = { runID, ...jobTimes(job) }
    if (state._tag === "Started" || state._tag === "Running") {
      return { _tag: "Running", message: `Deployment validation run ${runID} of rollout ${name}: ${state._tag === "Started" ? "started" : state.detail}`, room }
    }
    if (state._tag === "Failed") {
      if (state.transient)
        return { _tag: "Running", message: `Deployment validation run ${runID} of rollout ${name}: aicr validate ${state.message}; retrying`, room }
      return notValidated("ValidationIncomplete", `Deployment validation run ${runID} wrote no report: aicr validate ${state.message}`, room)
    }
    if (state.output === undefined)
      return notValidated("ValidationIncomplete", `Deployment validation run ${runID} completed without a report in ConfigMap ${where}`, room)
    const parsed = parseCtrf(state.output)
    if (Result.isFailure(parsed)) return notValidated("ValidationIncomplete", `Deployment validation run ${runID}: ${parsed.failure}`, room)
    const verdict = verdictOf(parsed.success)
    const counted: ValidationRoom = { ...room, checks: verdict.checks satisfies CheckCounts, result: verdict._tag === "Passed" ? "Passed" : "Failed" }
    const reason = verdict._tag === "Passed" ? "ValidationPassed" : verdict.reason

    // Evidence: the report byte for byte, bound to plan and approval (and signed when a key is configured).
    const reportBytes = new TextEncoder().encode(state.output)
    const registry = yield* EvidenceRegistry
    let bundle: { ref: string; digest: string } | undefined
    if (plan.bundle !== undefined) {
      const resolved = yield* registry.resolve(plan.bundle).pipe(Effect.result)
      if (Result.isFailure(resolved)) return { _tag: "EvidenceFailed", error: resolved.failure, room: counted }
      bundle = { ref: plan.bundle, digest: resolved.success }
    }
    const binding = bindingDocument({
      rollout: o.rollout,
      runtimeName: o.runtime?.metadata.name ?? "cluster",
      plan,
      bundle,
      aicr,
      run: {
        id: runID,
        startedAt: counted.startedAt,
        completedAt: counted.completedAt,
        result: verdict._tag === "Passed" ? "Passed" : "Failed",
        reason,
        message: verdict.message,
        checks: verdict.checks,
      },
      report: { bytes: reportBytes, parsed: parsed.success },
    })
    const signer = yield* Signer
    let signature: string | undefined
    let unsigned: string | undefined
    if (signer !== undefined) {
      const signed = yield* signer.sign(binding).pipe(Effect.result)
      if (Result.isFailure(signed)) {
        // A transient failure is retried; any other leaves the evidence unsigned, which fails the rollout below.
        if (signed.failure.transient) return { _tag: "EvidenceFailed", error: signed.failure, room: counted }
        unsigned = signed.failure.message
      } else signature = signed.success
    }
    const files = [
      { name: BINDING_FILE, mediaType: BINDING_MEDIA_TYPE, bytes: binding },
      { name: CTRF_FILE, mediaType: CTRF_MEDIA_TYPE, bytes: reportBytes },
      ...(signature !== undefined ? [{ name: SIGNATURE_FILE, mediaType: SIGNATURE_MEDIA_TYPE, bytes: new TextEncoder().encode(signature) }] : []),
    ]
    const pushed = yield* registry
      .push({
        repository: evidenceRepository(s.prefix.registry, s.prefix.prefix, o.runtime?.metadata.name ?? "cluster"),
        // The rollout's name and uid: a name recurs once the rollouts were lost (a reinstall numbers its attempts
        // from 1 again, and an Adopt rollout targets the plan an earlier rollout of that name rolled out).
        tag: `${name}-${(o.rollout.metadata.uid ?? "").slice(0, 8)}`,
        subject: bundle === undefined ? undefined : `${bundle.ref.replace(/[:@][^/]*$/u, "")}@${bundle.digest}`,
        files,
        annotations: {
          "operator.aicr.run/rollout": name,
          "operator.aicr.run/desired-state-digest": plan.desiredStateDigest,
          "operator.aicr.run/validation-result": counted.result!,
          "org.opencontainers.image.title": `deployment validation of ${name}`,
          "operator.aicr.run/artifact-type": EVIDENCE_ARTIFACT_TYPE,
        },
      })
      .pipe(Effect.result)
    if (Result.isFailure(pushed)) return { _tag: "EvidenceFailed", error: pushed.failure, room: counted }
    const done: ValidationRoom = { ...counted, evidenceRef: pushed.success }
    if (s.signingKey !== undefined && signature === undefined) {
      return notValidated(
        "EvidenceUnsigned",
        `A signing key (${s.signingKey}) is configured but evidence ${pushed.success} carries no valid signature${unsigned !== undefined ? `: ${unsigned}` : ""}`,
        done,
      )
    }
    if (verdict._tag === "Passed")
      return {
        _tag: "Verdict",
        status: "True",
        reason: "ValidationPassed",
        message: `${verdict.message} (run ${runID}; evidence ${pushed.success})`,
        room: done,
      }
    return { _tag: "Verdict", status: "False", reason: verdict.reason, message: `${verdict.message} (run ${runID}; evidence ${pushed.success})`, room: done }
  })
