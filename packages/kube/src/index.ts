/**
 * @aicr/kube — the only importer of `@kubernetes/client-node`: the `Kube` service (get/list/watch/create/replace/
 * apply/applyStatus/patch/delete), `KubeError`, informer caches, leader election and the event recorder.
 */
export * from "./errors"
export * from "./types"
export { Kube, type KubeShape } from "./kube"
export { conflictingManagers, type Seen, writeAsDecided } from "./guarded"
export { collectionPath, objectPath, withQuery, type Query } from "./paths"
export { RoomViolation, buildStatusApply, statusUnchanged, onlyMessagesChange, makeApplyStatus, jsonEqual } from "./status"
export { makeKube, makeKubeFromTransport, layer, layerFromKubeconfig, layerInCluster, resolveBackend, type KubeLiveOptions } from "./live"
export { makeTransport, type Open, type RawResponse, type RequestSpec, type Transport, type TransportOptions } from "./transport"
export { loadConnection, type Connection, type ConfigSource } from "./kubeconfig"
export { makeInformer, stripManagedFields, type Informer, type InformerEvent, type InformerOptions } from "./informer"
export { metadataOnly } from "./projection"
export { runLeaderElection, microTime, type LeaderElectionOptions, type LeaderElector } from "./leader"
export { EventRecorder, eventRecorderLayer, makeEventRecorder, type EventRecorderOptions, type EventRecorderShape, type EventSpec } from "./events"
