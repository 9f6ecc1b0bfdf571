// Expectations against a hand-driven informer: met by the informer's resourceVersion or the cached object's, by a
// deletion seen, never before; dropped after the timeout.
import type { KubeObject } from "@aicr/api"
import type { Informer } from "@aicr/kube"
import { it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeExpectations, reached } from "./expectations"

const obj = (name: string, rv: string, extra: Partial<KubeObject["metadata"]> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion: rv, uid: `uid-${name}`, ...extra },
})

const informer = () => {
  const cache = new Map<string, KubeObject>()
  let rv = "100"
  const i: Informer<KubeObject> = {
    kind: { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
    get: (key) => Option.fromNullishOr(cache.get(key)),
    list: () => [...cache.values()],
    hasSynced: () => true,
    awaitSynced: Effect.void,
    subscribe: () => Effect.void,
    resourceVersion: () => rv,
    listCount: () => 1,
    listError: () => undefined,
    scope: {},
  }
  return {
    i,
    see: (o: KubeObject) => void (cache.set(`${o.metadata.namespace}/${o.metadata.name}`, o), (rv = o.metadata.resourceVersion!)),
    drop: (key: string) => void cache.delete(key),
    bookmark: (v: string) => void (rv = v),
  }
}

describe("expectations", () => {
  it("compares etcd revisions as numbers and anything else only exactly", () => {
    expect(reached("10", "9")).toBe(true)
    expect(reached("9", "10")).toBe(false)
    expect(reached("123", "123")).toBe(true)
    expect(reached("abc", "abd")).toBe(false)
    expect(reached("abc", "abc")).toBe(true)
    expect(reached("", "5")).toBe(false)
  })

  it.effect("a write is pending until the informer delivered its resourceVersion, by the event or a later bookmark", () =>
    Effect.gen(function* () {
      const e = makeExpectations()
      const c = informer()
      yield* e.written(c.i, obj("a", "105"))
      expect(yield* e.pending).toEqual(["ConfigMap ns/a at resourceVersion 105"])
      c.see(obj("b", "104"))
      expect(yield* e.pending).toHaveLength(1)
      c.see(obj("a", "105"))
      expect(yield* e.pending).toEqual([])
      yield* e.written(c.i, obj("z", "200"))
      c.bookmark("201")
      expect(yield* e.pending).toEqual([])
    }),
  )

  it.effect("a delete is pending until the object is gone, being deleted, or replaced by another uid", () =>
    Effect.gen(function* () {
      const e = makeExpectations()
      const c = informer()
      c.see(obj("a", "101"))
      yield* e.deleted(c.i, "ns/a", "uid-a")
      expect(yield* e.pending).toEqual(["ConfigMap ns/a deleted"])
      c.see(obj("a", "102", { deletionTimestamp: "2026-12-02T10:00:00Z" }))
      expect(yield* e.pending).toEqual([])
      c.see(obj("b", "103"))
      yield* e.deleted(c.i, "ns/b", "uid-b")
      c.see(obj("b", "104", { uid: "another" }))
      expect(yield* e.pending).toEqual([])
      c.see(obj("d", "105"))
      yield* e.deleted(c.i, "ns/d", "uid-d")
      c.drop("ns/d")
      expect(yield* e.pending).toEqual([])
    }),
  )

  it.effect("an expectation the cache never meets is dropped after the timeout (5 minutes by default)", () =>
    Effect.gen(function* () {
      const e = makeExpectations()
      const c = informer()
      yield* e.written(c.i, obj("a", "500"))
      yield* TestClock.adjust("4 minutes")
      expect(yield* e.pending).toHaveLength(1)
      yield* TestClock.adjust("1 minute")
      expect(yield* e.pending).toEqual([])
    }),
  )
})
