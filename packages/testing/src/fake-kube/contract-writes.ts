/**
 * What a controller wrote on FakeKube against what its contract says it writes (`packages/contracts`, from which the
 * chart's RBAC is generated): a status write only into a kind of `writes`; a write of the object itself only to a kind
 * of `creates` (owned whole), or to its owned metadata (the labels and finalizers of a `writes` entry, and nothing
 * else of the object); Events (every process's need). A component test that runs a controller's passes proves there is
 * no difference: the contract says exactly what the controller writes.
 */
import { kindKey } from "@aicr/api"
import type { Contract } from "@aicr/contracts"
import { Effect } from "effect"
import type { FakeKube, RecordedWrite } from "./fake-kube"

interface JsonOp {
  readonly op: string
  readonly path: string
}

/** Why a write of an object's own metadata goes beyond the labels and finalizers the entry owns, or undefined. */
const metadataOverreach = (w: RecordedWrite, labels: ReadonlyArray<string>, finalizers: ReadonlyArray<string>): string | undefined => {
  if (w.verb === "apply") {
    const body = w.body as { readonly metadata?: { readonly labels?: Record<string, string>; readonly finalizers?: ReadonlyArray<string> } }
    const extra = Object.keys(body as object).filter((k) => !["apiVersion", "kind", "metadata"].includes(k))
    if (extra.length > 0) return `applies ${extra.join(", ")}`
    const foreign = Object.keys(body.metadata?.labels ?? {}).filter((l) => !labels.includes(l))
    if (foreign.length > 0) return `applies labels ${foreign.join(", ")}`
    const fins = (body.metadata?.finalizers ?? []).filter((f) => !finalizers.includes(f))
    return fins.length > 0 ? `applies finalizers ${fins.join(", ")}` : undefined
  }
  if (w.verb === "patch" && Array.isArray(w.body)) {
    // A JSON patch: only its test operations may name other paths (the preconditions of the write).
    const ops = (w.body as ReadonlyArray<JsonOp>).filter((o) => o.op !== "test")
    const other = ops.filter((o) => !(finalizers.length > 0 && o.path.startsWith("/metadata/finalizers")))
    return other.length > 0 ? `patches ${other.map((o) => `${o.op} ${o.path}`).join(", ")}` : undefined
  }
  return `writes the object (${w.verb})`
}

/** Every write that the contract does not allow; empty when none. */
export const writesOutsideContract = (contract: Contract, writes: ReadonlyArray<RecordedWrite>): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const w of writes) {
    const where = `${w.verb} ${w.kind} ${w.key}${w.subresource ? `/${w.subresource}` : ""}`
    if (w.kind === "Event") continue
    const entry = contract.writes.find((e) => e.kind.kind === w.kind)
    if (w.subresource === "status") {
      if (entry === undefined) out.add(`${where}: the contract writes no status on ${w.kind}`)
      continue
    }
    if (contract.creates.some((c) => c.kind.kind === w.kind)) continue
    if (entry === undefined) {
      out.add(`${where}: the contract neither creates ${w.kind} nor writes its metadata`)
      continue
    }
    const why = metadataOverreach(w, entry.labels ?? [], entry.finalizers ?? [])
    const owned = [...(entry.labels ?? []), ...(entry.finalizers ?? [])]
    if (why !== undefined) out.add(`${where}: ${why}; of ${kindKey(entry.kind)} the contract owns ${owned.length > 0 ? owned.join(", ") : "no metadata"}`)
  }
  return [...out]
}

/** The writes `fake` records while an effect runs through `during` (a controller's pass), apart from the test's own. */
export const writesDuring = (fake: FakeKube) => {
  const mine: RecordedWrite[] = []
  return {
    writes: (): ReadonlyArray<RecordedWrite> => mine,
    during: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.suspend(() => {
        const from = fake.writes.length
        return effect.pipe(Effect.ensuring(Effect.sync(() => void mine.push(...fake.writes.slice(from)))))
      }),
  }
}
