/**
 * `kubectl aicr watch ROLLOUT` (also `describe ROLLOUT --watch`): follows a rollout live until it ends. On a terminal
 * the screen is redrawn on every change and each second (elapsed times): a progress bar over the steps, the step in
 * flight with its elapsed time against its deadline, each finished step's duration. Piped, one line per change.
 * The exit code is the outcome (`OUTCOME_EXIT`). `frame` and `line` are pure; `follow` reads a watch.
 */
import { LABEL_OUTCOME, type Outcome, RuntimeRolloutKind, type RuntimeRollout } from "@aicr/api"
import type { KubeError, KubeShape } from "@aicr/kube"
import { Deferred, Effect, Option, Ref, Schedule } from "effect"
import { CliError } from "./commands"

/** The exit code for each outcome; 2 stays the usage error's. */
export const OUTCOME_EXIT: Readonly<Record<Outcome, number>> = { Succeeded: 0, Failed: 1, Expired: 3, Revoked: 4, Superseded: 5 }

type Step = NonNullable<NonNullable<NonNullable<RuntimeRollout["status"]>["steps"]>["items"]>[number]

/** `1h02m`, `4m05s`, `12s`. */
export const duration = (ms: number): string => {
  const s = Math.max(0, Math.floor(ms / 1000))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const pad = (n: number) => String(n).padStart(2, "0")
  if (h > 0) return `${h}h${pad(m)}m`
  if (m > 0) return `${m}m${pad(s % 60)}s`
  return `${s}s`
}

const at = (t: string | undefined) => (t === undefined ? Number.NaN : Date.parse(t))

/**
 * A finished step's duration: from its start to the next step's start (steps run one at a time, and the next is
 * written as soon as this one is ready), or for the last one to its completion / the steps' completion.
 */
const tookMs = (items: ReadonlyArray<Step>, i: number, completedAt: number): number => {
  const s = items[i]!
  const end = at(s.completedAt) || at(items[i + 1]?.startedAt) || completedAt
  return end - at(s.startedAt)
}

const progress = (done: number, total: number, width: number): string => {
  const filled = total === 0 ? 0 : Math.round((done / total) * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`
}

const conditionOf = (r: RuntimeRollout, type: string) => r.status?.conditions?.find((c) => c.type === type)

/** The whole screen for a rollout at `now`. */
export const frame = (r: RuntimeRollout, now: number, columns = 100): string => {
  const steps = r.status?.steps
  const items = steps?.items ?? []
  const total = steps?.total ?? r.spec.steps?.length ?? items.length
  const done = steps?.done ?? items.filter((s) => s.state === "Ready").length
  const outcome = r.metadata.labels?.[LABEL_OUTCOME]
  const progressing = conditionOf(r, "Progressing")
  const completedAt = progressing?.reason === "StepsCompleted" ? at(progressing.lastTransitionTime) : Number.NaN
  const approval = r.spec.approval ? `approved by ${r.spec.approval.approvedBy}` : r.spec.requiresApproval ? "awaiting approval" : "no approval needed"
  const lines = [
    `${r.metadata.name}  ${r.spec.kind}  ${approval}${outcome ? `  ended ${outcome}` : ""}`,
    `${progress(done, total, Math.max(10, Math.min(40, columns - 30)))}${steps?.current ? `  ${steps.current}` : ""}`,
  ]
  const width = Math.max(8, ...items.map((s) => s.release.length))
  for (const [i, s] of items.entries()) {
    const head = `${String(s.index).padStart(3)} ${s.release.padEnd(width)} ${s.action.padEnd(7)}`
    switch (s.state) {
      case "Ready": {
        const took = tookMs(items, i, completedAt)
        lines.push(`  ✓ ${head} ${Number.isNaN(took) ? "done" : duration(took)}`)
        break
      }
      case "Pending":
      case "Skipped":
        lines.push(`  · ${head}`)
        break
      case "Failed":
        lines.push(`  ✗ ${head} ${s.message ?? "failed"}`)
        break
      default: {
        const elapsed = now - at(s.startedAt)
        const deadline = at(s.deadline)
        const against = Number.isNaN(deadline) ? "" : ` of ${duration(deadline - at(s.startedAt))} (deadline ${s.deadline})`
        const what = s.state === "AwaitingAcknowledgement" ? " awaiting acknowledgement" : ""
        lines.push(`  ▶ ${head} ${Number.isNaN(elapsed) ? "starting" : duration(elapsed)}${against}${what}`)
      }
    }
  }
  const said = outcome !== undefined ? (conditionOf(r, "Ready") ?? progressing) : progressing
  if (said !== undefined) lines.push(`${said.type}: ${said.status} ${said.reason}: ${said.message}`)
  const v = r.status?.validation
  if (v?.result !== undefined || v?.runID !== undefined)
    lines.push(`validation: ${v.result ?? "running"}${v.runID ? ` (run ${v.runID})` : ""}${v.evidenceRef ? `, evidence ${v.evidenceRef}` : ""}`)
  // Each line cut to the terminal's width (a wrapped line would break the redraw), marked with an ellipsis.
  const fit = (text: string) => (text.length < columns ? text : `${text.slice(0, Math.max(39, columns - 2))}…`)
  return `${lines.map(fit).join("\n")}\n`
}

/** One line for a log (piped output): what changed is the step in flight, its state or the outcome. */
export const line = (r: RuntimeRollout): string => {
  const steps = r.status?.steps
  const current = steps?.items?.find((s) => s.state !== "Ready" && s.state !== "Pending" && s.state !== "Skipped")
  const outcome = r.metadata.labels?.[LABEL_OUTCOME]
  const progressing = conditionOf(r, "Progressing")
  if (outcome !== undefined)
    return `${r.metadata.name} ended ${outcome}: ${steps?.done ?? 0}/${steps?.total ?? 0} steps ready${progressing ? `; ${progressing.reason}: ${progressing.message}` : ""}`
  const where = current
    ? `${current.index}/${steps?.total ?? 0} ${current.release} (${current.action}) ${current.state}`
    : `${steps?.done ?? 0}/${steps?.total ?? 0} ready`
  return `${r.metadata.name} ${where}${progressing ? `; ${progressing.reason}` : ""}`
}

export interface Screen {
  readonly out: (text: string) => void
  /** A terminal: redraw in place, each second too. Else one line per change. */
  readonly tty: boolean
  readonly columns: number
  readonly now: () => number
}

/** Follows the rollout until it ends; the outcome's exit code. */
export const follow = (kube: KubeShape, name: string, screen: Screen): Effect.Effect<number, KubeError | CliError> =>
  Effect.gen(function* () {
    const first = yield* kube.list<RuntimeRollout>(RuntimeRolloutKind, { fieldSelector: `metadata.name=${name}` })
    const found = first.items[0]
    if (found === undefined) return yield* Effect.fail(new CliError(`runtimerollout "${name}" not found (kubectl get runtimerollouts lists them)`))
    const latest = yield* Ref.make(found)
    const version = yield* Ref.make(first.resourceVersion)
    const lastLine = yield* Ref.make("")
    const ended = yield* Deferred.make<Outcome>()
    const draw = Effect.gen(function* () {
      const r = yield* Ref.get(latest)
      if (screen.tty) {
        screen.out(`\x1b[H\x1b[2J${frame(r, screen.now(), screen.columns)}`)
      } else {
        const l = line(r)
        if (l !== (yield* Ref.getAndSet(lastLine, l))) screen.out(`${l}\n`)
      }
      const outcome = r.metadata.labels?.[LABEL_OUTCOME] as Outcome | undefined
      if (outcome !== undefined) yield* Deferred.succeed(ended, outcome)
    })
    yield* draw
    const watching = Effect.gen(function* () {
      yield* kube.watch<RuntimeRollout>(
        RuntimeRolloutKind,
        { fieldSelector: `metadata.name=${name}`, resourceVersion: yield* Ref.get(version), timeoutSeconds: 300 },
        (e) =>
          e.type === "BOOKMARK"
            ? Ref.set(version, e.resourceVersion)
            : e.type === "DELETED"
              ? Effect.sync(() => screen.out(`runtimerollout ${name} was deleted\n`)).pipe(Effect.andThen(Deferred.succeed(ended, "Failed")), Effect.asVoid)
              : Ref.set(latest, e.object).pipe(Effect.andThen(Ref.set(version, e.object.metadata.resourceVersion ?? "")), Effect.andThen(draw)),
      )
    }).pipe(
      // A clean end of the stream re-watches from the last version; a version too old relists.
      Effect.catchReason("KubeError", "Gone", () =>
        kube
          .list<RuntimeRollout>(RuntimeRolloutKind, { fieldSelector: `metadata.name=${name}` })
          .pipe(
            Effect.flatMap((l) =>
              Ref.set(version, l.resourceVersion).pipe(
                Effect.andThen(
                  Option.fromNullishOr(l.items[0]).pipe(
                    Option.match({ onNone: () => Effect.void, onSome: (r) => Ref.set(latest, r).pipe(Effect.andThen(draw)) }),
                  ),
                ),
              ),
            ),
          ),
      ),
      Effect.repeat(Schedule.forever),
    )
    // The outcome ends it; a failed watch (not Gone) fails it; on a terminal the clock redraws each second.
    const ticker = screen.tty ? draw.pipe(Effect.repeat(Schedule.spaced("1 second")), Effect.andThen(Effect.never)) : Effect.never
    const outcome = yield* Deferred.await(ended).pipe(Effect.raceFirst(watching.pipe(Effect.andThen(Effect.never))), Effect.raceFirst(ticker))
    return OUTCOME_EXIT[outcome]
  })
