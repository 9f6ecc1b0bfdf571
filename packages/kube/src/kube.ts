/**
 * The `Kube` service: typed access to the API server over `ResourceKind`s. The live layer (`live.ts`) talks HTTP;
 * `@aicr/testing`'s FakeKube implements the same shape in memory. Informers, leader election and the event
 * recorder are built on this interface only, so they run unchanged against either.
 */
import type { KubeObject, ObjectKey, ResourceKind, Room } from "@aicr/api"
import { Context, type Effect, type Option } from "effect"
import type { KubeError } from "./errors"
import type {
  ApplyOptions,
  ApplyStatusResult,
  DeleteOptions,
  KubeList,
  ListRequestOptions,
  Patch,
  StatusWrite,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from "./types"

export interface KubeShape {
  /** GET one object; `Option.none()` when it does not exist (404 is not an error here). */
  readonly get: <T extends KubeObject = KubeObject>(kind: ResourceKind, key: ObjectKey) => Effect.Effect<Option.Option<T>, KubeError>
  /** LIST with label/field selectors; items carry `apiVersion` and `kind` even for core kinds. */
  readonly list: <T extends KubeObject = KubeObject>(kind: ResourceKind, options?: ListRequestOptions) => Effect.Effect<KubeList<T>, KubeError>
  /**
   * WATCH from `options.resourceVersion`, calling `onEvent` for each event in order. Succeeds when the server ends the
   * stream cleanly (re-watch from the last resourceVersion); fails with `Gone` when that resourceVersion is too old
   * (relist), or with a transport reason. Interrupting the effect closes the stream.
   */
  readonly watch: <T extends KubeObject = KubeObject>(
    kind: ResourceKind,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => Effect.Effect<void>,
  ) => Effect.Effect<void, KubeError>
  /** POST. Fails with `AlreadyExists` if the name is taken. */
  readonly create: <T extends KubeObject>(kind: ResourceKind, obj: T, options?: WriteOptions) => Effect.Effect<T, KubeError>
  /** PUT the whole object; `metadata.resourceVersion` makes it optimistic (stale → `Conflict`). */
  readonly replace: <T extends KubeObject>(kind: ResourceKind, obj: T, options?: WriteOptions) => Effect.Effect<T, KubeError>
  /**
   * Server-side apply of `obj` (spec/metadata, or `status` with `subresource: "status"`) as `options.fieldManager`,
   * `force: false` unless asked. Another manager's field with a different value → `FieldManagerConflict`.
   */
  readonly apply: <T extends KubeObject = KubeObject>(kind: ResourceKind, obj: unknown, options: ApplyOptions) => Effect.Effect<T, KubeError>
  /**
   * Server-side apply of a room's status (design/style.md §B.4): the body holds exactly the room's conditions and status
   * keys, the field manager is the room's, force is off. Writing outside the room dies with `RoomViolation`; a write
   * that changes nothing is skipped (`applied: false`, no request).
   */
  readonly applyStatus: <T extends KubeObject>(room: Room, obj: T, status: StatusWrite) => Effect.Effect<ApplyStatusResult<T>, KubeError>
  /** PATCH with a JSON merge patch or a JSON patch. */
  readonly patch: <T extends KubeObject = KubeObject>(kind: ResourceKind, key: ObjectKey, patch: Patch, options?: WriteOptions) => Effect.Effect<T, KubeError>
  /** DELETE with optional preconditions and propagation policy. Fails with `NotFound` if already gone. */
  readonly delete: (kind: ResourceKind, key: ObjectKey, options?: DeleteOptions) => Effect.Effect<void, KubeError>
}

export class Kube extends Context.Service<Kube, KubeShape>()("@aicr/kube/Kube") {}
