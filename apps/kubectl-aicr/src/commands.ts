/**
 * The commands, against the API server only (never the operator). Decisions are written with an optimistic lock
 * (the resourceVersion read), in the caller's own name from a SelfSubjectReview; the API server's admission
 * policies decide whether they stand, and their refusals are shown as they come.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import {
  ANNOTATION_DESIRED_STATE_DIGEST,
  ClusterRuntimeKind,
  Core,
  LABEL_OUTCOME,
  LABEL_ROLE,
  planConfigMapName,
  readPlanData,
  Reviews,
  ROLE_PLAN,
  RuntimeRolloutKind,
  SINGLETON_NAME,
  type ClusterRuntime,
  type KubeObject,
  type Plan,
  type RuntimeRollout,
} from "@aicr/api"
import { toConditionTime } from "@aicr/conditions"
import type { KubeError, KubeShape } from "@aicr/kube"
import { Clock, Effect, Option, Result } from "effect"
import { type Flags, MAX_REASON, parseDuration } from "./args"
import { evidenceText, pullEvidence, readEvidence } from "./evidence"
import { describeText, type DescribeDoc, readAssessment } from "./render"

/** A refusal the plugin makes itself, before writing (exit code 1, message to stderr). */
export class CliError extends Error {}

type ConfigMap = KubeObject & { readonly data?: Readonly<Record<string, string>> }

export interface Io {
  readonly kube: KubeShape
  readonly out: (text: string) => void
}

export interface Result_ {
  /** What -o json|yaml prints. */
  readonly doc: unknown
  readonly text: string
}

const iso = (ms: number) => toConditionTime(ms)

const getRollout = (kube: KubeShape, name: string) =>
  kube
    .get<RuntimeRollout>(RuntimeRolloutKind, name)
    .pipe(
      Effect.flatMap((o) =>
        Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(new CliError(`runtimerollout "${name}" not found (kubectl get runtimerollouts lists them)`)),
      ),
    )

/** The caller, as the API server authenticates them. */
export const whoAmI = (kube: KubeShape) =>
  kube
    .create<KubeObject & { status?: { userInfo?: { username?: string; groups?: string[] } } }>(Reviews.SelfSubjectReview, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
      metadata: { name: "" },
    } as KubeObject)
    .pipe(
      Effect.flatMap((r) =>
        r.status?.userInfo?.username
          ? Effect.succeed({ username: r.status.userInfo.username, groups: r.status.userInfo.groups ?? [] })
          : Effect.fail(new CliError("the API server did not say who you are (SelfSubjectReview returned no user name)")),
      ),
    )

const ended = (r: RuntimeRollout) => r.metadata.labels?.[LABEL_OUTCOME]

const lockedPatch = (kube: KubeShape, r: RuntimeRollout, spec: Record<string, unknown>) =>
  kube.patch<RuntimeRollout>(
    RuntimeRolloutKind,
    r.metadata.name,
    { type: "merge", body: { metadata: { resourceVersion: r.metadata.resourceVersion }, spec } },
    { fieldManager: "kubectl-aicr" },
  )

/** The rollout's validation evidence, pulled from the registry and checked (report digest, signature presence). */
export const evidence = (io: Io, name: string): Effect.Effect<Result_, KubeError | CliError> =>
  Effect.gen(function* () {
    const rollout = yield* getRollout(io.kube, name)
    const ref = rollout.status?.validation?.evidenceRef
    if (ref === undefined)
      return yield* Effect.fail(
        new CliError(`rollout ${name} has no evidence yet (status.validation.evidenceRef is empty): kubectl aicr describe ${name} shows its validation`),
      )
    const files = yield* Effect.tryPromise({
      try: () => pullEvidence(ref),
      catch: (e) => new CliError(`cannot pull ${ref}: ${e instanceof Error ? e.message : String(e)}`),
    })
    const doc = readEvidence(files)
    if (!doc.reportMatches) return yield* Effect.fail(new CliError(`${evidenceText(doc)}the evidence's report does not match its binding: it was altered`))
    return { doc, text: evidenceText(doc) }
  })

export const describe = (io: Io, name: string, flags: Flags): Effect.Effect<Result_, KubeError | CliError> =>
  Effect.gen(function* () {
    const rollout = yield* getRollout(io.kube, name)
    const cmName = rollout.status?.assessment?.configMap
    let assessment: DescribeDoc["assessment"] = { components: [], note: "no assessment report named in status.assessment" }
    if (cmName !== undefined) {
      const cm = yield* io.kube.get<ConfigMap>(Core.ConfigMap, `${flags.operatorNamespace}/${cmName}`).pipe(
        Effect.map(Option.getOrUndefined),
        Effect.catchReason("KubeError", "Forbidden", (r) => Effect.succeed({ forbidden: r.message })),
      )
      assessment =
        cm === undefined
          ? { configMap: cmName, components: [], note: `ConfigMap ${flags.operatorNamespace}/${cmName} not found` }
          : "forbidden" in cm
            ? { configMap: cmName, components: [], note: `cannot read the assessment: ${String(cm.forbidden)}` }
            : { configMap: cmName, ...readAssessment(cm.data?.["assessment.json"]) }
    }
    const doc: DescribeDoc = { rollout, assessment }
    return { doc, text: describeText(doc) }
  })

export const approve = (io: Io, name: string, flags: Flags): Effect.Effect<Result_, KubeError | CliError> =>
  Effect.gen(function* () {
    const r = yield* getRollout(io.kube, name)
    const now = yield* Clock.currentTimeMillis
    const deadline = Date.parse(r.spec.deadline)
    if (ended(r)) return yield* Effect.fail(new CliError(`rollout ${name} has ended (${ended(r)}); a retry is a new rollout`))
    if (r.spec.revocation) return yield* Effect.fail(new CliError(`rollout ${name} was revoked by ${r.spec.revocation.revokedBy}; a retry is a new rollout`))
    if (r.spec.approval)
      return yield* Effect.fail(new CliError(`rollout ${name} is already approved by ${r.spec.approval.approvedBy} (approvals are set once)`))
    if (!r.spec.requiresApproval) return yield* Effect.fail(new CliError(`rollout ${name} needs no approval (spec.requiresApproval is false)`))
    if (now >= deadline) return yield* Effect.fail(new CliError(`rollout ${name} expired at its deadline ${r.spec.deadline}; a retry is a new rollout`))
    let expiresAt = deadline
    if (flags.expires !== undefined) {
      const ms = parseDuration(flags.expires)
      if (ms === undefined) return yield* Effect.fail(new CliError(`--expires ${flags.expires} is not a duration such as 2h, 90m or 1h30m`))
      if (ms <= 0) return yield* Effect.fail(new CliError(`--expires must not be negative or zero, got ${flags.expires}`))
      expiresAt = Math.min(now + ms, deadline)
    }
    const me = yield* whoAmI(io.kube)
    if (r.spec.requestedBy === me.username)
      return yield* Effect.fail(new CliError(`you (${me.username}) requested this change: nobody approves their own runtime edit; ask another approver`))
    const approvedAt = Math.floor(now / 1000) * 1000
    const approval = {
      approvedBy: me.username,
      groups: me.groups.slice(0, 32),
      reason: flags.reason!,
      approvedAt: iso(approvedAt),
      expiresAt: iso(Math.max(expiresAt, approvedAt + 1000)),
      toDigest: r.spec.toDigest,
    }
    const written = yield* lockedPatch(io.kube, r, { approval })
    const capped = flags.expires !== undefined && expiresAt === deadline ? " (capped at the rollout's deadline)" : ""
    return { doc: written, text: `runtimerollout.operator.aicr.run/${name} approved by ${me.username} until ${approval.expiresAt}${capped}\n` }
  })

export const revoke = (io: Io, name: string, flags: Flags): Effect.Effect<Result_, KubeError | CliError> =>
  Effect.gen(function* () {
    const r = yield* getRollout(io.kube, name)
    if (ended(r)) return yield* Effect.fail(new CliError(`rollout ${name} has ended (${ended(r)}); nothing to revoke`))
    if (r.spec.revocation) return yield* Effect.fail(new CliError(`rollout ${name} is already revoked by ${r.spec.revocation.revokedBy}`))
    const me = yield* whoAmI(io.kube)
    const now = yield* Clock.currentTimeMillis
    const written = yield* lockedPatch(io.kube, r, { revocation: { revokedBy: me.username, reason: flags.reason!, revokedAt: iso(now) } })
    return { doc: written, text: `runtimerollout.operator.aicr.run/${name} revoked by ${me.username}: the step in flight finishes, nothing new starts\n` }
  })

export const acknowledge = (io: Io, name: string, flags: Flags): Effect.Effect<Result_, KubeError | CliError> =>
  Effect.gen(function* () {
    const r = yield* getRollout(io.kube, name)
    if (ended(r)) return yield* Effect.fail(new CliError(`rollout ${name} has ended (${ended(r)}); nothing to acknowledge`))
    const done = new Set((r.spec.acknowledgements ?? []).map((a) => a.step))
    const pending = r.status?.approval?.pendingAcknowledgements ?? []
    const steps = [...new Set(flags.step ?? pending)]
    if (steps.length === 0) return yield* Effect.fail(new CliError(`no step of rollout ${name} waits for an acknowledgement; name one with --step RELEASE`))
    const again = steps.filter((s) => done.has(s))
    if (again.length > 0)
      return yield* Effect.fail(new CliError(`step ${again.join(", ")} of rollout ${name} is already acknowledged (acknowledgements are append-only)`))
    const me = yield* whoAmI(io.kube)
    const at = iso(yield* Clock.currentTimeMillis)
    const entries = steps.map((step) => ({ step, acknowledgedBy: me.username, at, ...(flags.reason ? { reason: flags.reason.slice(0, MAX_REASON) } : {}) }))
    const ops = [
      { op: "test" as const, path: "/metadata/resourceVersion", value: r.metadata.resourceVersion },
      ...(r.spec.acknowledgements === undefined
        ? [{ op: "add" as const, path: "/spec/acknowledgements", value: entries }]
        : entries.map((value) => ({ op: "add" as const, path: "/spec/acknowledgements/-", value }))),
    ]
    const written = yield* io.kube.patch<RuntimeRollout>(RuntimeRolloutKind, name, { type: "json", ops }, { fieldManager: "kubectl-aicr" })
    return { doc: written, text: `runtimerollout.operator.aicr.run/${name} acknowledged ${steps.join(", ")} by ${me.username}\n` }
  })

const findPlan = (
  kube: KubeShape,
  ns: string,
  wanted: string | undefined,
): Effect.Effect<{ digest: string; active: boolean; plan: Plan }, KubeError | CliError> =>
  Effect.gen(function* () {
    let digest = wanted
    let active = false
    if (digest === undefined) {
      const rt = yield* kube.get<ClusterRuntime>(ClusterRuntimeKind, SINGLETON_NAME)
      if (Option.isNone(rt)) return yield* Effect.fail(new CliError(`clusterruntime "${SINGLETON_NAME}" not found`))
      digest = rt.value.status?.plans?.active
      if (digest === undefined)
        return yield* Effect.fail(
          new CliError(`clusterruntime ${SINGLETON_NAME} has no active plan yet (status.plans.active); name a plan: kubectl aicr reproduce sha256:…`),
        )
      active = true
    }
    const full = digest.startsWith("sha256:") ? digest : `sha256:${digest}`
    let cm: ConfigMap | undefined
    if (/^sha256:[a-f0-9]{64}$/u.test(full)) {
      cm = Option.getOrUndefined(yield* kube.get<ConfigMap>(Core.ConfigMap, `${ns}/${planConfigMapName(full)}`))
    } else {
      const plans = (yield* kube.list<ConfigMap>(Core.ConfigMap, { namespace: ns, labelSelector: `${LABEL_ROLE}=${ROLE_PLAN}` })).items
      const hits = plans.filter((p) => (p.metadata.annotations?.[ANNOTATION_DESIRED_STATE_DIGEST] ?? "").startsWith(full))
      if (hits.length > 1)
        return yield* Effect.fail(
          new CliError(`plan prefix ${digest} is ambiguous: ${hits.map((h) => h.metadata.annotations![ANNOTATION_DESIRED_STATE_DIGEST]).join(", ")}`),
        )
      cm = hits[0]
    }
    if (cm === undefined)
      return yield* Effect.fail(
        new CliError(`plan ${digest} not found in namespace ${ns} (kubectl get configmaps -n ${ns} -l ${LABEL_ROLE}=${ROLE_PLAN} lists the plans)`),
      )
    const read = readPlanData(cm.data, cm.metadata.annotations?.[ANNOTATION_DESIRED_STATE_DIGEST] ?? full)
    if (Result.isFailure(read)) return yield* Effect.fail(new CliError(`plan ConfigMap ${ns}/${cm.metadata.name} is unreadable: ${read.failure}`))
    return { digest: read.success.desiredStateDigest, active, plan: read.success }
  })

/** Flags of the recorded argv that say where the recipe comes from and where the bundle goes, with whether they take a value. */
const LOCATION_FLAGS: Readonly<Record<string, boolean>> = {
  "--recipe": true,
  "-r": true,
  "--output": true,
  "-o": true,
  "--image-refs": true,
  "--kubeconfig": true,
  "-k": true,
  "--plain-http": false,
  "--insecure-tls": false,
}

/**
 * The plan's bundle flags (the argv the resolver's bundle Job ran, `plan.flags`) without those the reproduction sets
 * itself or that only say where things are: `bundle`, `--recipe`, `--output`, `--image-refs`, `--kubeconfig`,
 * `--plain-http`, `--insecure-tls`. What is left (deployer, node selectors and tolerations, `--set`) decides the content.
 */
export const planFlags = (flags: ReadonlyArray<string>): string[] => {
  const out: string[] = []
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]!
    if (i === 0 && f === "bundle") continue
    const eq = f.indexOf("=")
    const name = f.startsWith("-") && eq > 0 ? f.slice(0, eq) : f
    const takesValue = LOCATION_FLAGS[name]
    if (takesValue === undefined) {
      out.push(f)
      continue
    }
    if (takesValue && name === f) i++
  }
  return out
}

const shellQuote = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/u.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`)

export const reproduce = (io: Io, _name: string | undefined, flags: Flags): Effect.Effect<Result_, KubeError | CliError> =>
  Effect.gen(function* () {
    const ns = flags.operatorNamespace
    const { digest, active, plan } = yield* findPlan(io.kube, ns, flags.plan)
    const recipeRef = plan.content.find((c) => c.key === "recipe.json")
    if (recipeRef === undefined)
      return yield* Effect.fail(new CliError(`plan ${digest} names no recipe (content recipe.json); it was not rendered from a recipe (source ${plan.source})`))
    const content = Option.getOrUndefined(yield* io.kube.get<ConfigMap>(Core.ConfigMap, `${ns}/${recipeRef.configMap}`))
    const recipe = content?.data?.["recipe.json"]
    if (recipe === undefined)
      return yield* Effect.fail(new CliError(`the recipe of plan ${digest} is missing: ConfigMap ${ns}/${recipeRef.configMap} has no recipe.json`))
    mkdirSync(flags.dir, { recursive: true })
    const file = join(flags.dir, "recipe.json")
    writeFileSync(file, recipe)
    const image = plan.aicr?.image
    const bundle = plan.bundle?.ref
    const pf = planFlags(plan.flags)
    // The operator pushed over plain HTTP (a registry on loopback): oras needs the same to pull (it assumes it only for localhost).
    const plainHttp = plan.flags.some((f) => f === "--plain-http" || f === "--plain-http=true")
    const doc = { plan: digest, active, aicrImage: image ?? null, planFlags: pf, bundle: bundle ?? null, recipe: file }
    const text = [
      `Plan:       ${digest}${active ? " (active)" : ""}`,
      `AICR image: ${image ?? "(not recorded)"}`,
      `Plan flags: ${pf.map(shellQuote).join(" ")}`,
      `Bundle:     ${bundle ?? "(not recorded)"}`,
      `Wrote ${file}`,
      "",
      "Render the same bundle with the AICR CLI and compare it with the operator's:",
      `  AICR_IMAGE=${shellQuote(image ?? "<aicr image>")}`,
      `  PLAN_FLAGS=(${pf.map(shellQuote).join(" ")})`,
      `  BUNDLE=${shellQuote(bundle ?? "<registry>/bundles/cluster@sha256:<digest>")}`,
      `  docker run --rm --user "$(id -u):$(id -g)" -v "$PWD/${flags.dir}:/work" -w /work "\${AICR_IMAGE}" bundle --recipe recipe.json "\${PLAN_FLAGS[@]}" --output cli-bundle`,
      `  oras pull${plainHttp ? " --plain-http" : ""} "\${BUNDLE}" -o ${flags.dir}/operator-bundle`,
      `  diff -r ${flags.dir}/operator-bundle ${flags.dir}/cli-bundle && echo "zero diff"`,
      "",
    ].join("\n")
    return { doc, text }
  })

/** Rollout names for completion (empty when the caller may not list them). */
export const rolloutNames = (kube: KubeShape) =>
  kube.list<RuntimeRollout>(RuntimeRolloutKind).pipe(
    Effect.map((l) => l.items.map((r) => r.metadata.name).sort()),
    Effect.catch(() => Effect.succeed([] as string[])),
  )

/** The message a person reads for an API server error. */
export const explain = (e: KubeError): string => {
  const m = e.reason.message
  switch (e.reason._tag) {
    case "Forbidden":
      return `forbidden: ${m}${/cannot (patch|update) resource "runtimerollouts"/u.test(m) ? " (approving, revoking and acknowledging need the ClusterRole aicr-operator-approver)" : ""}`
    case "NotFound":
      return `not found: ${m}`
    case "Unauthorized":
      return `the API server did not accept your credentials (${m}); check --kubeconfig and --context`
    case "Conflict":
      return `the rollout changed while this command ran (${m}); run it again`
    case "Invalid":
      return `refused: ${m}`
    case "Unavailable":
    case "Timeout":
      return `cannot reach the API server: ${m}`
    default:
      return m
  }
}
