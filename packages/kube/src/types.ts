/** The shapes the `Kube` service speaks: list/watch options, watch events, patches, apply and delete options. */
import type { KubeObject } from "@aicr/api"

export interface ListOptions {
  /** Namespace for a namespaced kind; omit to list across all namespaces. Ignored for cluster-scoped kinds. */
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
}

/** A list's options: its scope, and what to keep of each item. */
export interface ListRequestOptions extends ListOptions {
  /**
   * Applied to every item as it is read, before the next is: a list's items page by page, a watch's objects as each
   * line is decoded (before it waits for its turn). With an informer's projection here, a list of 5,000 Nodes holds
   * one page of whole objects at a time, and a burst of watch events queues projections, never whole objects.
   */
  readonly transform?: ((obj: KubeObject) => KubeObject) | undefined
}

export interface KubeList<T> {
  readonly items: ReadonlyArray<T>
  /** The list's `metadata.resourceVersion`: where a watch continues from. */
  readonly resourceVersion: string
}

export interface WatchOptions extends ListRequestOptions {
  /** Start after this resourceVersion (normally the one a list returned). */
  readonly resourceVersion: string
  /** Ask for BOOKMARK events (default true): they advance the resourceVersion and prove the stream is alive. */
  readonly allowBookmarks?: boolean | undefined
  /** Server-side timeout; the stream then ends cleanly and the caller re-watches from the last resourceVersion. */
  readonly timeoutSeconds?: number | undefined
}

export type WatchEvent<T = KubeObject> =
  { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: T } | { readonly type: "BOOKMARK"; readonly resourceVersion: string }

export interface JsonPatchOp {
  readonly op: "add" | "remove" | "replace" | "move" | "copy" | "test"
  readonly path: string
  readonly value?: unknown
  readonly from?: string
}

/** A JSON merge patch (RFC 7386) or a JSON patch (RFC 6902). Merge patches are last-writer-wins. */
export type Patch = { readonly type: "merge"; readonly body: unknown } | { readonly type: "json"; readonly ops: ReadonlyArray<JsonPatchOp> }

export interface WriteOptions {
  /** Recorded as the manager of the fields this write changes. */
  readonly fieldManager?: string | undefined
  readonly subresource?: "status" | undefined
  readonly dryRun?: boolean | undefined
}

export interface ApplyOptions {
  readonly fieldManager: string
  /** Take fields owned by other managers. Default false: our rooms never overlap, so a conflict is a bug. */
  readonly force?: boolean | undefined
  readonly subresource?: "status" | undefined
  readonly dryRun?: boolean | undefined
}

export interface DeleteOptions {
  /** Delete only if the live object still has this uid / resourceVersion (otherwise 409 Conflict). */
  readonly preconditions?: { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined } | undefined
  readonly propagationPolicy?: "Foreground" | "Background" | "Orphan" | undefined
  readonly gracePeriodSeconds?: number | undefined
}

/** A `metav1.Condition` as written on the wire. `packages/conditions` builds these; kube only carries them. */
export interface WireCondition {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly observedGeneration?: number | undefined
  readonly lastTransitionTime: string
  readonly reason: string
  readonly message: string
}

/** What a controller writes into its room: every owned condition plus its own status keys. */
export interface StatusWrite {
  readonly conditions: ReadonlyArray<WireCondition>
  readonly [statusKey: string]: unknown
}

export interface ApplyStatusResult<T> {
  /** False when the object already carried exactly these values and no request was made. */
  readonly applied: boolean
  /** The object as the API server returned it, or the input object when nothing was applied. */
  readonly object: T
}
