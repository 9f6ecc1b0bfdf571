// An informer against a kube-apiserver that is killed (SIGKILL) and restarted mid-watch on the same port: objects
// created and deleted during the outage show up and vanish in the cache once it is back (architecture.md §6).
import type { KubeObject } from "@aicr/api"
import { makeInformer, makeKube, Kube, type InformerEvent } from "../src/index"
import { startApiServer, type ApiServer } from "@aicr/testing/harness"
import { WidgetKind } from "@aicr/testing"
import { Effect, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { installWidgetCrd, liveKube, unique, writeKubeconfig } from "./support"

const info = inject("harness")

const waitFor = (what: string, cond: () => boolean, timeoutMs = 60_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    while (!cond()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(100)
    }
  })

describe("informer against a restarted kube-apiserver", () => {
  let api: ApiServer | undefined
  beforeAll(() => installWidgetCrd(info))
  afterAll(async () => api?.stop())

  it("converges after the apiserver it watches is killed and restarted mid-watch", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-apiserver-2-"))
    api = await startApiServer({ etcd: info.etcd, dir, name: "kube-apiserver-2" })
    const kubeconfig = writeKubeconfig(api.url, api.caFile, api.users["admin"]!.token)
    const watched = Layer.succeed(Kube)(makeKube({ kubeconfigPath: kubeconfig, requestTimeoutMs: 5_000 }))
    const { kube: writer } = liveKube(info) // writes go through the harness's own apiserver, which stays up
    const label = unique("inf")
    const widget = (name: string) => ({ apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name: `${label}-${name}`, labels: { test: label } } }) as KubeObject

    await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      yield* writer.create(WidgetKind, widget("a"))
      yield* writer.create(WidgetKind, widget("b"))
      const events: Array<string> = []
      const informer = yield* makeInformer<KubeObject>({ kind: WidgetKind, labelSelector: `test=${label}`, backoff: { initial: "200 millis", max: "2 seconds" } })
      yield* informer.subscribe((e: InformerEvent<KubeObject>) => Effect.sync(() => void events.push(`${e.type} ${e.object.metadata.name.slice(label.length + 1)}`)))
      yield* informer.awaitSynced
      const names = () => informer.list().map((o) => o.metadata.name.slice(label.length + 1)).sort().join(",")
      expect(names()).toBe("a,b")

      // The watch is live: an event arrives through it.
      yield* writer.create(WidgetKind, widget("c"))
      yield* waitFor("c via the watch", () => names() === "a,b,c")
      const listsBefore = informer.listCount()

      // Kill the apiserver the informer watches; change things while it is down.
      api!.kill("SIGKILL")
      yield* Effect.promise(() => api!.proc.exited)
      yield* writer.create(WidgetKind, widget("d"))
      yield* writer.delete(WidgetKind, `${label}-b`)
      yield* Effect.sleep(3_000)
      expect(names()).toBe("a,b,c") // nothing to see while it is down

      api = yield* Effect.promise(() => startApiServer({ etcd: info.etcd, dir, port: api!.port, name: "kube-apiserver-2" }))
      yield* waitFor("the cache to converge after the restart", () => names() === "a,c,d")
      expect(informer.listCount()).toBeGreaterThan(listsBefore)
      expect(events).toEqual(expect.arrayContaining(["add d", "delete b"]))

      // And the new watch delivers again.
      yield* writer.create(WidgetKind, widget("e"))
      yield* waitFor("e via the new watch", () => names() === "a,c,d,e")
    }).pipe(Effect.provide(watched))))
  }, 180_000)
})
