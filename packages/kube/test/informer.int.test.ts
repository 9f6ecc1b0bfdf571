// An informer against a kube-apiserver that is killed (SIGKILL) and restarted mid-watch on the same port: objects
// created and deleted during the outage show up and vanish in the cache once it is back (architecture.md §6).
import type { KubeObject, ResourceKind } from "@aicr/api"
import { makeInformer, makeKube, Kube, type InformerEvent } from "../src/index"
import { applyManifests, kubeRequest, startApiServer, type ApiServer } from "@aicr/testing/harness"
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
    const widget = (name: string) =>
      ({ apiVersion: "test.aicr.run/v1", kind: "Widget", metadata: { name: `${label}-${name}`, labels: { test: label } } }) as KubeObject

    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* writer.create(WidgetKind, widget("a"))
          yield* writer.create(WidgetKind, widget("b"))
          const events: Array<string> = []
          const informer = yield* makeInformer<KubeObject>({
            kind: WidgetKind,
            labelSelector: `test=${label}`,
            backoff: { initial: "200 millis", max: "2 seconds" },
          })
          yield* informer.subscribe((e: InformerEvent<KubeObject>) =>
            Effect.sync(() => void events.push(`${e.type} ${e.object.metadata.name.slice(label.length + 1)}`)),
          )
          yield* informer.awaitSynced
          const names = () =>
            informer
              .list()
              .map((o) => o.metadata.name.slice(label.length + 1))
              .sort()
              .join(",")
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
        }).pipe(Effect.provide(watched)),
      ),
    )
  }, 180_000)
})

describe("an informer of a kind whose CRD is not installed yet", () => {
  it("counts as synced and empty, lists nothing more until retryWhen lets it, then lists the kind once its CRD is there", async () => {
    const group = `${unique("g")}.aicr.run`
    const kind: ResourceKind = { group, version: "v1", kind: "Gadget", plural: "gadgets", namespaced: false }
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `gadgets.${group}` },
      spec: {
        group,
        scope: "Cluster",
        names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
      },
    }
    const { kube, requests } = liveKube(info)
    let installed = false
    const lists = () => requests.filter((r) => r.method === "GET" && r.path.startsWith(`/apis/${group}/v1/gadgets`) && !r.path.includes("watch=")).length
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const informer = yield* makeInformer<KubeObject>({
              kind,
              tolerate: (e) => e.reason._tag === "NotFound",
              retryWhen: () => waitFor("the CRD installed", () => installed, 120_000),
            })
            yield* informer.awaitSynced
            expect(informer.listError()?.reason._tag).toBe("NotFound")
            // The backoff alone (1 s, doubling) would have listed again within these 4 s.
            yield* Effect.sleep(4_000)
            expect(lists()).toBe(1)
            yield* Effect.promise(() => applyManifests(info, [crd]))
            const { kube: writer } = liveKube(info)
            yield* Effect.gen(function* () {
              for (;;) {
                const created = yield* Effect.result(
                  writer.create(kind, { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "one" } } as KubeObject),
                )
                if (created._tag === "Success") return
                yield* Effect.sleep(200)
              }
            })
            installed = true
            yield* waitFor("the gadget in the cache", () => informer.list().length === 1)
            expect(informer.listError()).toBeUndefined()
          }).pipe(Effect.provide(Layer.succeed(Kube)(kube))),
        ),
      )
    } finally {
      await kubeRequest(info, { method: "DELETE", path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}` })
    }
  }, 180_000)
})
