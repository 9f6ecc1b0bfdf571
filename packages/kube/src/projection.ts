/**
 * Projections for informer caches (`InformerOptions.transform`): a cache keeps only what its controller reads, as
 * controller-runtime's cache transforms do. Every projection keeps `metadata.resourceVersion` (the informer compares
 * it) and `uid` (preconditions and expectations use it).
 */
import type { KubeObject, ObjectMeta } from "@aicr/api"
import { stripManagedFields } from "./informer"

/**
 * Only the object's identity and metadata: kind, name, namespace, uid, resourceVersion, generation, labels,
 * annotations, owner references, finalizers and timestamps; no spec, status or data. For objects whose existence (or
 * version) is all a controller needs from the cache: a CRD, an AppProject, ConfigMaps read once per version.
 */
export const metadataOnly = <T extends KubeObject>(obj: T): T => {
  const m = stripManagedFields(obj).metadata as ObjectMeta & { readonly ownerReferences?: unknown }
  const keep = {
    name: m.name,
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(m.generation !== undefined ? { generation: m.generation } : {}),
    ...(m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
    ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(m.labels !== undefined ? { labels: m.labels } : {}),
    ...(m.annotations !== undefined ? { annotations: m.annotations } : {}),
    ...(m.ownerReferences !== undefined ? { ownerReferences: m.ownerReferences } : {}),
    ...(m.finalizers !== undefined ? { finalizers: m.finalizers } : {}),
  }
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: keep } as T
}
