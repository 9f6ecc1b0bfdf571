/**
 * Writes that happen at most once for the state they were decided on, whatever the cache showed: the API server
 * refuses the repeat, so no timing makes it land twice (ADR 20261203-informer-caches, "Writes guarded by the API
 * server").
 *
 * - decided on an absent object → `create` (POST): a second create, from a process whose cache had not seen the
 *   first one land (a predecessor killed with its write in flight), fails `AlreadyExists`;
 * - decided on the object at resourceVersion R → server-side apply carrying `metadata.resourceVersion: R`: the API
 *   server applies only while the object is still at R, so a write decided on a stale view fails `Conflict`.
 *
 * Server-side apply cannot create conditionally (a resourceVersion in an apply that creates is ignored), hence the
 * POST. A POST records its fields under the manager's `Update` entry, which a later apply by the same manager name
 * conflicts with (the API server keeps `Apply` and `Update` entries apart); a conflict with nobody but our own name is
 * that entry, so the apply is sent again with force, still at R: the fields move to our `Apply` entry and another
 * manager's field is still a `FieldManagerConflict`.
 */
import type { KubeObject, ResourceKind } from "@aicr/api"
import { Effect } from "effect"
import type { KubeError } from "./errors"
import type { KubeShape } from "./kube"

/** What the decision saw of the object: nothing (absent), or its resourceVersion. */
export type Seen = { readonly resourceVersion: string } | undefined

/** The managers a `FieldManagerConflict` names (`conflict with "m" using v1`, one or more per cause). */
export const conflictingManagers = (e: KubeError): ReadonlyArray<string> =>
  e.reason._tag !== "FieldManagerConflict"
    ? []
    : [
        ...new Set(
          e.reason.causes.flatMap((c) =>
            [...(/^conflict with ((?:"[^"]*"(?:, )?)+)/u.exec(c.message ?? "")?.[1] ?? "").matchAll(/"([^"]*)"/gu)].map((m) => m[1]!),
          ),
        ),
      ]

/** A `FieldManagerConflict` with nobody but `manager` (its own `Update` entry, left by a create). */
const onlyWithSelf = (e: KubeError, manager: string) => {
  const managers = conflictingManagers(e)
  return managers.length > 0 && managers.every((m) => m === manager)
}

/**
 * Writes `obj` as decided on `seen` (see above): created when absent, else applied at `seen.resourceVersion`.
 * Fails `AlreadyExists` / `Conflict` when the object moved since; the caller decides again from its cache.
 */
export const writeAsDecided = <T extends KubeObject>(
  kube: KubeShape,
  kind: ResourceKind,
  obj: T,
  seen: Seen,
  options: { readonly fieldManager: string },
): Effect.Effect<T, KubeError> => {
  if (seen === undefined) return kube.create(kind, obj, { fieldManager: options.fieldManager })
  const at = { ...obj, metadata: { ...obj.metadata, resourceVersion: seen.resourceVersion } }
  return kube.apply<T>(kind, at, { fieldManager: options.fieldManager }).pipe(
    Effect.catchIf(
      (e) => onlyWithSelf(e, options.fieldManager),
      () => kube.apply<T>(kind, at, { fieldManager: options.fieldManager, force: true }),
    ),
  )
}
