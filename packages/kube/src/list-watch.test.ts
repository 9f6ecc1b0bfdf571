import type { KubeObject } from "@aicr/api"
import { Core } from "@aicr/api"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeKubeFromTransport } from "./live"
import type { RequestSpec, Transport } from "./transport"

const node = (name: string) => ({ metadata: { name, resourceVersion: "1", managedFields: [{ manager: "kubelet" }] }, status: { images: ["a", "b"] } })

/** A transport that answers a list of Nodes in two pages and records every request and projection in order. */
const twoPages = (log: Array<string>): Transport => ({
  request: (spec: RequestSpec) =>
    Effect.sync(() => {
      const second = spec.path.includes("continue=next")
      log.push(`GET page ${second ? 2 : 1}`)
      return second
        ? { items: [node("c")], metadata: { resourceVersion: "9" } }
        : { items: [node("a"), node("b")], metadata: { resourceVersion: "8", continue: "next" } }
    }),
  stream: () => Effect.void,
})

describe("list", () => {
  it("projects each page's items before it asks for the next page", async () => {
    const log: Array<string> = []
    const kube = makeKubeFromTransport(twoPages(log))
    const listed = await Effect.runPromise(
      kube.list(Core.Node, {
        transform: (o: KubeObject) => {
          log.push(`project ${o.metadata.name}`)
          return { apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, resourceVersion: o.metadata.resourceVersion } }
        },
      }),
    )
    expect(log).toEqual(["GET page 1", "project a", "project b", "GET page 2", "project c"])
    expect(listed.items).toEqual(["a", "b", "c"].map((name) => ({ apiVersion: "v1", kind: "Node", metadata: { name, resourceVersion: "1" } })))
    expect(listed.resourceVersion).toBe("9")
  })

  it("keeps whole items, with their type meta, without a transform", async () => {
    const listed = await Effect.runPromise(makeKubeFromTransport(twoPages([])).list(Core.Node))
    expect(listed.items[0]).toEqual({ apiVersion: "v1", kind: "Node", ...node("a") })
  })
})

describe("watch", () => {
  it("projects each event's object as its line is decoded, before the event is handled", async () => {
    const log: Array<string> = []
    const lines = [
      { type: "ADDED", object: node("a") },
      { type: "BOOKMARK", object: { metadata: { resourceVersion: "7" } } },
      { type: "MODIFIED", object: node("a") },
    ]
    const transport: Transport = {
      request: () => Effect.die("no request"),
      // As the real transport: every line is decoded (and projected) as it arrives, then handed on in order.
      stream: (_path, onLine, project) => {
        const queued = lines.map((l) => (project === undefined ? l : project(l)))
        log.push("decoded")
        return Effect.forEach(queued, onLine, { discard: true })
      },
    }
    const seen: Array<unknown> = []
    await Effect.runPromise(
      makeKubeFromTransport(transport).watch(
        Core.Node,
        {
          resourceVersion: "1",
          transform: (o: KubeObject) => {
            log.push(`project ${o.metadata.name}`)
            return { apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name } }
          },
        },
        (e) => Effect.sync(() => void seen.push(e)),
      ),
    )
    expect(log).toEqual(["project a", "project a", "decoded"])
    expect(seen).toEqual([
      { type: "ADDED", object: { apiVersion: "v1", kind: "Node", metadata: { name: "a" } } },
      { type: "BOOKMARK", resourceVersion: "7" },
      { type: "MODIFIED", object: { apiVersion: "v1", kind: "Node", metadata: { name: "a" } } },
    ])
  })
})
