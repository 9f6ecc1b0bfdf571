/**
 * verify: the recorded mirror against the registry as it is now (ADR 20261203-moved-tags). A registry has no watch,
 * so once `status.mirror` records a complete mirror, the controller asks the registry what each recorded tag holds
 * (one manifest HEAD per tag): on its first pass after start, then at most every `--verify-interval`, and on every
 * pass while the last check found a tag moved or gone.
 *
 * - every tag holds the digest recorded → intact, nothing to do;
 * - a tag holds another digest (someone pushed over it; ECR tags are mutable under the seed's creation template) →
 *   `Mirrored=False/Conflict` naming the release, the tag and both digests. The mirror does not push its content
 *   back: it never overwrites a tag. Deployed releases do not change (Argo CD pulls by digest), but no new plan is
 *   composed from this mirror until the tag holds the recorded digest again (the message gives the `oras tag`
 *   command that restores it);
 * - a tag is gone → the mirror is pushed again from the resolution, as a first mirror would (no overwrite).
 *
 * Pure except `LastVerification` (the process's memory of its last check, a cache: lost on restart, which makes the
 * first pass after a start check again).
 */
import { shortDigest } from "@aicr/conditions"
import { Context, Effect, Ref } from "effect"
import { Registry } from "./act"
import { ConflictError, type MirrorError } from "./errors"
import type { MirrorStatus } from "./gather"

/** One tag the mirror recorded: `status.mirror.charts[]` (key = release) or the bundle (key `bundle`). */
export interface RecordedTag {
  readonly key: string
  /** `host/repository:tag` */
  readonly reference: string
  readonly digest: string
}

/** What the registry answered for one recorded tag: the digest it holds now, or undefined when the tag is gone. */
export interface TagFound {
  readonly reference: string
  readonly digest: string | undefined
}

export type Verification =
  | { readonly _tag: "NotChecked" }
  | { readonly _tag: "Intact"; readonly checked: number }
  | { readonly _tag: "Moved"; readonly moved: ReadonlyArray<RecordedTag & { readonly found: string }> }
  | { readonly _tag: "Missing"; readonly missing: ReadonlyArray<RecordedTag> }
  /** The registry did not answer (down, refused credentials): reported like a failed mirror, checked again. */
  | { readonly _tag: "Unanswered"; readonly error: MirrorError }

const REF = /^(?<reference>[^@\s]+:[\w][\w.-]{0,127})@(?<digest>sha256:[a-f0-9]{64})$/u

/** The tags `status.mirror` records, charts sorted by key then the bundle. Refs not of the form `host/repo:tag@digest` are skipped. */
export const recordedTags = (m: MirrorStatus): RecordedTag[] => {
  const out: RecordedTag[] = []
  const add = (key: string, ref: string | undefined) => {
    const g = ref === undefined ? undefined : REF.exec(ref)?.groups
    if (g !== undefined) out.push({ key, reference: g["reference"]!, digest: g["digest"]! })
  }
  for (const c of [...(m.charts ?? [])].sort((a, b) => (a.release < b.release ? -1 : a.release > b.release ? 1 : 0))) add(c.release, c.ref)
  add("bundle", m.bundle)
  return out
}

/** Compares what was recorded with what the registry holds. A moved tag outranks a missing one (it needs a human). */
export const verdictOf = (recorded: ReadonlyArray<RecordedTag>, found: ReadonlyArray<TagFound>): Verification => {
  const now = new Map(found.map((f) => [f.reference, f.digest]))
  const moved: Array<RecordedTag & { found: string }> = []
  const missing: RecordedTag[] = []
  for (const r of recorded) {
    const d = now.get(r.reference)
    if (d === undefined) missing.push(r)
    else if (d !== r.digest) moved.push({ ...r, found: d })
  }
  if (moved.length > 0) return { _tag: "Moved", moved }
  if (missing.length > 0) return { _tag: "Missing", missing }
  return { _tag: "Intact", checked: recorded.length }
}

const tagOf = (reference: string) => reference.slice(reference.lastIndexOf(":") + 1)
const repositoryOf = (reference: string) => reference.slice(0, reference.lastIndexOf(":"))

/** `Mirrored=False/Conflict`: which release, which tag, the digest recorded and the one found, and how to restore it. */
export const movedTagError = (moved: Extract<Verification, { _tag: "Moved" }>["moved"], inputDigest: string): ConflictError => {
  const first = moved[0]!
  const what = first.key === "bundle" ? "The bundle's tag" : `Release ${first.key}: tag`
  const more =
    moved.length > 1
      ? ` (and ${moved.length - 1} more: ${moved
          .slice(1)
          .map((m) => m.key)
          .join(", ")})`
      : ""
  return new ConflictError({
    reference: first.reference,
    existing: first.found,
    wanted: first.digest,
    message:
      `${what} ${first.reference} now holds ${first.found}, not ${first.digest} as mirrored for input ${shortDigest(inputDigest)}${more}; ` +
      `deployed releases stay at the recorded digest, but no new plan is composed until the tag holds it again; ` +
      `the mirror never overwrites a tag: find who pushed it, then restore it with oras tag ${repositoryOf(first.reference)}@${first.digest} ${tagOf(first.reference)}`,
  })
}

interface Last {
  readonly inputDigest: string
  readonly at: number
  readonly intact: boolean
}

/** The process's last check: when, of which input, and whether it found the mirror intact. */
export class LastVerification extends Context.Service<LastVerification, Ref.Ref<Last | undefined>>()("@aicr/registry-mirror/LastVerification") {
  /** A fresh memory: nothing checked yet. */
  static readonly make: Effect.Effect<Ref.Ref<Last | undefined>> = Ref.make<Last | undefined>(undefined)
}

/** True when the recorded mirror of `inputDigest` should be checked now. */
export const verificationDue = (last: Last | undefined, inputDigest: string, now: number, intervalMs: number): boolean =>
  last === undefined || last.inputDigest !== inputDigest || !last.intact || now - last.at >= intervalMs

/** Remembers that the mirror of `inputDigest` was found (or just pushed) intact, or not. */
export const remember = (inputDigest: string, now: number, intact: boolean): Effect.Effect<void, never, LastVerification> =>
  Effect.flatMap(LastVerification, (ref) => Ref.set(ref, { inputDigest, at: now, intact }))

/**
 * Checks the recorded mirror of `inputDigest` when due (else `NotChecked`), and remembers the answer. A check the
 * registry did not answer is not remembered: the next pass checks again.
 */
export const verifyMirror = (
  mirror: MirrorStatus,
  inputDigest: string,
  now: number,
  intervalMs: number,
): Effect.Effect<Verification, never, Registry | LastVerification> =>
  Effect.gen(function* () {
    const last = yield* Ref.get(yield* LastVerification)
    if (!verificationDue(last, inputDigest, now, intervalMs)) return { _tag: "NotChecked" } satisfies Verification as Verification
    const recorded = recordedTags(mirror)
    const registry = yield* Registry
    const answer = yield* Effect.result(registry.resolveTags(recorded.map((r) => r.reference)))
    if (answer._tag === "Failure") return { _tag: "Unanswered", error: answer.failure } satisfies Verification as Verification
    const verdict = verdictOf(recorded, answer.success)
    yield* remember(inputDigest, now, verdict._tag === "Intact")
    yield* Effect.logDebug("Checked the recorded mirror", { inputDigest, verdict: verdict._tag, tags: recorded.length })
    return verdict
  })
