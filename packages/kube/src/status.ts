/**
 * Status writes through a room (design/style.md §B.4): the SSA body is built *from the room*, never from whatever
 * the caller passed. A body outside the room is a bug and dies loudly (`RoomViolation` defect); it is never
 * silently trimmed. A write that would not change anything is skipped, because every write wakes every watcher.
 *
 * Gotchas:
 * - Every condition type of the room must be present: with server-side apply, omitting a condition you own
 *   deletes it, so a missing one is a bug in `report()`, not a request.
 * - The no-op check compares against the object you pass (usually the one read at the start of the reconcile).
 *   If the API server defaults fields inside your room, the values never match and every pass writes; keep rooms
 *   free of defaulted fields.
 */
import { apiVersionOf, type KubeObject, type Room } from "@aicr/api"
import { Effect } from "effect"
import type { KubeError } from "./errors"
import type { ApplyOptions, ApplyStatusResult, StatusWrite, WireCondition } from "./types"

/** A status write outside the writer's room. Raised as a defect: it is a programming error. */
export class RoomViolation extends Error {
  override readonly name = "RoomViolation"
  constructor(
    readonly room: Room,
    readonly detail: string,
  ) {
    super(`${room.controller} (${room.fieldManager}) tried to write outside its room on ${room.kind.kind}: ${detail}`)
  }
}

const dropUndefined = (o: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v
  return out
}

/** Structural equality with JSON semantics: key order does not matter, array order does, `undefined` keys are absent. */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as ReadonlyArray<unknown>
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]))
  }
  const ak = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined)
  const bk = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined)
  return ak.length === bk.length && ak.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

/**
 * Build the server-side-apply body for `room` on `obj`. Throws {@link RoomViolation} when the object is of another
 * kind, a status key is outside `room.statusKeys`, a condition type is outside `room.conditions`, a type repeats,
 * or an owned condition type is missing.
 */
export const buildStatusApply = (room: Room, obj: KubeObject, status: StatusWrite): KubeObject & { readonly status: Record<string, unknown> } => {
  const apiVersion = apiVersionOf(room.kind)
  if ((obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) || (obj.kind !== undefined && obj.kind !== room.kind.kind)) {
    throw new RoomViolation(room, `object is ${obj.apiVersion}/${obj.kind}, the room is on ${apiVersion}/${room.kind.kind}`)
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(status)) {
    if (key === "conditions" || value === undefined) continue
    if (!room.statusKeys.includes(key)) throw new RoomViolation(room, `status.${key} is not one of its status keys [${room.statusKeys.join(", ")}]`)
    out[key] = value
  }
  if (!Array.isArray(status.conditions)) throw new RoomViolation(room, "status.conditions must be an array (the complete owned set)")
  const seen = new Set<string>()
  const conditions: Array<Record<string, unknown>> = []
  for (const c of status.conditions as ReadonlyArray<WireCondition>) {
    if (!room.conditions.includes(c.type)) throw new RoomViolation(room, `condition ${c.type} is not one of its conditions [${room.conditions.join(", ")}]`)
    if (seen.has(c.type)) throw new RoomViolation(room, `condition ${c.type} appears twice`)
    seen.add(c.type)
    conditions.push(dropUndefined(c as unknown as Record<string, unknown>))
  }
  const missing = room.conditions.filter((t) => !seen.has(t))
  if (missing.length > 0) throw new RoomViolation(room, `owned condition(s) ${missing.join(", ")} missing: omitting an owned condition deletes it`)
  const { name, namespace } = obj.metadata
  return {
    apiVersion,
    kind: room.kind.kind,
    metadata: namespace ? { name, namespace } : { name },
    status: { conditions, ...out },
  }
}

const statusOf = (obj: KubeObject): Record<string, unknown> => (obj as unknown as { status?: Record<string, unknown> }).status ?? {}

/** True when `live` already carries exactly what `body` (from {@link buildStatusApply}) would write for `room`. */
export const statusUnchanged = (room: Room, live: KubeObject, body: { readonly status: Record<string, unknown> }): boolean => {
  const liveStatus = statusOf(live)
  const liveConditions = Array.isArray(liveStatus["conditions"]) ? (liveStatus["conditions"] as ReadonlyArray<Record<string, unknown>>) : []
  for (const c of body.status["conditions"] as ReadonlyArray<Record<string, unknown>>) {
    const l = liveConditions.find((x) => x["type"] === c["type"])
    if (l === undefined || !jsonEqual(l, c)) return false
  }
  for (const key of room.statusKeys) {
    if (!jsonEqual(liveStatus[key], body.status[key])) return false
  }
  return true
}

/** `value` with every `message` key removed, at any depth, and the dotted paths in `also` (e.g. `engine.applications`). */
const withoutMessages = (value: unknown, also: ReadonlyArray<string> = [], path = ""): unknown => {
  if (Array.isArray(value)) return value.map((v) => withoutMessages(v, also, path))
  if (typeof value !== "object" || value === null) return value
  const at = (k: string) => (path === "" ? k : `${path}.${k}`)
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "message" && !also.includes(at(k)))
      .map(([k, v]) => [k, withoutMessages(v, also, at(k))]),
  )
}

/**
 * True when applying `status` for `room` on `live` would change nothing but `message` texts (the conditions' and
 * any under the room's status keys) and the informational fields named in `also` (dotted paths under `status`, e.g.
 * `engine.applications`): a rewrite a controller may defer (`@aicr/runtime`'s status pacer). False when nothing would
 * change at all, and when anything else would (a status, a reason, a state).
 */
export const onlyMessagesChange = (room: Room, live: KubeObject, status: StatusWrite, also: ReadonlyArray<string> = []): boolean => {
  const body = buildStatusApply(room, live, status)
  if (statusUnchanged(room, live, body)) return false
  const bare = { ...live, status: withoutMessages(statusOf(live), also) } as KubeObject
  return statusUnchanged(room, bare, { status: withoutMessages(body.status, also) as Record<string, unknown> })
}

type ApplyFn = <T extends KubeObject>(kind: Room["kind"], obj: unknown, options: ApplyOptions) => Effect.Effect<T, KubeError>

/**
 * `applyStatus` over any `apply` (the real client and FakeKube share it): validate against the room, skip no-ops,
 * else server-side apply `status` with the room's field manager and `force: false`.
 */
export const makeApplyStatus =
  (apply: ApplyFn) =>
  <T extends KubeObject>(room: Room, obj: T, status: StatusWrite): Effect.Effect<ApplyStatusResult<T>, KubeError> =>
    Effect.suspend((): Effect.Effect<ApplyStatusResult<T>, KubeError> => {
      let body: ReturnType<typeof buildStatusApply>
      try {
        body = buildStatusApply(room, obj, status)
      } catch (e) {
        return Effect.die(e)
      }
      if (statusUnchanged(room, obj, body)) {
        return Effect.logDebug("Status unchanged, skipping write").pipe(Effect.as({ applied: false, object: obj }))
      }
      return apply<T>(room.kind, body, { fieldManager: room.fieldManager, force: false, subresource: "status" }).pipe(
        Effect.map((object) => ({ applied: true, object })),
      )
    })
