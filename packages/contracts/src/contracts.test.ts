/**
 * Workspace contract tests (design/style.md §B.4.3): the rooms of the seven controllers are disjoint, every input
 * has exactly one writer, and the API's condition owners and status rooms agree with the contracts.
 */
import { ClusterRuntimeKind, conditionsOf, kindKey, OUR_KINDS, RuntimeRolloutKind, statusRoomsOf } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { CONTRACTS } from "./index"
import { CONTROLLERS, type Contract } from "./contract"

const writesOf = (pick: (c: Contract, kind: string) => ReadonlyArray<string>) =>
  CONTRACTS.flatMap((c) => c.writes.flatMap((w) => pick(c, kindKey(w.kind)).map((what) => ({ controller: c.controller, key: `${kindKey(w.kind)} ${what}` }))))
const conditionWrites = writesOf((c, kind) => c.writes.filter((w) => kindKey(w.kind) === kind).flatMap((w) => w.conditions.map((d) => d.type)))
const roomWrites = writesOf((c, kind) => c.writes.filter((w) => kindKey(w.kind) === kind).flatMap((w) => w.statusKeys))
const writersOf = (list: ReadonlyArray<{ controller: string; key: string }>, key: string) => list.filter((x) => x.key === key).map((x) => x.controller)
const duplicates = (list: ReadonlyArray<{ controller: string; key: string }>) =>
  [...new Set(list.map((x) => x.key))].filter((k) => writersOf(list, k).length > 1).map((k) => `${k}: ${writersOf(list, k).join(", ")}`)

describe("the seven contracts", () => {
  it("cover exactly the controllers of architecture.md, once each", () => {
    expect(CONTRACTS.map((c) => c.controller).sort()).toEqual([...CONTROLLERS].sort())
  })

  it("use unique field managers named aicr-<controller>", () => {
    const managers = CONTRACTS.map((c) => c.fieldManager)
    expect(new Set(managers).size).toBe(managers.length)
    for (const c of CONTRACTS) expect(c.fieldManager).toBe(`aicr-${c.controller}`)
  })

  it("never let two controllers write the same condition type on the same kind", () => {
    expect(duplicates(conditionWrites)).toEqual([])
  })

  it("never let two controllers write the same status key on the same kind", () => {
    expect(duplicates(roomWrites)).toEqual([])
  })

  it("give every condition a contract reads exactly one writer", () => {
    const problems = CONTRACTS.flatMap((c) =>
      c.reads.conditions.flatMap((d) => {
        const writers = conditionWrites.filter((x) => x.key.endsWith(` ${d.type}`)).map((x) => x.controller)
        return writers.length === 1 ? [] : [`${c.controller} reads ${d.type}, written by [${writers.join(", ")}]`]
      }),
    )
    expect(problems).toEqual([])
  })

  it("never read a condition the controller writes itself", () => {
    for (const c of CONTRACTS) {
      const own = new Set(c.writes.flatMap((w) => w.conditions.map((d) => d.type)))
      expect(
        c.reads.conditions.filter((d) => own.has(d.type)).map((d) => d.type),
        c.controller,
      ).toEqual([])
    }
  })
})

describe("the API agrees with the contracts", () => {
  it.each(OUR_KINDS.map((k) => [k.kind, k] as const))("every %s condition type is written by the contract its ConditionDef names", (_, kind) => {
    for (const def of conditionsOf(kind)) {
      expect(writersOf(conditionWrites, `${kindKey(kind)} ${def.type}`), def.type).toEqual([def.owner])
    }
  })

  it("every condition a contract writes belongs to that kind's catalog and names that contract as owner", () => {
    for (const c of CONTRACTS) {
      for (const w of c.writes) {
        const catalog = new Set(conditionsOf(w.kind).map((d) => d.type))
        for (const d of w.conditions) {
          expect(catalog.has(d.type), `${c.controller} writes ${d.type} on ${w.kind.kind}`).toBe(true)
          expect(d.owner, `${d.type} owner`).toBe(c.controller)
        }
      }
    }
  })

  it.each(OUR_KINDS.map((k) => [k.kind, k] as const))("every status room of %s in the schema has exactly one writer", (_, kind) => {
    for (const room of statusRoomsOf(kind)) expect(writersOf(roomWrites, `${kindKey(kind)} ${room}`), room).toHaveLength(1)
  })

  it("every status key a contract writes exists in the kind's schema", () => {
    for (const c of CONTRACTS) {
      for (const w of c.writes) for (const k of w.statusKeys) expect(statusRoomsOf(w.kind), `${c.controller}: ${w.kind.kind}.status.${k}`).toContain(k)
    }
  })

  it.each([
    { room: "ClusterRuntime status.discovery and status.resolution", kind: ClusterRuntimeKind, keys: ["discovery", "resolution"], want: "resolver" },
    { room: "ClusterRuntime status.mirror", kind: ClusterRuntimeKind, keys: ["mirror"], want: "registry-mirror" },
    { room: "ClusterRuntime status.plans", kind: ClusterRuntimeKind, keys: ["plans"], want: "planner" },
    { room: "ClusterRuntime status.engine", kind: ClusterRuntimeKind, keys: ["engine"], want: "step-executor" },
    { room: "ClusterRuntime status.credentials", kind: ClusterRuntimeKind, keys: ["credentials"], want: "ecr-credential-refresher" },
    { room: "RuntimeRollout status.approval", kind: RuntimeRolloutKind, keys: ["approval"], want: "approval-guard" },
    { room: "RuntimeRollout status.steps", kind: RuntimeRolloutKind, keys: ["steps"], want: "step-executor" },
    { room: "RuntimeRollout status.validation", kind: RuntimeRolloutKind, keys: ["validation"], want: "validation-gate" },
  ])("$room belongs to $want, as in the rooms table of style.md §B.4", ({ kind, keys, want }) => {
    for (const k of keys) expect(writersOf(roomWrites, `${kindKey(kind)} ${k}`)).toEqual([want])
  })
})
