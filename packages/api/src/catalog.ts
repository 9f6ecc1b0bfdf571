/**
 * Lookups over both kinds: which condition types and which status rooms each kind has. The contract tests in
 * packages/contracts check these against the controllers' declared writes.
 */
import type { AnyConditionDef } from "@aicr/conditions"
import { ClusterRuntimeStatus } from "./clusterruntime"
import { ClusterRuntimeConditions } from "./clusterruntime-conditions"
import { ClusterRuntimeKind, kindKey, RuntimeRolloutKind, type ResourceKind } from "./resource"
import { RuntimeRolloutStatus } from "./runtimerollout"
import { RuntimeRolloutConditions } from "./runtimerollout-conditions"

const byKind = new Map<string, { readonly conditions: ReadonlyArray<AnyConditionDef>; readonly rooms: ReadonlyArray<string> }>([
  [kindKey(ClusterRuntimeKind), { conditions: ClusterRuntimeConditions, rooms: Object.keys(ClusterRuntimeStatus.fields).filter((k) => k !== "conditions") }],
  [kindKey(RuntimeRolloutKind), { conditions: RuntimeRolloutConditions, rooms: Object.keys(RuntimeRolloutStatus.fields).filter((k) => k !== "conditions") }],
])

/** Condition definitions of a kind; empty for kinds without our conditions. */
export const conditionsOf = (kind: ResourceKind): ReadonlyArray<AnyConditionDef> => byKind.get(kindKey(kind))?.conditions ?? []

/** Top-level `status` keys (rooms) of a kind, `conditions` excluded. */
export const statusRoomsOf = (kind: ResourceKind): ReadonlyArray<string> => byKind.get(kindKey(kind))?.rooms ?? []

/** Kinds whose status this API defines. */
export const OUR_KINDS: ReadonlyArray<ResourceKind> = [ClusterRuntimeKind, RuntimeRolloutKind]
