/**
 * Expectations: after a write, do not act on what the cache shows until the cache has seen that write (Kubernetes'
 * ReplicaSet controller does the same with its ControllerExpectations). A reconcile that reads from informer caches
 * would otherwise see the world as it was before its own last write and could write again.
 *
 * - `written(informer, obj)`: `obj` is what the API server returned for the write. Met once the informer has
 *   delivered every event up to that resourceVersion: its resourceVersion (last event, bookmark or list) is at least
 *   the written one, or the cached object carries exactly it. The API server's resourceVersions are etcd revisions,
 *   decimal integers that only grow for one resource's watch; when either is not a decimal integer only the exact
 *   match counts (ADR 20261203-informer-caches).
 * - `deleted(informer, key, uid)`: met once the cache no longer holds that object (or holds it with a
 *   deletionTimestamp: deletion started, finalizers pending), or holds another one with the same name.
 * - an expectation not met within `ttl` (default 5 minutes, as the ReplicaSet controller) is dropped with a warning:
 *   a lost watch event must not stop the controller for good; the informer's watchdog relists long before.
 *
 * State lives in memory only. A restarted process has none and needs none: its informers start with a fresh list,
 * which holds every write the old process made.
 */
import type { KubeObject, ObjectKey } from "@aicr/api"
import type { Informer } from "@aicr/kube"
import { Clock, Context, Duration, Effect } from "effect"

interface Expected {
  readonly what: string
  readonly since: number
  readonly met: () => boolean
}

export interface ExpectationsShape {
  /** Expect the cache to show `written` (the API server's answer to a write) before the next decision. */
  readonly written: <T extends KubeObject>(informer: Informer<T>, written: KubeObject) => Effect.Effect<void>
  /** Expect the cache to show the deletion of `key` (with `uid`, when known). */
  readonly deleted: <T extends KubeObject>(informer: Informer<T>, key: ObjectKey, uid?: string | undefined) => Effect.Effect<void>
  /** What the caches have not seen yet; met and expired expectations are dropped. Empty: safe to decide. */
  readonly pending: Effect.Effect<ReadonlyArray<string>>
}

/** One process's expectations, shared by its reconciles. */
export class Expectations extends Context.Service<Expectations, ExpectationsShape>()("@aicr/runtime/Expectations") {}

const DECIMAL = /^\d+$/u

/** Whether resourceVersion `seen` is at or after `wanted` (exact match when either is not an etcd revision). */
export const reached = (seen: string, wanted: string): boolean => {
  if (seen === wanted) return true
  if (!DECIMAL.test(seen) || !DECIMAL.test(wanted)) return false
  return seen.length !== wanted.length ? seen.length > wanted.length : seen > wanted
}

export const makeExpectations = (options: { readonly ttl?: Duration.Input | undefined } = {}): ExpectationsShape => {
  const ttlMs = Duration.toMillis(options.ttl ?? "5 minutes")
  const expected = new Map<string, Expected>()

  const put = (id: string, what: string, met: () => boolean) => Clock.currentTimeMillis.pipe(Effect.map((since) => void expected.set(id, { what, since, met })))

  return {
    written: (informer, obj) => {
      const key = obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name
      const rv = obj.metadata.resourceVersion
      if (rv === undefined || rv === "") return Effect.void
      const met = () => {
        if (reached(informer.resourceVersion(), rv)) return true
        const cached = informer.get(key)
        return cached._tag === "Some" && reached(cached.value.metadata.resourceVersion ?? "", rv)
      }
      return put(`${informer.kind.kind}/${key}`, `${informer.kind.kind} ${key} at resourceVersion ${rv}`, met)
    },
    deleted: (informer, key, uid) => {
      const met = () => {
        const cached = informer.get(key)
        if (cached._tag === "None") return true
        const m = cached.value.metadata
        return m.deletionTimestamp !== undefined || (uid !== undefined && m.uid !== uid)
      }
      return put(`${informer.kind.kind}/${key}`, `${informer.kind.kind} ${key} deleted`, met)
    },
    pending: Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const left: string[] = []
      for (const [id, e] of expected) {
        if (e.met()) expected.delete(id)
        else if (now - e.since >= ttlMs) {
          expected.delete(id)
          yield* Effect.logWarning("The cache did not show a write within the expectation timeout; deciding without it", { expected: e.what, ttlMs })
        } else left.push(e.what)
      }
      return left
    }),
  }
}
