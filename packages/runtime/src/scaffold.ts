/**
 * The scaffolding every controller shares, so an app keeps only its own logic:
 *
 * - `informersFor(contract, scopes)`: one informer per watch of the contract, with the contract's label selector and
 *   the namespace, field selector, projection and tolerated list failures the app gives per kind; and the work-queue
 *   sources mapping each watch's events to root keys by the contract's mapping. The informers are the contract's
 *   watches, no more and no fewer (each app's `test/app.component.test.ts` checks it).
 * - `rooted({ get, expectations, pass })` and `singleton(…)`: a reconcile's frame. The root comes from its cache
 *   (`fromCache`) or, where an ADR says why, from the API server; gone, there is nothing to do; with expectations a
 *   pass starts only when the caches show the controller's earlier writes. `singleton` acts on the ClusterRuntime
 *   `cluster` only (spec §3.2).
 * - `appSettings(parse)`: an app's settings from its flags (`RuntimeConfig.rest`), a bad flag failing the start.
 * - `lazy(load)`: a service built on first use (a heavy client loaded by the first pass that needs it), once.
 * - How a failed pass ends (transient, terminal, defect; one Warning Event per transition) is `failures.ts`.
 */
import { Core, keyOf, type KubeObject, LABEL_OUTCOME, LABEL_ROLLOUT, type ObjectKey, type ResourceKind, type RuntimeRollout, SINGLETON_NAME } from "@aicr/api"
import type { Contract, Watch } from "@aicr/contracts"
import { type Informer, type InformerEvent, type Kube, type KubeError, makeInformer, metadataOnly } from "@aicr/kube"
import { Effect, Option, type Scope } from "effect"
import { mapped, self, type Source } from "./controller"
import type { ExpectationsShape } from "./expectations"
import { Requeue } from "./requeue"

/** How an app scopes one watched kind (the label selector is the contract's). */
export interface WatchScope {
  readonly namespace?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly transform?: ((obj: KubeObject) => KubeObject) | undefined
  readonly tolerate?: ((error: KubeError) => boolean) | undefined
  /** After a tolerated list failure, what to wait for before listing again (see `InformerOptions.retryWhen`). */
  readonly retryWhen?: ((error: KubeError) => Effect.Effect<void>) | undefined
  /** Events that enqueue nothing (e.g. a Node update that changes nothing the controller reads). Default: none. */
  readonly ignore?: ((event: InformerEvent<KubeObject>) => boolean) | undefined
  /**
   * The CRD serving this kind, when it may not be installed yet (Argo CD's): `servedByCrd` with the contract's own
   * CRD informer (scoped by `crdScope`), which the contract must watch.
   */
  readonly servedBy?: string | undefined
}

export interface ContractInformers {
  /** Every informer with the watch it serves (a watch scoped to several namespaces has one per namespace). */
  readonly all: ReadonlyArray<{ readonly watch: Watch; readonly informer: Informer<KubeObject> }>
  /** The informers of one kind (several when the app scopes its watch to several namespaces or names). */
  readonly of: <T extends KubeObject>(kind: ResourceKind) => ReadonlyArray<Informer<T>>
  /** The only informer of one kind (throws when the contract watches it in several namespaces or not at all). */
  readonly one: <T extends KubeObject>(kind: ResourceKind) => Informer<T>
  /** The work-queue sources: each informer's events mapped to root keys by its watch's mapping. */
  readonly sources: ReadonlyArray<Source>
}

/**
 * The scope of a watch of the CRD `name` itself: by name, metadata only; CRDs the controller may not list leave the
 * cache empty. What a watch's `servedBy` waits on.
 */
export const crdScope = (name: string): WatchScope => ({ fieldSelector: `metadata.name=${name}`, transform: metadataOnly, tolerate: notServed })

/** A list refused because its kind is not served (its CRD missing) or not readable by the controller. */
const notServed = (e: KubeError) => e.reason._tag === "NotFound" || e.reason._tag === "Forbidden" || e.reason._tag === "Unauthorized"

/**
 * For the watch of a kind the CRD `name` serves (Argo CD's Applications), which may not be installed yet: a list
 * refused as not found, forbidden or unauthorized leaves the cache empty, and after `NotFound` the informer lists
 * again only once `crds()` (the informer of `crdScope(name)`) holds the CRD, looked at once a second in memory. A
 * controller waiting for Argo CD makes no request at idle. `informersFor` applies it to a watch scoped with `servedBy`.
 */
export const servedByCrd = (name: string, crds: () => Informer<KubeObject> | undefined): Pick<WatchScope, "tolerate" | "retryWhen"> => ({
  tolerate: notServed,
  retryWhen: (e) =>
    e.reason._tag === "NotFound"
      ? Effect.gen(function* () {
          for (let c = crds(); c === undefined || Option.isNone(c.get(name)); c = crds()) yield* Effect.sleep("1 second")
        })
      : Effect.void,
})

const sameKind = (a: ResourceKind, b: ResourceKind) => a.group === b.group && a.kind === b.kind

export const informersFor = (
  contract: Contract,
  scopes: (watch: Watch) => WatchScope | ReadonlyArray<WatchScope> = () => ({}),
): Effect.Effect<ContractInformers, never, Kube | Scope.Scope> =>
  Effect.gen(function* () {
    const all: Array<{ watch: Watch; informer: Informer<KubeObject>; ignore?: ((event: InformerEvent<KubeObject>) => boolean) | undefined }> = []
    const scoped = contract.watches.map((watch) => {
      const given = scopes(watch)
      return { watch, scopes: Array.isArray(given) ? (given as ReadonlyArray<WatchScope>) : [given as WatchScope] }
    })
    // A watch `servedBy` a CRD waits on this contract's CRD informer, made in the same loop: read when it waits.
    const crds = () => all.find((x) => sameKind(x.watch.kind, Core.CustomResourceDefinition))?.informer
    if (scoped.some((x) => x.scopes.some((s) => s.servedBy !== undefined)) && !scoped.some((x) => sameKind(x.watch.kind, Core.CustomResourceDefinition)))
      throw new Error(`${contract.controller}: a watch is servedBy a CRD, but the contract does not watch CustomResourceDefinitions`)
    for (const { watch, scopes: given } of scoped) {
      for (const s of given) {
        const served = s.servedBy !== undefined ? servedByCrd(s.servedBy, crds) : {}
        const informer = yield* makeInformer<KubeObject>({
          kind: watch.kind,
          namespace: s.namespace,
          labelSelector: watch.selector,
          fieldSelector: s.fieldSelector,
          transform: s.transform,
          tolerate: s.tolerate ?? served.tolerate,
          retryWhen: s.retryWhen ?? served.retryWhen,
        })
        all.push({ watch, informer, ignore: s.ignore })
      }
    }
    const of = <T extends KubeObject>(kind: ResourceKind) => all.filter((x) => sameKind(x.watch.kind, kind)).map((x) => x.informer as unknown as Informer<T>)
    const one = <T extends KubeObject>(kind: ResourceKind) => {
      const found = of<T>(kind)
      if (found.length !== 1) throw new Error(`${contract.controller}: ${found.length} informers of ${kind.kind}, expected one`)
      return found[0]!
    }
    const root = () => one<RuntimeRollout>(contract.reconciles)
    const sources = all.map(({ watch, informer, ignore }): Source => {
      switch (watch.mapping) {
        case "self":
          return ignore === undefined ? self(informer) : mapped(informer, (o, e) => (ignore(e) ? [] : [keyOf(o)]))
        case "singleton":
          return mapped(informer, (_o, e) => (ignore?.(e) === true ? [] : [SINGLETON_NAME]))
        case "rollout-label":
          return mapped(informer, (o, e) => {
            const name = o.metadata.labels?.[LABEL_ROLLOUT]
            return name === undefined || ignore?.(e) === true ? [] : [name]
          })
        case "rollouts-of-runtime":
          return mapped(informer, (o, e) =>
            ignore?.(e) === true
              ? []
              : root()
                  .list()
                  .filter((r) => o.metadata.uid !== undefined && r.spec.runtimeUID === o.metadata.uid)
                  .map(keyOf),
          )
        case "open-rollouts":
          return mapped(informer, (_o, e) =>
            ignore?.(e) === true
              ? []
              : root()
                  .list()
                  .filter((r) => r.metadata.labels?.[LABEL_OUTCOME] === undefined)
                  .map(keyOf),
          )
      }
    })
    return { all, of, one, sources }
  })

export interface RootedOptions<T extends KubeObject, E, R, E2, R2> {
  /** Reads the root object: from its informer cache (`fromCache`), or from the API server where an ADR says why. */
  readonly get: (key: ObjectKey) => Effect.Effect<Option.Option<T>, E2, R2>
  /** When given, a pass starts only once the caches show this process's earlier writes. */
  readonly expectations?: ExpectationsShape | undefined
  /** How soon to look again while expectations are pending (the event that meets them comes first). Default 5 s. */
  readonly recheck?: Requeue | undefined
  readonly pass: (root: T) => Effect.Effect<Requeue, E, R>
}

/** The root object from its informer cache. */
export const fromCache =
  <T extends KubeObject>(cache: Informer<T>) =>
  (key: ObjectKey): Effect.Effect<Option.Option<T>> =>
    Effect.sync(() => cache.get(key))

/** A reconcile's frame: get the root (gone: nothing left to own), wait for pending expectations, run the pass. */
export const rooted =
  <T extends KubeObject, E, R, E2 = never, R2 = never>(options: RootedOptions<T, E, R, E2, R2>) =>
  (key: ObjectKey): Effect.Effect<Requeue, E | E2, R | R2> =>
    Effect.gen(function* () {
      const found = yield* options.get(key)
      if (Option.isNone(found)) return Requeue.onChange // gone: nothing left to own
      if (options.expectations !== undefined) {
        const pending = yield* options.expectations.pending
        if (pending.length > 0) {
          yield* Effect.logDebug("Waiting for the caches to show this controller's writes", { pending })
          return options.recheck ?? Requeue.after("5 seconds")
        }
      }
      return yield* options.pass(found.value)
    })

/** `rooted` for a controller rooted at the ClusterRuntime `cluster`: any other name is never acted on (spec §3.2). */
export const singleton = <T extends KubeObject, E, R, E2 = never, R2 = never>(options: RootedOptions<T, E, R, E2, R2>) => {
  const inner = rooted(options)
  return (key: ObjectKey): Effect.Effect<Requeue, E | E2, R | R2> => (key !== SINGLETON_NAME ? Effect.succeed(Requeue.never) : inner(key))
}

/** An app's settings from its own flags; a bad flag fails the start with its message. */
export const appSettings = <S>(parse: () => S): Effect.Effect<S, Error> =>
  Effect.try({ try: parse, catch: (e) => (e instanceof Error ? e : new Error(String(e))) })

/** A service built on first use, once (a failed build is retried by the next use). */
export const lazy = <A, E, R>(load: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  let value: Option.Option<A> = Option.none()
  return Effect.suspend(() =>
    Option.isSome(value) ? Effect.succeed(value.value) : load.pipe(Effect.tap((a) => Effect.sync(() => void (value = Option.some(a))))),
  )
}

/**
 * A client opened by its first use and closed with the scope: `open` is typically a dynamic `import()` of the module
 * that holds it, so an idle process never loads that module (the split bundle keeps it in a chunk of its own). A
 * failed open is retried by the next use.
 */
export const openOnFirstUse = <T extends { readonly close: () => Promise<void> }>(
  open: () => Promise<T>,
): Effect.Effect<Effect.Effect<T>, never, Scope.Scope> =>
  Effect.gen(function* () {
    let opened: Promise<T> | undefined
    const get = () =>
      (opened ??= open().catch((e: unknown) => {
        opened = undefined
        throw e
      }))
    yield* Effect.addFinalizer(() => (opened === undefined ? Effect.void : Effect.promise(() => opened!.then((o) => o.close()).catch(() => undefined))))
    return Effect.promise(get)
  })
