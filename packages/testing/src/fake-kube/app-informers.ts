/**
 * What informers an app makes: its `setup` run on FakeKube (no leader election, no servers), each informer's kind and
 * scope, and how they differ from its contract's watches. Each app's `test/app.component.test.ts` proves there is no
 * difference: the contract says exactly what the controller watches.
 */
import type { Contract } from "@aicr/contracts"
import { eventRecorderLayer } from "@aicr/kube"
import { type AppSpec, makeMetrics, parseConfig } from "@aicr/runtime"
import { Effect, Layer, type Scope } from "effect"
import { type FakeKube, makeFakeKube } from "./fake-kube"

export interface AppInformer {
  readonly kind: string
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
}

/** The informers `spec.setup` makes with these app flags, on `fake` (a fresh FakeKube by default). */
export const informersOfApp = <E>(
  spec: AppSpec<E>,
  argv: ReadonlyArray<string>,
  fake: FakeKube = makeFakeKube(),
): Effect.Effect<ReadonlyArray<AppInformer>, E, Scope.Scope> =>
  Effect.gen(function* () {
    const config = parseConfig(spec.name, ["--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", ...argv], {})
    const events = eventRecorderLayer({ controller: `operator.aicr.run/${spec.name}`, instance: "test" }).pipe(Layer.provide(fake.layer))
    const controllers = yield* spec
      .setup({ config, fieldManager: `aicr-${spec.name}`, metrics: makeMetrics() })
      .pipe(Effect.provide(Layer.mergeAll(fake.layer, events)))
    return controllers.flatMap((c) => c.sources.map((s) => ({ kind: s.informer.kind.kind, ...s.informer.scope })))
  })

/** Every difference between the informers and the contract's watches (kind and label selector); empty when none. */
export const contractMismatch = (contract: Contract, informers: ReadonlyArray<AppInformer>): ReadonlyArray<string> => {
  const out: string[] = []
  for (const w of contract.watches) {
    const mine = informers.filter((i) => i.kind === w.kind.kind)
    if (mine.length === 0) out.push(`the contract watches ${w.kind.kind} but no informer does`)
    for (const i of mine)
      if ((i.labelSelector ?? undefined) !== w.selector)
        out.push(`${w.kind.kind}: informer selects ${JSON.stringify(i.labelSelector)}, the contract ${JSON.stringify(w.selector)}`)
  }
  for (const i of informers)
    if (!contract.watches.some((w) => w.kind.kind === i.kind)) out.push(`an informer watches ${i.kind}, which the contract does not list`)
  return out
}
